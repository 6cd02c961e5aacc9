"""Bad input to a field comparison, each one line naming the field and the fix, the comparison failing (never a
traceback, never a pass): another shape, a missing field, NetCDF without the netCDF4 extra, integer and complex
data, NaN in the reference, a coordinate that is not monotonic; and references whose content was never fetched
(Git LFS pointers, git-annex links) named with `git lfs pull` / `git annex get`."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.fixtures_core import nightshift
from tests.fixtures_fields import X, hydro_state, noisy, temperature_3d, write_hdf5, write_netcdf
from tests.test_bad_input import one_line_error

LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1"
               "258daaa5e2ca24d17e2393\nsize 1073741824\n")


def workspace(tmp_path, block: str):
    root = tmp_path / "ws"
    (root / "reference").mkdir(parents=True)
    (root / "out").mkdir()
    (root / "nightshift.toml").write_text('goal = "agree"\n[oracle]\n[[oracle.compare]]\n' + block)
    return root


def failing_entry(root) -> dict:
    done = nightshift("compare", str(root), "--json")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    entry = report["comparisons"][0]
    assert entry["passed"] is False and entry["error"] and "\n" not in entry["error"], entry
    table = nightshift("compare", str(root))
    assert table.returncode == 1 and entry["error"] in table.stdout and "Traceback" not in table.stderr
    return entry


H5 = 'name = "tube"\ncandidate = "out/t.h5"\nreference = "reference/t.h5"\nfields = ["/state/rho/data"]\nrtol = 1e-6\n'


def test_a_field_of_another_shape(tmp_path):
    root = workspace(tmp_path, H5)
    write_hdf5(root / "reference" / "t.h5", {"rho": hydro_state()["rho"]})
    import h5py
    with h5py.File(root / "out" / "t.h5", "w") as f:
        f["state/rho/data"] = hydro_state()["rho"][:, :-1]
    error = failing_entry(root)["error"]
    assert "has shape (48, 31) and its reference (48, 32)" in error and "reference's grid" in error


def test_a_missing_field(tmp_path):
    root = workspace(tmp_path, H5)
    write_hdf5(root / "reference" / "t.h5", {"rho": hydro_state()["rho"]})
    write_hdf5(root / "out" / "t.h5", {"momx": hydro_state()["momx"]})
    error = failing_entry(root)["error"]
    assert "no dataset '/state/rho/data'" in error and "the file must hold it" in error


@pytest.mark.parametrize("dtype, words", [(np.int32, "int32 values, not floating point"),
                                          (np.complex128, "complex values; compare the real and imaginary parts")])
def test_integer_and_complex_data(tmp_path, dtype, words):
    root = workspace(tmp_path, 'name = "a"\ncandidate = "out/a.npy"\nreference = "reference/a.npy"\n')
    np.save(root / "reference" / "a.npy", np.ones((4, 5), dtype=dtype))
    np.save(root / "out" / "a.npy", np.ones((4, 5), dtype=dtype))
    assert words in failing_entry(root)["error"]


def test_nan_in_the_reference(tmp_path):
    root = workspace(tmp_path, 'name = "a"\ncandidate = "out/a.npy"\nreference = "reference/a.npy"\n')
    ref = temperature_3d()
    ref[3, 4, 5] = np.nan
    np.save(root / "reference" / "a.npy", ref)
    np.save(root / "out" / "a.npy", noisy(temperature_3d()))
    error = failing_entry(root)["error"]
    assert "the reference holds NaN at index (3, 4, 5)" in error and "fix the reference" in error


def test_a_coordinate_that_is_not_monotonic(tmp_path):
    root = workspace(tmp_path, 'name = "c"\ncandidate = "out/c.nc"\nreference = "reference/c.nc"\nfields = ["T"]\n')
    x = X.copy()
    x[10], x[11] = x[11], x[10]
    write_netcdf(root / "reference" / "c.nc", temperature_3d(), x=x)
    write_netcdf(root / "out" / "c.nc", temperature_3d(), x=x)
    error = failing_entry(root)["error"]
    assert "its coordinate 'x' is not monotonic (at index 11" in error and "fix the coordinate variable" in error


def test_netcdf_without_the_extra_names_the_fix(tmp_path):
    root = workspace(tmp_path, 'name = "c"\ncandidate = "out/c.nc"\nreference = "reference/c.nc"\nfields = ["T"]\n')
    write_netcdf(root / "reference" / "c.nc", temperature_3d())
    write_netcdf(root / "out" / "c.nc", temperature_3d())
    code = ("import sys; sys.modules['netCDF4'] = None\nfrom nightshift.supervisor.cli.main import main\n"
            f"sys.exit(main(['compare', {str(root)!r}, '--json']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    error = json.loads(done.stdout)["comparisons"][0]["error"]
    assert "reading NetCDF needs the netCDF4 library; pip install netCDF4 (or the nightshift[netcdf] extra)" in error


def test_fields_and_columns_in_one_block_is_refused_in_one_line(tmp_path):
    root = workspace(tmp_path, H5.replace("rtol", 'columns = ["a"]\nrtol'))
    one_line_error(nightshift("compare", str(root)), "fields and columns (or x) exclude each other")
    (root / "nightshift.toml").write_text((root / "nightshift.toml").read_text().replace(
        'columns = ["a"]\n', 'per_field.rho = { rtol = 1e-3 }\n'))
    one_line_error(nightshift("compare", str(root)), "per_field names ['rho'], which are not in fields")


def test_a_git_lfs_pointer_is_named_with_git_lfs_pull(tmp_path):
    root = workspace(tmp_path, H5)
    (root / "reference" / "t.h5").write_text(LFS_POINTER)
    write_hdf5(root / "out" / "t.h5", {"rho": hydro_state()["rho"]})
    error = failing_entry(root)["error"]
    assert "a Git LFS pointer, not the data (1,073,741,824 bytes); run `git lfs pull`" in error
    assert "signature" not in error
    (root / "nightshift.toml").unlink()
    done = nightshift("init", str(root), "--goal", "to 1e-6 relative", "--reference-dir", "reference", "--yes")
    assert "run `git lfs pull`" in done.stdout + done.stderr and "'oid' is not a number" not in done.stdout


def test_a_git_annex_link_without_its_content_is_named_with_git_annex_get(tmp_path):
    root = workspace(tmp_path, H5)
    objects = root / ".git" / "annex" / "objects" / "Xk" / "3v"
    objects.mkdir(parents=True)  # the object's folder exists; its content was never fetched
    os.symlink(os.path.relpath(objects / "SHA256E-s1024--abc.h5" / "SHA256E-s1024--abc.h5", root / "reference"),
               root / "reference" / "t.h5")
    write_hdf5(root / "out" / "t.h5", {"rho": hydro_state()["rho"]})
    error = failing_entry(root)["error"]
    assert "a git-annex link whose content is not in this clone; run `git annex get t.h5`" in error
    (root / "nightshift.toml").unlink()
    done = nightshift("init", str(root), "--goal", "to 1e-6 relative", "--reference-dir", "reference", "--yes")
    assert "git annex get t.h5" in done.stdout + done.stderr


def test_check_names_a_git_lfs_pointer_with_its_fix(tmp_path):
    root = workspace(tmp_path, H5)
    (root / "reference" / "t.h5").write_text(LFS_POINTER)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    done = nightshift("check", str(root), timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = [line for line in done.stdout.splitlines() if "t.h5" in line]
    assert any(line.startswith("FAIL  calibration") and "run `git lfs pull`" in line for line in lines), lines
    assert not any("signature" in line or "is not a number" in line for line in lines), lines
