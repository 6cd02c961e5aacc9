"""What is installed is one import package, `nightshift`, and the README's install line works from a clean clone.

- pyproject.toml's package list is every folder of ours (a new folder left out would be missing from the wheel).
- The wheel installed beside supervisord (whose import package is `supervisor`) touches none of its files, and
  `pip uninstall` leaves it whole.
- From a clean clone in a throwaway HOME: `make demo`, then the README's install line, puts `nightshift` on PATH;
  `--version` names the version and the clone's commit; `init` in a new repository and `check` work with no further
  step.
The last two are real installs from the package registry (minutes): they run under CI and where the tools are.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _need(tool: str, path_list: str | None = None) -> str:
    path = shutil.which(tool, path=path_list)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{tool} is missing: CI installs it (make test)")
        pytest.skip(f"{tool} is not on PATH")
    return path


def _clean_clone(tmp_path: Path) -> Path:
    """This checkout's HEAD, cloned: what a new user has (nothing uncommitted, no .venv)."""
    clone = tmp_path / "nightshift-src"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    return clone


def _env(home: Path, **extra: str) -> dict[str, str]:
    """A throwaway HOME; pip's cache stays the machine's (speed only: every package is still installed)."""
    cache = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.update(HOME=str(home), PIP_CACHE_DIR=cache, XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".local" / "state"),
               GIT_AUTHOR_NAME="A User", GIT_AUTHOR_EMAIL="user@example.org",
               GIT_COMMITTER_NAME="A User", GIT_COMMITTER_EMAIL="user@example.org", **extra)
    env["PATH"] = os.pathsep.join([str(home / ".local" / "bin"), str(Path(sys.executable).parent),
                                   "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"])
    return env


def test_the_package_list_is_every_folder_of_ours():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    folders = {"nightshift." + ".".join(p.parent.relative_to(ROOT).parts)
               for top in ("supervisor", "tui", "hpc") for p in (ROOT / top).rglob("__init__.py")}
    wanted = folders | {"nightshift"}
    assert listed == wanted, f"pyproject.toml's packages differ from the folders: {listed ^ wanted}"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"nightshift": "."}
    assert PYPROJECT["project"]["scripts"]["nightshift"].startswith("nightshift.supervisor.")


def test_no_top_level_package_but_nightshift_is_imported_anywhere():
    """Every import of ours goes through `nightshift.` (a bare `supervisor` would be supervisord's once installed)."""
    bare = re.compile(r"^\s*(from|import)\s+(supervisor|tui|hpc)\b", re.M)
    found = [str(p.relative_to(ROOT)) for top in ("supervisor", "tui", "hpc", "tests", "bench")
             for p in (ROOT / top).rglob("*.py") if bare.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, f"imports of a bare top-level package: {found}"


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.slow
@pytest.mark.timeout(2400)  # real installs from the registry: past the suite's 300 s
def test_installed_beside_supervisord_nothing_of_it_is_touched(tmp_path):
    clone = _clean_clone(tmp_path)
    env = _env(tmp_path / "home")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-qq", "--prefer-binary"]
    subprocess.run([*pip, "supervisor"], check=True, env=env, cwd=tmp_path)  # supervisord, from the registry
    # run from tmp_path: `python -c` puts the current folder first, and this checkout's folder has a supervisor/
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import supervisor, os; "
                                "print(os.path.dirname(supervisor.__file__))"], capture_output=True, text=True,
                               check=True, cwd=tmp_path).stdout.strip())
    before = _digests(site)
    assert "supervisord.py" in before
    subprocess.run([*pip, str(clone)], check=True, env=env, cwd=tmp_path)
    assert _digests(site) == before, "installing nightshift changed supervisord's package"
    out = subprocess.run([str(venv / "bin" / "nightshift"), "--version"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0 and "nightshift" in out.stdout, out.stdout + out.stderr
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-qq", "-y", "nightshift-hpc"], check=True,
                   env=env, cwd=tmp_path)
    assert _digests(site) == before, "uninstalling nightshift removed or changed supervisord's files"
    check = subprocess.run([str(venv / "bin" / "python"), "-c", "import supervisor.supervisord"], env=env,
                           capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert not (venv / "bin" / "nightshift").exists()


def _readme_install_line() -> list[str]:
    text = (ROOT / "README.md").read_text()
    quick = text[text.index("## Quick start"):]
    quick = quick[:quick.index("\n## ", 4)]
    lines = [ln.split("#")[0].strip() for ln in quick.splitlines() if ln.startswith(("pipx install", "uv tool install"))]
    assert lines, "the README's quick start has no install line (pipx install . / uv tool install .)"
    return lines[0].split()


@pytest.mark.slow
@pytest.mark.timeout(2400)  # real installs from the registry: past the suite's 300 s
def test_a_new_user_follows_the_quick_start_and_has_nightshift_on_path(tmp_path):
    for tool in ("make", "git", "tmux"):
        _need(tool)
    clone = _clean_clone(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    install = _readme_install_line()
    _need(install[0], env["PATH"])  # pipx: the test tools' (make test installs it beside pytest); asked before minutes
    demo = subprocess.run(["make", "demo"], cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "pipx install ." in demo.stdout, "make demo does not end with the install line"
    got = subprocess.run(install, cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    command = shutil.which("nightshift", path=env["PATH"])
    assert command and Path(command).resolve().is_relative_to(home.resolve()), command
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True,
                            check=True).stdout.strip()
    version = subprocess.run(["nightshift", "--version"], env=env, capture_output=True, text=True, cwd=home)
    assert version.returncode == 0 and commit in version.stdout, version.stdout + version.stderr
    # a new repository of the user's, then init and check with no further step
    ws = tmp_path / "solver"
    ws.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True, env=env)
    (ws / "solver.py").write_text("print(1)\n")
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=ws, check=True, env=env)
    init = subprocess.run(["nightshift", "init", "--goal", "print 1", "--yes"], cwd=ws, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert init.returncode == 0, init.stdout + init.stderr
    check = subprocess.run(["nightshift", "check"], cwd=ws, env=env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=600)
    assert "Traceback" not in check.stdout + check.stderr
    last = check.stdout.strip().splitlines()[-1]
    # a throwaway HOME has no Claude login: check runs every check and names that as a problem with its fix
    assert (check.returncode, last.startswith("ready:")) in ((0, True), (1, False)), check.stdout + check.stderr
    assert check.returncode == 0 or re.search(r"^FAIL\s+credentials\s.*export one", check.stdout, re.M), check.stdout


@pytest.mark.slow
@pytest.mark.timeout(2400)  # real installs from the registry: past the suite's 300 s
def test_the_readmes_other_install_line_uv_tool_install_works_too(tmp_path):
    """The quick start's alternative, `uv tool install .`: the command on PATH names the clone's commit, and `uv tool
    uninstall` takes it away."""
    _need("git")
    clone = _clean_clone(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home, UV_CACHE_DIR=str(Path.home() / ".cache" / "uv"))  # speed only, as pip's cache
    quick = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "uv tool install ." in quick and "uv tool uninstall nightshift-hpc" in (ROOT / "README.md").read_text()
    uv = _need("uv", env["PATH"])  # the test tools' (make test installs it beside pytest)
    got = subprocess.run([uv, "tool", "install", "."], cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    command = shutil.which("nightshift", path=env["PATH"])
    assert command and Path(command).resolve().is_relative_to(home.resolve()), command
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True,
                            check=True).stdout.strip()
    version = subprocess.run([command, "--version"], env=env, capture_output=True, text=True, cwd=home)
    assert version.returncode == 0 and commit in version.stdout, version.stdout + version.stderr
    gone = subprocess.run([uv, "tool", "uninstall", "nightshift-hpc"], env=env, capture_output=True, text=True)
    assert gone.returncode == 0 and not os.path.lexists(command), gone.stderr
