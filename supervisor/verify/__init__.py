"""The verdict: the check pipeline run at every stop (reference integrity, the oracle, the test ratchet, the
plan, the lab notes, then the judge), each check's findings measured. Reads the workspace and the run; never
starts an agent.

May import: errors, gitguard, gitops, commit_refusals, candidate_index, resources, pricing, config, run, sandbox.
"""
