"""Where a point is, in the words a user and the agent read: the x column by its header name ("at z=2.5"), and
where x is a column index with no name, the reference's row with the value ("at row 101 (x=2.5)"), never "0=2.5".
Through the oracle as the supervisor runs it (summary, push-back), `nightshift compare`'s table, and the
preflight's and the calibration gate's lines, with real files."""
from __future__ import annotations

import numpy as np

from nightshift.supervisor.cli.oracle_verbs import compare_main
from nightshift.supervisor.cli.preflight.oracle import _gap_line
from nightshift.supervisor.config.oracle import CompareConfig
from nightshift.supervisor.verify.oracle import read_table, run_oracle
from nightshift.supervisor.verify.oracle.calibrate import Calibration, _expect_caught
from tests.fixtures_oracle import oracle, write_table


def tables(tmp_path, header: str | None, bad_row: int = 101):
    z = np.linspace(0.0, 5.0, 201)  # z = 2.5 at row 100, 2.525 at row 101
    ref = np.column_stack([z, 1.0 + z ** 2])
    cand = ref.copy()
    cand[bad_row, 1] *= 1.01
    write_table(tmp_path / "ws" / "reference" / "t.dat", ref, header)
    write_table(tmp_path / "ws" / "out" / "t.dat", cand, header)
    return tmp_path / "ws"


def run(ws, tmp_path, **kw):
    entry = {"name": "t", "candidate": "out/t.dat", "reference": "reference/t.dat", "rtol": 1e-6, **kw}
    return run_oracle(oracle(entry, clean_candidates=False), ws, tmp_path / "o", None)


def said(out) -> str:
    return out.summary + "\n" + "\n".join(out.pushback)


def test_x_by_name_or_by_the_index_of_a_named_column_says_its_name(tmp_path):
    ws = tables(tmp_path, "# 1:z 2:D")
    for x in ("z", 0, "0"):
        out = run(ws, tmp_path, x=x)
        # the worst point's relative error beside |cand - ref| and |ref| there (the reference is 7.38 at z=2.525)
        assert "t / D: rel err 1.00e-02 vs rtol 1e-06 at z=2.525: |cand - ref| = 0.0738, |ref| = 7.38" in said(out)
        assert "at z=2.525, |cand - ref| = 0.0738, |ref| = 7.38" in out.summary, said(out)
        assert "0=" not in said(out)


def test_x_by_the_index_of_a_column_without_a_name_says_the_row_and_the_value(tmp_path, capsys):
    ws = tables(tmp_path, None)
    out = run(ws, tmp_path, x=0)
    assert "rel err 1.00e-02 vs rtol 1e-06 at row 101 (x=2.525): |cand - ref|" in said(out), said(out)
    assert "at row 101 (x=2.525), |cand - ref|" in out.summary, said(out)
    assert "0=" not in said(out)
    (ws / "nightshift.toml").write_text('[oracle]\n[[oracle.compare]]\nname = "t"\ncandidate = "out/t.dat"\n'
                                        'reference = "reference/t.dat"\nx = 0\nrtol = 1e-6\n')
    assert compare_main(ws, as_json=False, full=True) == 1
    table = capsys.readouterr().out
    assert "row 101 (x=2.525)" in table and "0=" not in table, table
    assert "rel err 1.00e-02 vs rtol 1e-06 at row 101 (x=2.525): |cand - ref|" in \
        _gap_line(out.report["comparisons"][0], True, "").text


def test_rows_are_the_references_when_only_part_of_it_is_compared(tmp_path):
    ws = tables(tmp_path, None, bad_row=150)
    out = run(ws, tmp_path, x=0, range=[2.0, 5.0])  # the compared points start at row 80
    assert "vs rtol 1e-06 at row 150 (x=3.75): |cand - ref|" in said(out), said(out)


def test_uncovered_points_and_grid_errors_name_x_without_a_header_too(tmp_path):
    ws = tables(tmp_path, None)
    short = np.loadtxt(ws / "out" / "t.dat")[:150]
    write_table(ws / "out" / "t.dat", short)
    out = run(ws, tmp_path, x=0, interpolate="linear")
    assert "(row 150 (x=3.75) to row 200 (x=5); the candidate spans 0 to 3.725)" in said(out), said(out)
    moved = np.loadtxt(ws / "reference" / "t.dat")
    moved[7, 0] += 1e-3
    write_table(ws / "out" / "t.dat", moved)
    out = run(ws, tmp_path, x=0)
    assert "the x grids differ first at row 7 (candidate x (column 0) = 0.176" in said(out), said(out)


def test_the_calibration_gate_names_the_point_it_moved_the_same_way(tmp_path):
    ws = tables(tmp_path, None)
    ref = read_table(ws / "reference" / "t.dat")
    cfg = CompareConfig.model_validate({"name": "t", "candidate": "out/t.dat", "reference": "reference/t.dat",
                                        "x": 0, "rtol": 1e-3})
    found = Calibration("t")
    _expect_caught(cfg, found, ref, 1, ref.columns[1], "1", 2.5, 100)  # a move the comparison did not see
    assert found.problems == ["t 1: cannot fail: a change of 10x the tolerance at row 100 (x=2.5) passed"]
