"""The oracle without its optional extras: no pyarrow (numpy reads every table), no h5py (a one-line error
naming the fix), no matplotlib (plot exits 2 with one line). Each runs in a fresh interpreter where the
package is made unimportable."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.fixtures_oracle import spectrum, write_table

ROOT = Path(__file__).resolve().parent.parent


def run_without(package: str, code: str) -> subprocess.CompletedProcess:
    prelude = f"import sys; sys.modules[{package!r}] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_without_pyarrow_numpy_reads_the_same_table(tmp_path):
    data = spectrum(30)
    path = write_table(tmp_path / "a.csv", data, "l,TT,EE,TE", delimiter=",")
    out = tmp_path / "out.npy"
    done = run_without("pyarrow", "from pathlib import Path\nimport numpy as np\n"
                                  "from nightshift.supervisor.verify.oracle import read_table\n"
                                  f"t = read_table(Path({str(path)!r}))\n"
                                  f"np.save({str(out)!r}, np.column_stack(t.columns))\n")
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.load(out), data)


def test_without_h5py_the_error_names_the_fix(tmp_path):
    done = run_without("h5py", "from pathlib import Path\nfrom nightshift.supervisor.verify.oracle import read_table\n"
                               f"p = Path({str(tmp_path / 'x.h5')!r}); p.write_bytes(b'x')\n"
                               "try:\n    read_table(p)\nexcept Exception as e:\n    print(e)\n")
    assert done.returncode == 0, done.stderr
    assert "reading HDF5 needs h5py; pip install h5py" in done.stdout


def test_without_matplotlib_plot_is_one_line_exit_2(tmp_path):
    done = run_without("matplotlib", "from pathlib import Path\nfrom nightshift.supervisor.cli.oracle_verbs import plot_main\n"
                                     f"sys.exit(plot_main(Path({str(tmp_path)!r}), None))\n")
    assert done.returncode == 2
    assert done.stderr.strip() == ("nightshift plot: needs matplotlib; pip install matplotlib (or the "
                                   "nightshift[plot] extra)")
