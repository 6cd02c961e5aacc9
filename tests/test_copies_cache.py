"""The dataset scan's caches (stash_data.py) are kept while a file stays the same, and a file that changed is read
again: rewritten with other values and its mtime set back (which its writer can do), it is not the file hashed
before, since its ctime (which no process can set back) moved."""
from __future__ import annotations

import os

import numpy as np

from nightshift.supervisor.verify.oracle.stash_data import dataset_copies

FIELD = np.sin(np.linspace(0, 7, 48 * 32)).reshape(48, 32) + 2.0


def test_a_container_rewritten_with_its_mtime_set_back_is_hashed_again(tmp_path):
    ref = tmp_path / "ref.npy"
    np.save(ref, FIELD)
    references = [("reference/ref.npy", ref, None, False, None)]
    kept = tmp_path / "cache" / "init.npy"
    kept.parent.mkdir()
    np.save(kept, FIELD + 1.0)  # an input of the same shape: no copy
    assert dataset_copies(tmp_path, ["cache/init.npy"], references) == ([], [])
    before = kept.stat()
    with open(kept, "r+b") as handle:  # the same size, in place: the same inode, then the mtime set back
        handle.seek(before.st_size - FIELD.nbytes)
        handle.write(FIELD.tobytes())
    os.utime(kept, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert kept.stat().st_mtime_ns == before.st_mtime_ns and kept.stat().st_size == before.st_size
    findings, _ = dataset_copies(tmp_path, ["cache/init.npy"], references)
    assert len(findings) == 1 and findings[0].startswith("cache/init.npy holds the values of reference/ref.npy"), \
        findings


def test_a_table_reference_is_parsed_once_while_it_stays_the_same(tmp_path, monkeypatch):
    from nightshift.supervisor.verify.oracle import stash_data

    ref = tmp_path / "ref.dat"
    np.savetxt(ref, np.column_stack([np.arange(300.0), np.sin(np.arange(300.0)) + 2.0]), fmt="%.17g",
               header="x y")
    np.save(tmp_path / "profile.npy", np.cos(np.arange(300.0)))  # a 1-D input: the table's columns are compared
    parsed = []
    real = stash_data.read_table
    monkeypatch.setattr(stash_data, "read_table", lambda *a: parsed.append(a) or real(*a))
    references = [("reference/ref.dat", ref, None, False, None)]
    for _ in range(3):  # three verdicts
        assert dataset_copies(tmp_path, ["profile.npy"], references) == ([], [])
    assert len(parsed) == 1, parsed
    np.save(tmp_path / "profile.npy", np.sin(np.arange(300.0)) + 2.0)  # now a copy of its column: still found
    findings, _ = dataset_copies(tmp_path, ["profile.npy"], references)
    assert findings and findings[0].startswith("profile.npy holds the values of reference/ref.dat (column"), findings


def test_a_column_of_a_table_without_a_header_is_compared_too(tmp_path):
    ref = tmp_path / "ref.dat"  # no header: its columns have no names
    np.savetxt(ref, np.column_stack([np.arange(300.0), np.sin(np.arange(300.0)) + 2.0]), fmt="%.17g")
    np.save(tmp_path / "profile.npy", np.sin(np.arange(300.0)) + 2.0)
    findings, _ = dataset_copies(tmp_path, ["profile.npy"], [("reference/ref.dat", ref, None, False, None)])
    assert findings and findings[0].startswith("profile.npy holds the values of reference/ref.dat (column 1)"), \
        findings
