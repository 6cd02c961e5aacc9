"""A verified result anyone can check: an in-toto Statement v1 about one verdict (subjects: the verified commit and
each candidate output by sha256; predicate: nightshift's own, versioned, its JSON schema in predicate.schema.json),
in a DSSE envelope signed with the user's SSH ed25519 key (or unsigned, said so), written beside the run and kept
as a git note on the commit with the standard statements beside it; and the check of such an envelope, with or
without running the oracle again.

    digests.py      streaming sha256 of files that never follows a link (the workspace is a stranger's input)
    facts.py        what the run directory says about one verdict: comparisons, tests, plan, judge, costs
    config_view.py  the run's frozen config.toml read as plain TOML (no pydantic, no numpy: a short command)
    environment.py  where the verdict was reached: versions, OS, CPU, the Slurm job, the container image
    statement.py    the Statement and its predicate, validated against the published schema
    keys.py         which key signs: [attest] key, nightshift's own key, ~/.ssh/id_ed25519, ssh-agent
    envelope.py     DSSE signing and verifying (securesystemslib, the reference implementation)
    gitnotes.py     the few git calls of this room (notes, the tree of a commit), none running the repository's code
    write.py        `nightshift attest` and the hook at verified done: build, sign, write the file and the note
    provenance.py   nightshift's source by digest, the oracle command's interpreter and packages, the repository URI
    standard.py     the in-toto test-result and SLSA VSA statements beside ours, and their check
    bundle.py       what verify-result is given, as a bundle: the statement chosen by subject and verdict
    check.py        `nightshift verify-result`: signature, subjects, files, then every claim, one line per mismatch
    claims_commit.py  the claims held to the commit (nightshift.toml, Definition of done, the verdict's message)
    claims_log.py   the claims held to the run's event log, where it is here
    stated.py       nightshift's version against this install; the claims nothing checked, listed as the signer's
    findings.py     those lines (ok, MISMATCH, MISSING by name for --allow-missing, elsewhere, stated, skipped)
    rerun.py        `verify-result --rerun`: the commit in a fresh tree, the oracle and comparisons run again
    rerun_tests.py  the same for the ratchet's tests, by id

May import: errors, gitops, gitguard, config, run, sandbox, verify, version.
"""
