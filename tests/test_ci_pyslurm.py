""".ci/pyslurm, which `make test` runs under CI=true to build pyslurm from ../shared/vendor: a missing tarball fails
CI loudly in one line and is only a note in a user's clone; an installed build is not built again. (The build
itself is what CI's pyslurm tests, tests/test_slurm_client.py and test_slurm_poller.py, then run against.)"""
from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "pyslurm"


@pytest.fixture
def bare_python(tmp_path) -> Path:
    """A virtualenv without pyslurm (a user's fresh clone)."""
    venv.create(tmp_path / "venv", with_pip=False)
    return tmp_path / "venv" / "bin" / "python"


def build(python: Path, tmp_path: Path, ci: bool, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["NIGHTSHIFT_PYSLURM_TARBALL"] = str(tmp_path / "no-shared" / "pyslurm-22.5.3.tar.gz")
    if ci:
        env["CI"] = "true"
    return subprocess.run(["bash", str(SCRIPT), str(python), *args], capture_output=True, text=True, env=env,
                          timeout=60)


def test_under_ci_a_missing_tarball_fails_in_one_line_naming_it(bare_python, tmp_path):
    out = build(bare_python, tmp_path, ci=True)
    assert out.returncode == 1
    [line] = out.stderr.strip().splitlines()
    assert "pyslurm-22.5.3.tar.gz is missing" in line and "shared/ beside it" in line
    assert "Traceback" not in out.stderr


def test_in_a_users_clone_a_missing_tarball_is_a_note_and_make_pyslurm_insists(bare_python, tmp_path):
    out = build(bare_python, tmp_path, ci=False)
    assert out.returncode == 0 and "its tests skip" in out.stdout and out.stderr == ""
    asked = build(bare_python, tmp_path, False, "required")  # `make pyslurm`: the user asked for the build
    assert asked.returncode == 1 and "is missing" in asked.stderr


def test_an_installed_build_is_not_built_again(bare_python, tmp_path):
    site = subprocess.run([str(bare_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    dist = Path(site) / "pyslurm-22.5.3.dist-info"  # what pip leaves for an installed build
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pyslurm\nVersion: 22.5.3\n")
    out = build(bare_python, tmp_path, ci=True)  # no tarball either: it is not needed
    assert out.returncode == 0 and "pyslurm 22.5.3" in out.stdout and "building" not in out.stdout


def test_the_vendored_source_is_never_part_of_the_project():
    root = SCRIPT.parents[1]
    tracked = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True).stdout.split()
    assert ".ci/pyslurm" in tracked or "Makefile" in tracked  # a checkout (CI clones one)
    assert not [p for p in tracked if "pyslurm-" in p or p.endswith((".tar.gz", ".pyx", ".pxd"))]
