"""`nightshift report`: the morning report of a run, one self-contained HTML file and a summary, from the run
directory alone (plus the workspace's lab notes and git history, read as a stranger's input).

    verb.py      the verb: gather, render, write, open
    scan.py      one pass over events.jsonl for what the report needs
    data.py      what the report shows, gathered
    human.py     what needed a person (rows in person.py's words), the budget lines
    person.py    each row in words, with what to do
    timeline.py  the accuracy timeline as an inline PNG
    lanes.py     a fleet's lanes
    attest.py    the run's attestations
    html.py      the page

May import: errors, gitguard, config, run, shift, fleet, cli.report, cli.watch, cli.output_file.
"""
