"""The oracle's CLI verbs: `nightshift compare` (table, --json, exit codes 0/1/2, one-line errors) and
`nightshift plot RUN` (a PNG from every verdict's oracle.json under the run's shifts)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from nightshift.supervisor.verify.oracle import run_oracle
from nightshift.supervisor.cli.oracle_verbs import compare_main, history_series, plot_main
from tests.fixtures_oracle import oracle, perturb, spectrum, workspace_with_oracle

ORACLE = '''
[oracle]
[[oracle.compare]]
name = "lensed C_l"
candidate = "out/cl.dat"
reference = "reference/cl.dat"
x = "l"
columns = ["TT", "EE"]
rtol = {rtol}
'''
REF = spectrum(100)


def test_compare_prints_a_table_and_exits_0_when_all_pass(tmp_path, capsys):
    ws = workspace_with_oracle(tmp_path / "ws", ORACLE.format(rtol=1e-2), REF, perturb(REF, 1e-3))
    assert compare_main(ws, as_json=False, full=True) == 0
    out = capsys.readouterr().out
    assert "comparison" in out and "lensed C_l  TT" in out and "pass" in out
    assert out.strip().splitlines()[-1].startswith("oracle: all 1 comparisons pass")


def test_compare_json_and_exit_1_when_any_fails(tmp_path, capsys):
    ws = workspace_with_oracle(tmp_path / "ws", ORACLE.format(rtol=1e-4), REF, perturb(REF, 1e-2))
    assert compare_main(ws, as_json=True, full=True) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is False and [c["column"] for c in report["comparisons"][0]["columns"]] == ["TT", "EE"]


def test_compare_errors_exit_2_with_one_line(tmp_path, capsys):
    assert compare_main(tmp_path, as_json=False, full=True) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nightshift.toml not found" in err
    (tmp_path / "nightshift.toml").write_text("[oracle]\n[[oracle.compare]]\nname = 1\n")
    assert compare_main(tmp_path, as_json=False, full=True) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "oracle.compare[0]" in err
    (tmp_path / "nightshift.toml").write_text('goal = "x"\n')
    assert compare_main(tmp_path, as_json=False, full=True) == 2
    assert "no [oracle] comparisons" in capsys.readouterr().err


def test_compare_missing_candidate_is_a_failing_row_not_an_error(tmp_path, capsys):
    ws = workspace_with_oracle(tmp_path / "ws", ORACLE.format(rtol=1e-2), REF, None)
    assert compare_main(ws, as_json=False, full=True) == 1
    assert "out/cl.dat: no such file" in capsys.readouterr().out


def test_compare_through_the_nightshift_cli(tmp_path):
    ws = workspace_with_oracle(tmp_path / "ws", ORACLE.format(rtol=1e-2), REF, perturb(REF, 1e-4))
    done = subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "compare", str(ws), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["passed"] is True


def _history(run_root, ws):
    cfg = oracle({"name": "cl", "candidate": "out/cl.dat", "reference": "reference/cl.dat", "x": "l",
                  "columns": ["TT"], "rtol": 1e-3})
    for shift, rel in ((1, 1e-1), (2, 1e-2), (3, 1e-4)):
        workspace_with_oracle(ws, "", REF, perturb(REF, rel))
        run_oracle(cfg, ws, run_root / "shifts" / str(shift) / "t1.oracle", None)


def test_plot_writes_a_png_of_the_history(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run_root = tmp_path / "run"
    _history(run_root, tmp_path / "ws")
    labels, series, tol = history_series(run_root)
    assert labels == ["s1t1", "s2t1", "s3t1"] and tol == {"cl": 1e-3}
    assert series["cl"][0] > series["cl"][1] > series["cl"][2]
    assert np.isclose(series["cl"][2], 1e-4, rtol=0.05)
    out = tmp_path / "h.png"
    assert plot_main(run_root, out) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_history_is_a_one_line_error(tmp_path, capsys):
    assert plot_main(tmp_path, None) == 2
    assert "no oracle reports under" in capsys.readouterr().err
