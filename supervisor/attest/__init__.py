"""A verified result anyone can check: an in-toto Statement v1 about one verdict (subjects: the verified commit and
each candidate output by sha256; predicate: nightshift's own, versioned, its JSON schema in predicate.schema.json),
in a DSSE envelope signed with the user's SSH ed25519 key (or unsigned, said so), written beside the run and kept
as a git note on the commit; and the check of such an envelope, with or without running the oracle again.

    digests.py      streaming sha256 of files that never follows a link (the workspace is a stranger's input)
    facts.py        what the run directory says about one verdict: comparisons, tests, plan, judge, costs
    config_view.py  the run's frozen config.toml read as plain TOML (no pydantic, no numpy: a short command)
    environment.py  where the verdict was reached: versions, OS, CPU, the Slurm job, the container image
    statement.py    the Statement and its predicate, validated against the published schema
    keys.py         which key signs: [attest] key, nightshift's own key, ~/.ssh/id_ed25519, ssh-agent
    envelope.py     DSSE signing and verifying (securesystemslib, the reference implementation)
    gitnotes.py     the few git calls of this room (notes, the tree of a commit), none running the repository's code
    write.py        `nightshift attest` and the hook at verified done: build, sign, write the file and the note
    check.py        `nightshift verify-result`: signature and every digest, one line per mismatch
    findings.py     those lines (ok, MISMATCH, MISSING by name for --allow-missing), references found by digest
    rerun.py        `verify-result --rerun`: the commit in a fresh tree, the oracle and comparisons run again

May import: errors, gitops, gitguard, config, run, sandbox, verify.
"""
