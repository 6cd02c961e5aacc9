"""Issue 35, "a zero is no failure": a field zero by symmetry on two grid rows (HDF5 with coordinates, .npy,
NetCDF-4, and a text table of one of its columns), from `nightshift init` with a goal that states only a relative
tolerance.

init derives an absolute floor for each field and column that covers only the values zero at float64's precision
(the two rows) and says so; an honest solver whose round-off differs on the zero rows passes (and would not with rtol alone); a wrong solver fails, and its line quotes
|cand - ref|, |ref| and atol at the worst point beside the relative error, located where the physics is wrong (the
preflight's gap too); a solver that zeroes every small value does not hide under the floor; a NaN or inf of the
candidate is said as such, counted, never as an infinite error.
"""
from __future__ import annotations

import json
import sys
import tomllib

import numpy as np
import pytest

from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.verify.oracle import run_oracle
from nightshift.supervisor.verify.oracle.report import fmt, fmt_ratio
from tests.fixtures_core import nightshift, require_tool
from tests.fixtures_symmetry import (SOLVER, WRONG, X, Y, ZEROED, ZERO_ROWS, backend_field, reference_field,
                                     write_all)

GOAL = "agree with the reference code to 1e-6 relative"
NAMES = {"flow:u": "flow.h5", "flow'": "flow.nc", "u": "u.npy", "profile": "profile.dat"}


@pytest.fixture
def ws(tmp_path):
    require_tool("git")
    root = tmp_path / "ws"
    write_all(root / "reference", reference_field())
    out = nightshift("init", str(root), "--goal", GOAL, "--reference-dir", "reference", "--agent", "demo")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    (root / "init.out").write_text(out.stdout)
    return root


def solve(root, source: str) -> None:
    (root / "solver.py").write_text(source)
    toml = root / "nightshift.toml"
    toml.write_text(toml.read_text().replace('\ncommand = ""', f'\ncommand = "{sys.executable} solver.py"', 1))


def atols(root) -> dict[str, float]:
    """Each comparison's atol as the oracle reads it (per_field and per_column folded in)."""
    found = {}
    for comp in load_config(root).oracle.compare:
        for key, over in comp.per_column.items():
            found[f"{comp.name} / {key}"] = over.atol
        found[comp.name] = comp.atol
    return found


def test_init_derives_an_absolute_floor_only_for_the_rows_zero_by_symmetry_and_says_what_it_covers(ws):
    """The floor covers the two rows that are round-off (|u| ~ 1e-16 between rows of 0.38): 64 ulps of the largest
    value beside them (above 4x the round-off they show), so every other value, 0.19 and up, is compared relatively
    (a 1% error fails there)."""
    u = reference_field()
    eps = float(np.finfo(np.float64).eps)
    beside = max(np.abs(u[[r - 1, r + 1]]).max() for r in ZERO_ROWS)  # the rows either side of a zero row
    beside_column = max(np.abs(u[[r - 1, r + 1], 0]).max() for r in ZERO_ROWS)
    field_atol, column_atol = float(f"{64 * eps * beside:.3g}"), float(f"{64 * eps * beside_column:.3g}")
    got = atols(ws)
    names = sorted(c.name for c in load_config(ws).oracle.compare)
    fields = [n for n in names if n != "profile"]
    assert len(fields) == 3 and all(got[n] == field_atol for n in fields), got
    assert got["profile / u"] == column_atol and got["profile"] == 0  # the x column is the grid: no tolerance
    nonzero = np.delete(np.abs(u), ZERO_ROWS, axis=0)
    assert field_atol < 1e-13 * nonzero.min()  # far below every value that is not round-off
    text = (ws / "nightshift.toml").read_text()
    assert (f"derived: {2 * len(Y)} of {u.size} values zero at float64's precision, relative elsewhere (round-off: "
            f"|v| <= 4096 eps x the largest |v| beside it; atol = 64 eps x the largest |v| beside them, "
            f"{beside:.3g})") in text, text
    assert f"derived: 2 of {len(X)} values zero at float64's precision" in text, text
    said = (ws / "init.out").read_text()
    assert "atol derived where the goal states none: only values zero at the data's precision (round-off)" in said
    assert (f"reference/u.npy: atol = {field_atol:g} ({2 * len(Y)} of {u.size} values zero at float64's precision, "
            "relative elsewhere)") in said, said
    assert f"reference/profile.dat column u: atol = {column_atol:g}" in said, said
    assert "changes sign" not in said  # its sign changes are at rows zero by symmetry: the floor's
    assert tomllib.loads(text)["oracle"]["compare"]  # what init wrote loads


def test_honest_round_off_on_the_zero_rows_passes_in_every_format_and_would_fail_on_rtol_alone(ws):
    solve(ws, SOLVER)  # `nightshift compare` runs it, where the references are out of its reach
    done = nightshift("compare", str(ws))
    assert done.returncode == 0 and "oracle: all 4 comparisons pass" in done.stdout, done.stdout + done.stderr
    # the same outputs against rtol alone (what init wrote before): the zero rows fail, and nothing else does
    text = (ws / "nightshift.toml").read_text()
    bare = "\n".join(line for line in text.splitlines() if not line.startswith(("per_field.", "per_column.", "atol")))
    (ws / "nightshift.toml").write_text(bare + "\n")
    report = json.loads(nightshift("compare", str(ws), "--json").stdout)
    for entry in report["comparisons"]:
        assert entry["passed"] is False, entry["name"]
        [col] = entry["columns"]
        assert col["row_worst"] // (len(Y) if col.get("kind") == "field" else 1) in ZERO_ROWS, col


def expected_worst(root, name: str, u_cand: np.ndarray, u_ref: np.ndarray) -> tuple:
    atol = atols(root)[name]
    diff = np.abs(u_cand - u_ref)
    ratio = diff / (atol + 1e-6 * np.abs(u_ref))
    at = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return at, atol, diff[at], abs(u_ref[at]), ratio[at], int((ratio > 1).sum())


def test_a_wrong_solver_fails_where_the_physics_is_wrong_with_the_absolute_error_beside_the_relative_one(ws, tmp_path):
    solve(ws, WRONG)
    out = run_oracle(load_config(ws).oracle, ws, tmp_path / "o", None)
    assert not out.passed
    wrong = backend_field()
    wrong[X > 0.5] *= 1 + 1e-4
    ref = reference_field()
    (i, j), atol, gap, size, ratio, failing = expected_worst(ws, "u", wrong, ref)
    assert X[i] > 0.5 and i not in ZERO_ROWS  # the worst point is where the physics moved, not a symmetry row
    numbers = f"|cand - ref| = {fmt(gap)}, |ref| = {fmt(size)}, atol {atol:g} ({fmt_ratio(ratio)}x the tolerance)"
    lines = "\n".join(out.pushback)
    assert (f"u: rel err {fmt(gap / size)} vs rtol 1e-06 at index ({i}, {j}): {numbers}; {failing} of "
            f"{ref.size} points fail") in lines, lines
    assert f"x={X[i]:.6g}, y={Y[j]:.6g} (index ({i}, {j})): {numbers}" in lines, lines  # HDF5 and NetCDF
    (k, _), atol, gap, size, ratio, _ = expected_worst(ws, "profile / u", wrong[:, :1], ref[:, :1])
    assert (f"profile / u: rel err {fmt(gap / size)} vs rtol 1e-06 at x={X[k] + 2:.6g}: |cand - ref| = {fmt(gap)}, "
            f"|ref| = {fmt(size)}, atol {atol:g}") in lines, lines
    field_worst = f"at x={X[i]:.6g}, y={Y[j]:.6g} (index ({i}, {j})), {numbers.split(' (')[0]}"
    column_worst = f"at x={X[k] + 2:.6g}, |cand - ref| = {fmt(gap)}, |ref| = {fmt(size)}, atol {atol:g}"
    assert field_worst in out.summary or column_worst in out.summary, out.summary  # the worst of the four


def test_the_preflight_gap_and_calibration_point_at_the_physics_not_at_a_row_zero_by_symmetry(ws):
    solve(ws, WRONG)
    done = nightshift("check", str(ws), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    gaps = [line for line in done.stdout.splitlines() if "gap today" in line]
    assert len(gaps) == 4, done.stdout
    for line in gaps:
        assert "rel err 1.00e-04 vs rtol 1e-06" in line and "|cand - ref| = " in line, line
        assert not any(f"({row}, " in line or f"x={X[row] + 2:.6g}:" in line for row in ZERO_ROWS), line
    calibrated = [line for line in done.stdout.splitlines() if "calibration" in line]
    assert calibrated and all(line.startswith("ok") for line in calibrated if "atol dominates there" not in line), \
        done.stdout
    # the derived floor dominates only on the row that is round-off (x = 1; the x = 0 row is exactly 0), said so
    floors = [line for line in calibrated if "atol dominates there" in line]
    assert len(floors) == 4 and all(line.startswith("note") and "|reference| from 1e-16 to 1e-15" in line and
                                    "(zero at the data's precision: what an absolute tolerance is for)" in line
                                    for line in floors), floors
    assert any(f"(x {X[12]:.6g})" in line for line in floors) and any(f"(x {X[12] + 2:.6g})" in line
                                                                      for line in floors), floors


def test_a_solver_that_zeroes_every_small_value_does_not_hide_under_the_derived_floor(ws):
    solve(ws, ZEROED)
    report = json.loads(nightshift("compare", str(ws), "--json").stdout)
    assert [e["passed"] for e in report["comparisons"]] == [False] * 4, report
    for entry in report["comparisons"]:  # caught where a real value was left out, not on a symmetry row
        [col] = entry["columns"]
        assert col["cand_worst"] == 0 and abs(col["ref_worst"]) > 0.1, col


def test_a_nan_or_inf_in_the_candidate_is_said_as_such_counted_and_never_as_an_infinite_error(ws, tmp_path):
    u = backend_field()
    u[2, 3], u[7, 1], u[9, 0] = np.nan, np.inf, np.nan
    solve(ws, SOLVER.replace("write_all('out', backend_field())",
                             "u = backend_field()\nu[2, 3], u[7, 1], u[9, 0] = np.nan, np.inf, np.nan\n"
                             "write_all('out', u)"))
    out = run_oracle(load_config(ws).oracle, ws, tmp_path / "o", None)
    ref = reference_field()
    lines = "\n".join(out.pushback)
    assert (f"u: NaN at index (2, 3) where the reference is {fmt(ref[2, 3])} (3 non-finite values in the candidate "
            "where the reference is finite); 3 of 192 points fail vs rtol 1e-06, atol") in lines, lines
    assert f"x={X[2]:.6g}, y={Y[3]:.6g} (index (2, 3)) where the reference is {fmt(ref[2, 3])}" in lines, lines
    assert (f"profile / u: NaN at x={X[9] + 2:.6g} where the reference is {fmt(ref[9, 0])} (1 non-finite value in "
            "the candidate") in lines, lines
    assert "NaN at" in out.summary and "inf >" not in out.summary and "nan >" not in out.summary, out.summary
    assert "inf >" not in lines and "rel err inf" not in lines and "rel err nan" not in lines, lines
    solve(ws, SOLVER.replace("write_all('out', backend_field())",
                             "u = backend_field()\nu[7, 1] = -np.inf\nwrite_all('out', u)"))
    out = run_oracle(load_config(ws).oracle, ws, tmp_path / "o2", None)
    assert f"u: -inf at index (7, 1) where the reference is {fmt(ref[7, 1])} (1 non-finite value" in \
        "\n".join(out.pushback), out.pushback
