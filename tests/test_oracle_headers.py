"""Real headers, real columns: a convergence table whose header repeats names (`# nx aerr rerr aerr rerr`, two
limiters side by side) and a pandas CSV (an unnamed index column, then names with units, one of them quoted with
a comma in it). init keeps every column a different column of the file; the config refuses an ambiguous name;
a failure is located in the file's own names."""
from __future__ import annotations

import json
import tomllib

import numpy as np

from tests.fixtures_core import nightshift
from tests.test_bad_input import one_line_error


def convergence_ws(tmp_path):
    root = tmp_path / "ws"
    (root / "reference").mkdir(parents=True)
    nx = np.array([16, 32, 64, 128, 256], dtype=float)
    rows = np.column_stack([nx, 3.1 / nx ** 2, 2.2 / nx ** 2, 5.3 / nx ** 1.5, 4.4 / nx ** 1.5])
    np.savetxt(root / "reference" / "convergence.dat", rows, header="nx aerr rerr aerr rerr", fmt="%.17g")
    assert nightshift("init", str(root), "--goal", "to 1%", "--reference-dir", "reference", "--yes").returncode == 0
    return root, rows


def test_a_repeated_header_name_is_never_its_first_occurrence(tmp_path):
    root, rows = convergence_ws(tmp_path)
    block = tomllib.loads((root / "nightshift.toml").read_text())["oracle"]["compare"][0]
    assert block["x"] == "nx" and block["columns"] == [1, 2, 3, 4]  # positions: four different columns
    assert "the header repeats ['aerr', 'rerr']" in (root / "nightshift.toml").read_text()
    (root / "out").mkdir()
    bad = rows.copy()
    bad[2, 3] *= 1.10  # the second limiter's aerr is 10% off
    np.savetxt(root / "out" / "convergence.dat", bad, header="nx aerr rerr aerr rerr", fmt="%.17g")
    done = nightshift("compare", str(root), "--json")
    assert done.returncode == 1
    col = next(c for c in json.loads(done.stdout)["comparisons"][0]["columns"] if not c["passed"])
    assert col["column"] == "aerr" and col["row_worst"] == 2 and col["failing"] == 1


def test_an_ambiguous_column_name_fails_in_one_line_and_a_column_listed_twice_is_refused(tmp_path):
    root, rows = convergence_ws(tmp_path)
    (root / "out").mkdir()
    np.savetxt(root / "out" / "convergence.dat", rows, header="nx aerr rerr aerr rerr", fmt="%.17g")
    toml = root / "nightshift.toml"
    text = toml.read_text().replace("columns = [1, 2, 3, 4]", 'columns = ["aerr", "rerr"]')
    # the atol init derived per column names the columns by position: they go with the columns they name
    toml.write_text("\n".join(line for line in text.splitlines() if not line.startswith("per_column.")) + "\n")
    done = nightshift("compare", str(root), "--json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    error = json.loads(done.stdout)["comparisons"][0]["error"]
    assert "the name 'aerr' is ambiguous, it heads columns 1, 3 (0-based); name the column by its position" in error
    toml.write_text(toml.read_text().replace('columns = ["aerr", "rerr"]', "columns = [1, 3, 1]"))
    one_line_error(nightshift("compare", str(root)), "columns lists ['1'] more than once")


PANDAS = ',x [m],T (K),"p, total [Pa]"\n' + "".join(
    f"{i},{x!r},{300 + 20 * float(np.sin(3 * x))!r},{1e5 * (1 + x * x)!r}\n" for i, x in enumerate(np.linspace(0, 1, 51).tolist()))


def test_a_pandas_csv_takes_the_named_monotonic_column_as_x_and_keeps_the_names(tmp_path):
    root = tmp_path / "ws"
    (root / "reference").mkdir(parents=True)
    (root / "reference" / "profile.csv").write_text(PANDAS)
    assert nightshift("init", str(root), "--goal", "to 1e-6 relative", "--reference-dir", "reference",
                      "--yes").returncode == 0
    text = (root / "nightshift.toml").read_text()
    block = tomllib.loads(text)["oracle"]["compare"][0]
    assert block["x"] == "x [m]" and block["columns"] == ["T (K)", "p, total [Pa]"]
    assert "pandas index" in text
    (root / "out").mkdir()
    lines = PANDAS.splitlines()
    cells = lines[22].split(",")  # x = 0.42
    cells[2] = repr(float(cells[2]) * (1 + 1e-5))
    lines[22] = ",".join(cells)
    (root / "out" / "profile.csv").write_text("\n".join(lines) + "\n")
    done = nightshift("compare", str(root))
    assert done.returncode == 1
    assert "worst: profile T (K)" in done.stdout and "at x [m]=0.42" in done.stdout, done.stdout
