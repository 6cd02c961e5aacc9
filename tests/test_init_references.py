"""`nightshift init --reference-dir` as a new user meets it: it reads the references with the oracle's readers and
writes comparisons that compare the right columns against the right x; bad input is one clear line each."""
from __future__ import annotations

import json
import sys

import pytest

from nightshift.supervisor.cli.init.goal_words import tolerance_from_goal
from nightshift.supervisor.config.schema import load_config
from tests.fixtures_core import nightshift, require_tool
from tests.fixtures_references import CANDIDATE_MAKER, make_reference_folder, reference_ws  # noqa: F401
from tests.test_bad_input import one_line_error

GOAL = "agree with CLASS to 0.1%"


@pytest.fixture
def ws(reference_ws):
    return reference_ws


def test_init_writes_one_comparison_per_data_set_with_its_x_and_named_columns(ws):
    out = nightshift("init", str(ws), "--goal", GOAL, "--reference-dir", "reference", "--candidate-dir", "build")
    assert out.returncode == 0, out.stderr
    assert "skip     reference/make_refs.py: a script" in out.stdout  # shown before writing
    oracle = load_config(ws).oracle
    found = {c.name: (c.reference, c.candidate, c.x, c.columns, c.rtol) for c in oracle.compare}
    assert found == {
        "cl_class": ("reference/cl_class.dat", "build/cl_class.dat", "l", ["TT", "EE", "TE"], 1e-3),
        "pk_camb": ("reference/pk_camb.dat", "build/pk_camb.dat", "k/h", ["P (h^-1 Mpc)^3"], 1e-3),
        "bao": ("reference/bao.csv", "build/bao.csv", "z", ["DM", "DH"], 1e-3),
        "growth": ("reference/growth.npz", "build/growth.npz", "a", ["D", "f"], 1e-3),
        "spectra-lensing": ("reference/spectra.h5:/lensing", "build/spectra.h5:/lensing", "ell", ["phiphi"], 1e-3),
    }
    toml = (ws / "nightshift.toml").read_text()
    assert "#   reference/make_refs.py: a script" in toml and "tolerance from the goal ('0.1%')" in toml
    assert not any("make_refs" in c.reference for c in oracle.compare)


def test_a_candidate_off_by_half_a_percent_in_one_column_fails_exactly_there(ws):
    assert nightshift("init", str(ws), "--goal", GOAL, "--reference-dir", "reference").returncode == 0
    make_reference_folder(ws, "data")  # what the stand-in solver "computed" (the references are hidden from it)
    (ws / "make_out.py").write_text(CANDIDATE_MAKER)
    toml = ws / "nightshift.toml"
    toml.write_text(toml.read_text().replace('\ncommand = ""', f'\ncommand = "{sys.executable} make_out.py 0.005"'))
    out = nightshift("compare", str(ws), "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    failing = [(e["name"], c["column"], c["failing"], c["x_worst"]) for e in report["comparisons"]
               for c in e["columns"] if not c["passed"]]
    assert failing == [("cl_class", "TT", 1, 100.0)]
    assert sum(e["passed"] for e in report["comparisons"]) == 4


def test_no_data_file_is_one_line_and_nothing_is_written(tmp_path):
    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    (ws / "reference" / "make_refs.py").write_text("print(1)\n")
    (ws / "reference" / "empty.dat").write_text("")
    (ws / "reference" / "blob.dat").write_bytes(b"\x00\x01\x02binary")
    line = one_line_error(nightshift("init", str(ws), "--goal", GOAL, "--reference-dir", "reference"),
                          "--reference-dir reference: no data file to compare")
    assert "empty file" in line and "binary" in line and "a script" in line
    assert not (ws / "nightshift.toml").exists() and not (ws / "CLAUDE.md").exists()


def test_empty_binary_and_ragged_header_files_are_named_and_the_rest_compared(ws):
    (ws / "reference" / "empty.dat").write_text("")
    (ws / "reference" / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (ws / "reference" / "short_header.dat").write_text("# l TT\n2 1.0 5.0\n3 2.0 6.0\n4 3.0 7.0\n")
    out = nightshift("init", str(ws), "--goal", "build a Boltzmann solver", "--reference-dir", "reference")
    assert out.returncode == 0, out.stderr
    assert "skip     reference/empty.dat: empty file" in out.stdout
    assert "skip     reference/blob.bin: binary file" in out.stdout
    assert "header names 2 columns (l, TT) but the rows have 3" in out.stdout
    assert "the goal states no tolerance" in out.stdout  # a goal with no number: the default, named
    short = next(c for c in load_config(ws).oracle.compare if c.name == "short_header")
    assert short.x == 0 and short.columns == [1, 2]  # by index until the header is fixed
    toml = (ws / "nightshift.toml").read_text()
    assert "rtol = 1e-3 is a default" in toml or "rtol = 0.001 is a default" in toml


def test_init_never_overwrites_an_existing_file(ws):
    (ws / "nightshift.toml").write_text("goal = 'mine'\n")
    one_line_error(nightshift("init", str(ws), "--goal", GOAL, "--reference-dir", "reference"),
                   "nightshift.toml already exists")
    assert (ws / "nightshift.toml").read_text() == "goal = 'mine'\n"


@pytest.mark.parametrize("goal, rtol, atol", [
    ("agree with CLASS to 0.1%", 1e-3, 0.0), ("outputs equal to 1e-6 relative", 1e-6, 0.0),
    ("within 10^-5", 1e-5, 0.0), ("1e-10 absolute and 1e-6 relative", 1e-6, 1e-10), ("0.5 percent", 5e-3, 0.0),
    ("a Boltzmann solver as good as CLASS v3.2", 1e-3, 0.0),
])
def test_the_tolerance_comes_from_the_goal(goal, rtol, atol):
    found = tolerance_from_goal(goal)
    assert (found.rtol, found.atol) == pytest.approx((rtol, atol))


def test_in_a_terminal_init_shows_what_it_found_and_asks_before_writing(ws):
    """A real terminal (a tmux pane on a private socket): the answer n writes nothing, the answer y writes."""
    import os
    import shlex
    import subprocess

    from tests.fixtures_core import wait_for

    require_tool("tmux")
    sock = f"ns-test-init-{os.getpid()}"
    init = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "nightshift.supervisor.cli.main", "init", str(ws), "--goal",
                                             GOAL, "--reference-dir", "reference"])
    # a private XDG_CONFIG_HOME: init's offer of a signing key (asked when there is none) makes nothing of the user's
    script = f"export XDG_CONFIG_HOME={shlex.quote(str(ws.parent / 'config'))}; {init}; echo FIRST=$?; {init}; " \
             "echo SECOND=$?; sleep 120"
    screen = lambda: subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-t", "init", "-S", "-200"],  # noqa
                                    capture_output=True, text=True).stdout
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-s", "init", "-x", "220", "-y", "60", script],
                   check=True)
    try:
        wait_for(lambda: "with these comparisons? [Y/n]" in screen(), timeout=60, what="the question")
        assert "compare  reference/cl_class.dat: x = l; columns TT, EE, TE" in screen()
        subprocess.run(["tmux", "-L", sock, "send-keys", "-t", "init", "n", "Enter"], check=True)
        wait_for(lambda: "FIRST=1" in screen(), timeout=60, what="the first init to end")
        assert "nothing written" in screen() and not (ws / "nightshift.toml").exists()
        wait_for(lambda: screen().count("with these comparisons? [Y/n]") == 2, timeout=60, what="the second question")
        subprocess.run(["tmux", "-L", sock, "send-keys", "-t", "init", "y", "Enter"], check=True)
        asked = wait_for(lambda: "SECOND=0" in screen() or "Make an ed25519 key for nightshift now? [Y/n]" in screen(),
                         timeout=60, what="the second init to end, or its offer of a key (no key here)")
        if "SECOND=0" not in screen():  # no key anywhere: the offer, answered no (its own test: test_init_signing_key)
            subprocess.run(["tmux", "-L", sock, "send-keys", "-t", "init", "n", "Enter"], check=True)
        assert asked
        wait_for(lambda: "SECOND=0" in screen(), timeout=60, what="the second init to end")
        assert not (ws.parent / "config" / "nightshift" / "attest_ed25519").exists()
        assert [c.name for c in load_config(ws).oracle.compare][:2] == ["bao", "cl_class"]
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)


def test_every_data_set_init_finds_is_read_the_same_by_the_oracle(tmp_path):
    """Containers with odd members (a number beside the columns, a 2-D matrix): what peek names, the reader reads."""
    import h5py
    import numpy as np

    from nightshift.supervisor.verify.oracle.field import open_field
    from nightshift.supervisor.verify.oracle.peek import peek_file
    from nightshift.supervisor.verify.oracle.readers import read_table

    with h5py.File(tmp_path / "odd.h5", "w") as handle:
        group = handle.create_group("background")
        group["z"], group["H"], group["omega_b"] = np.linspace(0, 1, 10), np.linspace(1, 2, 10), 0.022
        handle["matrix"] = np.ones((5, 3))
    np.savez(tmp_path / "odd.npz", x=np.arange(5.0), y=np.arange(5.0) ** 2, h=np.float64(0.7))
    for path in (tmp_path / "odd.h5", tmp_path / "odd.npz"):
        found = peek_file(path)
        assert found
        for data in found:
            if data.is_field:  # the 2-D matrix: a field, compared over all its elements
                with open_field(path, data.part, "reference") as field:
                    assert field.shape == data.shape == (5, 3)
                continue
            table = read_table(path, data.part)
            assert len(table.columns) == len(data.sample.columns) and table.names == data.sample.names


def test_a_fortran_d_exponent_is_named_as_not_a_number_not_a_crash(tmp_path):
    from nightshift.supervisor.verify.oracle.peek import peek_file
    from nightshift.supervisor.verify.oracle.table import OracleInputError
    path = tmp_path / "fortran.dat"
    path.write_text("# 1:x 2:y\n1.0 2.0\n2.0 1.0d-3\n")
    with pytest.raises(OracleInputError, match="'1.0d-3' is not a number"):
        peek_file(path)


@pytest.mark.parametrize("goal, general, own", [
    ("rho and energy to 1e-10 relative, momx to 1e-6 relative", (1e-10, 0.0),
     {"rho": (1e-10, 0.0), "energy": (1e-10, 0.0), "momx": (1e-6, 0.0)}),
    ("everything to 0.1%; rho to 1e-10 relative, 1e-14 absolute", (1e-3, 0.0), {"rho": (1e-10, 1e-14)}),
    ("rho within 1e-8, the rest to 0.1%", (1e-3, 0.0), {"rho": (1e-8, 0.0)}),
    ("rho: 1e-8 relative; momx: 1e-6 relative; the rest to 0.1%", (1e-3, 0.0),
     {"rho": (1e-8, 0.0), "momx": (1e-6, 0.0)}),
    ("1e-6 relative, 1e-12 absolute; rho, momx and energy to 1e-9 relative", (1e-6, 1e-12),
     {"rho": (1e-9, 1e-12), "momx": (1e-9, 1e-12), "energy": (1e-9, 1e-12)}),  # the absolute floor is the goal's
    ("to 1e-6 relative everywhere, and to 1e-8 relative for rho", (1e-6, 0.0), {}),  # a name after its words: not read
    ("T to 1e-2 and the rest to 1e-6 relative", (1e-6, 0.0), {}),  # one letter: an ordinary word, never a field's
    ("the fields agree to 1e-10 relative, 1e-14 absolute", (1e-10, 1e-14), {}),
])
def test_a_field_named_in_the_goal_takes_its_own_tolerance(goal, general, own):
    from nightshift.supervisor.cli.init.goal_words import goal_tolerances

    found, its = goal_tolerances(goal, {"rho", "momx", "energy", "T", "gamma"})
    assert (found.rtol, found.atol) == pytest.approx(general)
    assert {name: (t.rtol, t.atol) for name, t in its.items()} == pytest.approx(own)
