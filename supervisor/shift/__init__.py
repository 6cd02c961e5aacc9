"""The shift: the state machine driven by the event log (deciding), the agent's session (launching, waiting
for a stop, delivering a push-back), the run's ledger (lock, log, heartbeat, inbox), turns and prompts, the
Stop hook and its channel, and creating and starting a run; at a verified done, the run's attestation. The agent's boundary lives here too.

May import: errors, gitguard, gitops, resources, pricing, config, run, verify, attest, agents, backends, sandbox.
"""
