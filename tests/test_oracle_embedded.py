"""The embedded-values scan, vectorised: where it could differ from a value-by-value reading, it catches the same
runs. Six significant digits count and five do not; signs and exponents are read as numbers, not text; a run of
exactly ``embedded_run`` values counts and one value short, or broken by one foreign value, does not; a run down a
column and one in row order both count. Real files, a real git workspace, the oracle as the supervisor runs it."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from nightshift.supervisor.verify.oracle import embedded, protect_references, run_oracle
from tests.fixtures_oracle import oracle, write_table

HEADER = "# 1:x 2:a 3:b"


def make(tmp_path, ref: np.ndarray, fmt: str = "%.10e"):
    ws = tmp_path / "ws"
    write_table(ws / "reference" / "t.dat", ref, HEADER, fmt=fmt)
    write_table(ws / "out" / "t.dat", ref * (1 + 1e-9), HEADER)  # an honest candidate, within rtol
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    return ws


def table(n: int = 60, sign: float = 1.0, scale: float = 1.0) -> np.ndarray:
    x = np.arange(1, n + 1, dtype=float)
    return np.column_stack([x, sign * scale / (x + 0.123456789), sign * scale * np.sqrt(x + 0.987654321)])


def findings(ws, tmp_path, run: int = 20, name: str = "o") -> list[str]:
    cfg = oracle({"name": "t", "candidate": "out/t.dat", "reference": "reference/t.dat", "x": "x", "rtol": 1e-6},
                 clean_candidates=False, embedded_run=run)
    out = run_oracle(cfg, ws, tmp_path / name, None)
    return [p for p in out.report["problems"] if "of a reference's values in a row" in p]


def test_six_significant_digits_count_and_five_do_not(tmp_path):
    ref = table()
    ws = make(tmp_path, ref, fmt="%.5e")  # the reference printed at exactly 6 significant digits
    (ws / "six.py").write_text("A = [" + ", ".join(f"{v:.5e}" for v in ref[:20, 1]) + "]\n")
    assert findings(ws, tmp_path) == [f"six.py:1 holds 20 of a reference's values in a row at full printed "
                                      "precision: the answers were pasted into the code; produce it from the "
                                      "solver; the references are not readable while the oracle runs"]
    short = table()
    ws2 = make(tmp_path / "five", short, fmt="%.4e")  # 5 digits: too common to say they were copied
    (ws2 / "five.py").write_text("A = [" + ", ".join(f"{v:.4e}" for v in short[:30, 1]) + "]\n")
    assert findings(ws2, tmp_path / "five") == []


def test_more_digits_than_the_reference_prints_are_a_different_number(tmp_path):
    ref = table()
    ws = make(tmp_path, ref, fmt="%.7e")
    (ws / "more.py").write_text("A = [" + ", ".join(f"{v:.12e}" for v in ref[:30, 1]) + "]\n")  # the true values
    assert findings(ws, tmp_path) == []  # they equal the solver's numbers, not the printed reference's


@pytest.mark.parametrize("spell", ["{:.10e}", "{:.10E}", "{!r}"], ids=["e", "E", "repr"])
def test_negative_values_and_any_spelling_of_the_exponent_are_caught(tmp_path, spell):
    ref = table(sign=-1.0, scale=1e-7)
    ws = make(tmp_path, ref)
    pasted = [float(f"{v:.10e}") for v in ref[10:35, 2]]  # what the reference says, spelt another way
    (ws / "neg.py").write_text("import numpy\n\nB = numpy.array([\n" + ",\n".join(spell.format(v) for v in pasted)
                               + "])\n")
    assert [f.split(" at full")[0] for f in findings(ws, tmp_path)] == ["neg.py:4 holds 25 of a reference's values "
                                                                        "in a row"]


def test_a_run_of_exactly_embedded_run_counts_and_one_fewer_does_not(tmp_path):
    ref = table()
    ws = make(tmp_path, ref)
    values = [f"{v:.10e}" for v in ref[:, 1]]
    (ws / "run.py").write_text("# header\n\nA = [" + ", ".join(values[3:11]) + "]\n")  # 8 in a row
    assert findings(ws, tmp_path, run=8)[0].startswith("run.py:3 holds 8 of a reference's values in a row")
    assert findings(ws, tmp_path, run=9, name="o2") == []


def test_a_run_broken_by_one_foreign_value_does_not_count(tmp_path):
    ref = table()
    ws = make(tmp_path, ref)
    values = [f"{v:.10e}" for v in ref[:, 1]]
    (ws / "broken.py").write_text("A = [" + ", ".join(values[:19] + ["1.234567890e+00"] + values[20:39]) + "]\n")
    assert findings(ws, tmp_path) == []
    (ws / "broken.py").write_text("A = [" + ", ".join(values[:19] + [values[19]] + values[20:39]) + "]\n")
    assert findings(ws, tmp_path, name="o2")[0].startswith("broken.py:1 holds 39 of a reference's values in a row")


def test_rows_pasted_in_file_order_are_caught_as_well_as_a_column(tmp_path):
    ref = table()
    ref[:, 0] += 0.1234567  # every column at full precision, so the rows read as one run
    ws = make(tmp_path, ref)
    rows = "\n".join("    [" + ", ".join(f"{v:.10e}" for v in row) + "]," for row in ref[30:40])
    (ws / "rows.py").write_text(f"ROWS = [\n{rows}\n]\n")
    assert findings(ws, tmp_path)[0].startswith("rows.py:2 holds 30 of a reference's values in a row")


def test_a_value_that_repeats_in_the_reference_does_not_hide_a_run(tmp_path):
    """A constant stretch (more than the 50 places an index once kept per value) before the pasted run."""
    ref = table(200)
    ref[:120, 1] = 1.0000001234
    ws = make(tmp_path, ref)
    (ws / "flat.py").write_text("A = [" + ", ".join(f"{v:.10e}" for v in ref[110:135, 1]) + "]\n")
    assert findings(ws, tmp_path)[0].startswith("flat.py:1 holds 25 of a reference's values in a row")


def test_the_cached_scan_follows_edits_of_the_files_and_of_the_reference(tmp_path):
    ref = table()
    ws = make(tmp_path, ref)
    paste = "A = [" + ", ".join(f"{v:.10e}" for v in ref[:25, 1]) + "]\n"
    (ws / "solver.py").write_text(paste)
    assert len(findings(ws, tmp_path)) == 1
    assert len(findings(ws, tmp_path, name="o2")) == 1  # asked again: the same answer from the cache
    (ws / "solver.py").write_text("# the literal array is gone\n" + "A = compute()\n" * 40)
    assert findings(ws, tmp_path, name="o3") == []
    (ws / "solver.py").write_text(paste)
    other = table()
    other[:, 1] *= 1.5
    write_table(ws / "reference" / "t.dat", other, HEADER, fmt="%.10e")  # the reference itself changed
    write_table(ws / "out" / "t.dat", other, HEADER, fmt="%.10e")
    assert findings(ws, tmp_path, name="o4") == []


def test_a_reference_no_comparison_read_is_still_scanned(tmp_path):
    """The candidate is missing, so the comparison stops before it reads the reference: the scan reads it."""
    ref = table()
    ws = make(tmp_path, ref)
    (ws / "out" / "t.dat").unlink()
    (ws / "solver.py").write_text("A = [" + ", ".join(f"{v:.10e}" for v in ref[:25, 2]) + "]\n")
    assert findings(ws, tmp_path)[0].startswith("solver.py:1 holds 25 of a reference's values in a row")


def test_each_part_of_one_container_is_its_own_reference(tmp_path):
    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    first, second = table(), table(scale=3.0)
    np.savez(ws / "reference" / "t.npz", a=first, b=second)
    np.savez(ws / "out.npz", a=first * (1 + 1e-9), b=second * (1 + 1e-9))
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "solver.py").write_text("B = [" + ", ".join(repr(float(v)) for v in second[5:30, 1]) + "]\n")
    cfg = oracle(*[{"name": p, "candidate": f"out.npz:{p}", "reference": f"reference/t.npz:{p}", "rtol": 1e-6}
                   for p in "ab"], clean_candidates=False)
    out = run_oracle(cfg, ws, tmp_path / "o", None)
    assert [p.split(" at full")[0] for p in out.report["problems"]] == ["solver.py:1 holds 25 of a reference's "
                                                                        "values in a row"]


def test_each_file_is_named_on_its_own_and_a_held_out_reference_is_scanned_from_its_private_copy(tmp_path):
    ref, held = table(), table(scale=7.0)
    ws = make(tmp_path, ref)
    write_table(tmp_path / "held" / "h.dat", held, HEADER, fmt="%.10e")
    write_table(ws / "out" / "h.dat", held * (1 + 1e-9), HEADER)
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("X = 1.23456789\n")  # a number, and no run
    (ws / "src" / "b.py").write_text("\n\nH = [" + ", ".join(f"{v:.10e}" for v in held[3:24, 2]) + "]\n")
    compares = [{"name": "t", "candidate": "out/t.dat", "reference": "reference/t.dat", "x": "x", "rtol": 1e-6},
                {"name": "h", "candidate": "out/h.dat", "reference": str(tmp_path / "held" / "h.dat"), "x": "x",
                 "rtol": 1e-6, "heldout": True}]
    store = tmp_path / "run" / "references"
    protect_references(oracle(*compares), ws, store)
    (tmp_path / "held" / "h.dat").unlink()  # only the run's private copy is left
    out = run_oracle(oracle(*compares, clean_candidates=False), ws, tmp_path / "o", store)
    assert [p.split(" at full")[0] for p in out.report["problems"]] == ["src/b.py:3 holds 21 of a reference's values "
                                                                        "in a row"]


def test_a_verdict_with_nothing_changed_reuses_what_the_last_one_found(tmp_path):
    """The supervisor asks at every stop: unchanged references and files are not read again by the scan."""
    ref = table()
    ws = make(tmp_path, ref)
    (ws / "solver.py").write_text("A = [" + ", ".join(f"{v:.10e}" for v in ref[:25, 1]) + "]\n")
    findings(ws, tmp_path)
    kept = {k: v for k, v in embedded._RUNS.items() if k[0] == str(ws / "reference" / "t.dat")}
    numbers = embedded._FILES[str(ws / "solver.py")]
    assert len(kept) == 1 and len(next(iter(kept.values()))) > 0
    assert findings(ws, tmp_path, name="o2")
    assert embedded._RUNS[next(iter(kept))] is next(iter(kept.values()))
    assert embedded._FILES[str(ws / "solver.py")] is numbers
