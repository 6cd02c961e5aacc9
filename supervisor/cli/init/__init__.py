"""`nightshift init`: make a folder a workspace, and what it finds in the references.

    workspace.py   the files: CLAUDE.md, CHANGELOG.md, nightshift.toml, .gitignore, the first commit's git state
    references.py  what `--reference-dir` finds (tables, fields, pointers) and the [oracle] section written from it
    goal_words.py  the tolerances the goal's words state: of everything, and of a field it names
    holdout.py     which data sets become the held-out exam (`--holdout`), moved to nightshift's private store

    signing_key.py the offer of a signing key when none is there (attestations would be unsigned)
    verb.py        the verb's face: the questions (or --yes), the survey and writing, what was done

May import: errors, gitguard, gitops, resources, config, run, verify, agents, attest, cli.init, cli.progress.
"""
