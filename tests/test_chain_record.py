"""The chain's record (slurm/chain.jsonl) through its one parser: appended lines read incrementally, a torn last
line left for the next read, a replaced file read again; and every reader (allocation, TUI, hpc) sees the same."""
from __future__ import annotations

import json
import os

from nightshift.supervisor.run.allocation import chain_usage
from nightshift.supervisor.run.chain_record import ChainReader, append_record, read_chain, record_path
from nightshift.tui.slurm_view import chain_line


def test_a_reader_parses_what_was_appended_since_its_last_read(tmp_path):
    path = record_path(tmp_path)
    append_record(tmp_path, "submitted", job_id=7, by="nightshift submit")
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    reader = ChainReader(path)
    assert [r["what"] for r in reader.read()] == ["submitted"]
    # The line already read is not parsed again: damage it in place (same file, same size) and it still counts.
    text = path.read_bytes()
    path.write_bytes(text.replace(b'"submitted"', b'"SUBMITTED"'))
    assert [r["what"] for r in reader.read()] == ["submitted"]
    with open(path, "ab") as fh:  # a job writing its line right now: half of it is there
        fh.write(b'{"what": "started", "job_id": 7')
    assert len(reader.read()) == 1
    with open(path, "ab") as fh:
        fh.write(b', "node": "n1"}\nnot json\n[1, 2]\n')
    records = reader.read()
    assert [r["what"] for r in records] == ["submitted", "started"] and records[1]["node"] == "n1"


def test_a_replaced_or_shortened_record_is_read_again_from_its_start(tmp_path):
    append_record(tmp_path, "submitted", job_id=1)
    append_record(tmp_path, "submitted", job_id=2)
    reader = ChainReader(record_path(tmp_path))
    assert len(reader.read()) == 2
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(json.dumps({"what": "started", "job_id": 3}) + "\n")
    os.replace(replacement, record_path(tmp_path))
    assert [(r["what"], r["job_id"]) for r in reader.read()] == [("started", 3)]
    record_path(tmp_path).write_text("")
    assert reader.read() == []
    record_path(tmp_path).unlink()
    assert reader.read() == []


def test_the_allocation_and_the_tui_read_the_record_through_the_same_reader(tmp_path):
    assert read_chain(tmp_path) == [] and chain_line(read_chain(tmp_path)) is None  # never submitted
    append_record(tmp_path, "submitted", job_id=11, by="nightshift submit")
    append_record(tmp_path, "started", job_id=11, node="n1", start=1000.0, time_limit=3600, cpus=2)
    assert chain_usage(tmp_path, now=1000.0 + 1800) == (1.0, 2, 1000.0)
    assert chain_line(read_chain(tmp_path), now=1000.0 + 1800).startswith("chain: job 1 of the chain (11) on n1")
    append_record(tmp_path, "submitted", job_id=12, by="job 11")
    assert "successor 12 queued" in chain_line(read_chain(tmp_path), now=1000.0 + 1800)
    append_record(tmp_path, "stopping", by="nightshift stop")
    append_record(tmp_path, "cancelled", job_ids=[12], why="nightshift stop")
    line = chain_line(read_chain(tmp_path), now=1000.0 + 1800)
    assert "stopping (nightshift stop): no job continues it" in line and "successor" not in line
    append_record(tmp_path, "finished", job_id=11, outcome="done")
    assert chain_usage(tmp_path, now=1000.0 + 1800)[1] == 0  # its job is counted up to its end, and runs no more
    assert "finished the run" in chain_line(read_chain(tmp_path), now=1000.0 + 1800)
