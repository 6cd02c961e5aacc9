"""A reference folder as a new user brings it: a CLASS-style C_l table, a CAMB-style P(k) table, a CSV, an .npz,
an HDF5 file, and the script that made them (which is not data). Shared by the init and check tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

SCRIPT = "# made the references below\nimport numpy as np\nprint('done')\n"
# Stands in for a solver: writes to out/ the tables it "computed" (kept in data/, since the references are hidden
# while the oracle command runs) and moves one value by a relative `delta`.
CANDIDATE_MAKER = '''import shutil, sys
from pathlib import Path
import numpy as np
delta = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
shutil.rmtree("out", ignore_errors=True)
shutil.copytree("data", "out")
cl = Path("out/cl_class.dat")
lines = cl.read_text().splitlines()
for i, line in enumerate(lines):
    cells = line.split()
    if cells and not line.startswith("#") and float(cells[0]) == 100:
        cells[1] = repr(float(cells[1]) * (1 + delta))
        lines[i] = " ".join(cells)
cl.write_text("\\n".join(lines) + "\\n")
'''


def cl_rows(n: int = 400) -> np.ndarray:
    ell = np.arange(2, 2 + n, dtype=float)
    tt = 6000.0 * (ell / 200.0) ** -0.3 * (1 + 0.3 * np.sin(ell / 40.0))
    return np.column_stack([ell, tt, 0.01 * tt + 1.0, 0.1 * np.cos(ell / 30.0) * tt + 5.0])


def make_reference_folder(workspace: Path, name: str = "reference") -> Path:
    import h5py

    ref = workspace / name
    ref.mkdir(parents=True, exist_ok=True)
    rows = cl_rows()
    header = ("# dimensionless [l(l+1)/2pi] C_l's\n# for l=2 to 401, i.e. number of multipoles equal to 400\n#\n"
              "#    1:l              2:TT             3:EE             4:TE\n")
    (ref / "cl_class.dat").write_text(header + "\n".join("  ".join(f"{v:.10e}" for v in row) for row in rows) + "\n")
    k = np.logspace(-4, 1, 200)
    pk = 2e4 * k / (1 + (k / 0.02) ** 2.5)
    (ref / "pk_camb.dat").write_text("#    k/h          P (h^-1 Mpc)^3\n"
                                     + "\n".join(f"   {a:.8e}   {b:.8e}" for a, b in zip(k, pk)) + "\n")
    z = np.linspace(0.1, 2.0, 20)
    (ref / "bao.csv").write_text("z,DM,DH\n" + "\n".join(f"{a},{3000 * a / (1 + a)},{3000 / (1 + a) ** 1.5}"
                                                        for a in z) + "\n")
    a = np.linspace(0.1, 1.0, 50)
    np.savez(ref / "growth.npz", a=a, D=a * (1 - 0.1 * a), f=0.5 + 0.4 * a)
    ell = np.arange(2, 102, dtype=float)
    with h5py.File(ref / "spectra.h5", "w") as handle:
        group = handle.create_group("lensing")
        group["ell"] = ell
        group["phiphi"] = 1e-7 / ell ** 2
    (ref / "make_refs.py").write_text(SCRIPT)
    return ref


@pytest.fixture
def reference_ws(tmp_path):
    """A git-less folder "ws" holding a reference folder of every kind `init --reference-dir` reads."""
    from tests.fixtures_core import require_tool
    require_tool("git")
    path = tmp_path / "ws"
    path.mkdir()
    make_reference_folder(path)
    return path
