"""Issue 47: the first hour as an ordinary user, as the README tells it, run as one. Root makes a user (useradd; a
dedicated one, its home emptied at each start, mode 700), and as that user, in a login shell (`runuser -l`-like:
Debian's ~/.profile puts ~/.local/bin on PATH where it exists), with the PATH such a user has (no /sbin, no pipx,
no uv): `git clone` of this checkout into the home, `make demo`, the README's install line for a user without pipx
or uv (`make install-user`), `nightshift --version`, and the README's five-minute tutorial as written (its blocks,
tests/test_readme_tutorial.py). Every line the user sees is checked for what must and must not be there.

The clone, the first `make demo`, the install and `--version` run once per module on the machine as it is (a module
fixture); then, per variant, the demo again (its venv made: only the run) and the tutorial. Each step runs through
`step(...)`, which takes an optional wrapper command put before `runuser` (a seccomp filter that fails
CLONE_NEWUSER as kernels without user namespaces do, a private mount namespace without bubblewrap): VARIANTS maps a
variant's name to its wrapper and what the demo's boundary line must then say.

Speed: the packages come from a wheel folder root builds once per pyproject.toml (from its own pip cache), handed to
the user's pip with PIP_FIND_LINKS (speed only: the same `make` targets install the same packages)."""
from __future__ import annotations

import hashlib
import os
import pwd
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.fixtures_core import require_tool
from tests.login_node import login_node_argv
from tests.test_readme_tutorial import README, tutorial_blocks

ROOT = Path(__file__).resolve().parent.parent
USER = "nsfirst47"
SHARED = Path("/var/tmp/nightshift-first-hour")  # outside /root (mode 700): the user can read it
USER_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"  # Debian's for a user: no /sbin


@dataclass
class Variant:
    """How the machine is made to look (``wrapper``: a command put before runuser, as root; empty: as it is) and
    what the user must then see: the demo's boundary line and its tools line (regexes), and ``allowed``: a regex of
    lines NEVER would catch that are the truth in this variant (e.g. "missing bubblewrap" where it is missing)."""
    wrapper: tuple[str, ...] = ()
    boundary: str = r"^boundary: on\b"
    tools: str = r"^tools: bubblewrap \d"
    allowed: str = r"(?!)"  # nothing
    done: str = r"VERIFIED DONE$"  # how the demo's last line ends: a weaker tier is named beside the verdict
    person: str = "; nothing needed a person"  # the report's count: a weaker boundary is the one thing that needs one
    extra_env: dict[str, str] = field(default_factory=dict)


# A login node without user namespaces (a seccomp filter fails CLONE_NEWUSER with ENOSPC, as kernels with
# user.max_user_namespaces = 0 do) and one without bubblewrap (hidden in a private mount namespace): the harness of
# tests/login_node.py, put before runuser as root. Both leave Landlock, and the demo names that tier first.
def _wrapper(**simulate) -> tuple[str, ...]:
    """The harness's prefix (as root; elsewhere the user fixture skips, and nothing is made at collection)."""
    return tuple(login_node_argv([], **simulate)) if os.getuid() == 0 else ("needs-root",)


WEAKER = r"^boundary: sandbox: landlock \(Landlock ABI \d"
PERSON_WEAKER = "; 1 event needed a person"  # the policy.sandbox event: the tier and what to ask the admins for
DONE_WEAKER = r"VERIFIED DONE, sandbox: landlock \(Landlock ABI \d+ and seccomp, no namespace\)$"
VARIANTS = {"as is": Variant(),
            "userns off": Variant(wrapper=_wrapper(userns="ENOSPC"), boundary=WEAKER, done=DONE_WEAKER,
                                  person=PERSON_WEAKER),
            "no bubblewrap": Variant(wrapper=_wrapper(userns=None, bwrap=False), boundary=WEAKER, done=DONE_WEAKER,
                                     person=PERSON_WEAKER,
                                     tools=r"^install-tools: missing bubblewrap\b",
                                     allowed=r"missing bubblewrap|no bubblewrap")}

# What must never be among the lines a user sees on a machine where everything needed is installed.
NEVER = re.compile(r"Traceback|missing bubblewrap|missing socat|libseccomp2|command not found|externally-managed|"
                   r"dubious ownership|Permission denied|No such file|^error:|^ERROR\b|^make: \*\*\*", re.I)


@pytest.fixture(scope="module")
def user():
    if os.getuid() != 0:
        pytest.skip("making a user needs root (CI runs as root)")
    for tool in ("useradd", "runuser", "git", "make", "tmux", "bwrap"):
        require_tool(tool)
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/bash", USER], check=True)
        entry = pwd.getpwnam(USER)
    home = Path(entry.pw_dir)
    _kill_leftovers(entry)
    for child in home.iterdir():  # a fresh home each time (the skeleton's dot files back), mode 700
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    for skel in Path("/etc/skel").iterdir():
        if skel.is_file():
            shutil.copy(skel, home / skel.name)
    subprocess.run(["chown", "-R", f"{USER}:{USER}", str(home)], check=True)
    home.chmod(0o700)
    yield entry
    _kill_leftovers(entry)


def _kill_leftovers(entry) -> None:
    """The runs' tmux servers the tutorial and the demo started, each by its private socket, as the user."""
    sockets = Path(f"/tmp/tmux-{entry.pw_uid}")
    for sock in sockets.glob("ns-*") if sockets.is_dir() else []:
        subprocess.run(["runuser", "-u", USER, "--", "tmux", "-L", sock.name, "kill-server"], capture_output=True)


@pytest.fixture(scope="module")
def shared(user):
    """A bare clone of this checkout's HEAD (what the user downloads) and a wheel folder, readable by the user."""
    SHARED.mkdir(mode=0o755, exist_ok=True)
    SHARED.chmod(0o755)
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    wheels = SHARED / f"wheels-{hashlib.sha256(pyproject).hexdigest()[:16]}"
    if not wheels.is_dir():  # once per pyproject.toml: from root's pip cache, or the index
        meta = tomllib.loads(pyproject.decode())
        wanted = [*meta["build-system"]["requires"], *meta["project"]["dependencies"], "pip", "wheel"]
        partial = SHARED / "wheels.partial"
        shutil.rmtree(partial, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--prefer-binary", "--wheel-dir", str(partial),
                        *wanted], check=True, timeout=1200)
        partial.rename(wheels)
    bare = SHARED / "nightshift.git"
    shutil.rmtree(bare, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(ROOT), str(bare)], check=True)
    subprocess.run(["chown", "-R", f"{USER}:{USER}", str(bare)], check=True)  # the user's own download
    subprocess.run(["chmod", "-R", "a+rX", str(wheels)], check=True)
    return bare, wheels


def step(user, script: str, variant: Variant, wheels: Path, cwd: str = "~", timeout: float = 900):
    """``script`` in a login shell of the user's (bash -l), from ``cwd``, through the variant's wrapper."""
    env = {"HOME": user.pw_dir, "USER": USER, "LOGNAME": USER, "SHELL": "/bin/bash", "LANG": "C.UTF-8",
           "PATH": USER_PATH, "TERM": "dumb", "PIP_FIND_LINKS": str(wheels), **variant.extra_env}
    argv = [*variant.wrapper, shutil.which("runuser"), "-u", USER, "--", "env", "-i",
            *(f"{k}={v}" for k, v in env.items()), "bash", "-l", "-c", f"cd {cwd} && {script}"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd="/", stdin=subprocess.DEVNULL)
    done.seconds = time.monotonic() - started
    return done


def seen(done) -> list[str]:
    return (done.stdout + done.stderr).splitlines()


def no_bad_line(done, what: str, variant: Variant = Variant()) -> None:
    bad = [line for line in seen(done) if NEVER.search(line) and not re.search(variant.allowed, line)]
    assert not bad, f"{what}: lines a user should not see:\n" + "\n".join(bad)


def readme_user_install() -> str:
    """The README's install line for a user without pipx or uv (in its quick start)."""
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"Without pipx or uv.*?`(make install-user)`", quick, re.S)
    assert found, "the README's quick start names no install line for a user without pipx or uv"
    return found.group(1)


def readme_pytest_venv() -> str:
    """The tutorial's line for pytest where `python3 -m pytest` is not there."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    found = re.search(r"`(python3 -m venv \S+ && \. \S+ && pip install pytest)`", text)
    assert found, "the tutorial says nothing of how to get pytest for python3"
    return found.group(1)


@pytest.fixture(scope="module")
def installed(user, shared):
    """As the user on the machine as it is: the clone, `make demo`, the README's install line, `--version`. Once
    per module: the variants below run the demo again (its venv made) and the tutorial through their wrapper."""
    bare, wheels = shared
    as_is = VARIANTS["as is"]
    seconds = {}
    # what the user has: no pipx or uv, no /sbin (ldconfig), a home of mode 700
    there = step(user, "command -v pipx uv ldconfig; stat -c %a ~", as_is, wheels)
    assert there.stdout.splitlines() == ["700"], there.stdout  # none of pipx, uv, ldconfig printed
    got = step(user, f"git clone -q {bare} nightshift", as_is, wheels)
    assert got.returncode == 0, got.stderr
    no_bad_line(got, "git clone")
    demo = step(user, "make demo", as_is, wheels, cwd="~/nightshift")
    seconds["make demo"] = demo.seconds
    install = readme_user_install()
    put = step(user, install, as_is, wheels, cwd="~/nightshift")
    seconds[install] = put.seconds
    version = step(user, "command -v nightshift && nightshift --version", as_is, wheels)
    return {"demo": demo, "install": (install, put), "version": version, "seconds": seconds, "wheels": wheels}


def check_demo(demo, variant: Variant) -> None:
    assert demo.returncode == 0, "\n".join(seen(demo)[-60:])
    no_bad_line(demo, "make demo", variant)
    lines = seen(demo)
    assert any(re.search(variant.tools, line) for line in lines), lines[:20]
    assert any(re.search(variant.boundary, line) for line in lines), "\n".join(lines[:30])
    assert any(line.startswith("demo finished in") and re.search(variant.done, line) for line in lines), lines
    last = demo.stdout.splitlines()[-1]  # (what install-tools says of a missing part is on stderr)
    assert last.startswith("nightshift is in .venv/bin/.") and "make install-user" in last, last


@pytest.mark.timeout(2400)  # installs: past the suite's 300 s
def test_make_demo_and_the_install_line_work_as_an_ordinary_user(user, installed):
    check_demo(installed["demo"], VARIANTS["as is"])
    install, put = installed["install"]
    assert put.returncode == 0, "\n".join(seen(put)[-40:])
    no_bad_line(put, install)
    link = Path(user.pw_dir) / ".local" / "bin" / "nightshift"
    assert link.is_symlink() and os.access(link, os.X_OK), link
    assert Path(os.readlink(link)).is_relative_to(Path(user.pw_dir) / ".local" / "share" / "nightshift")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    version = installed["version"]
    assert version.returncode == 0, version.stderr
    where, said = version.stdout.strip().splitlines()[:2]
    assert where == str(link), where  # a new login shell has ~/.local/bin on PATH
    assert said.startswith("nightshift") and commit in said, said
    print("first hour, seconds:", {k: round(v, 1) for k, v in installed["seconds"].items()})


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_demo_and_the_tutorial_as_an_ordinary_user(user, installed, name):
    """The demo (again, through the variant's wrapper: its boundary line) and the README's tutorial as written."""
    variant, wheels = VARIANTS[name], installed["wheels"]
    started = time.monotonic()
    demo = installed["demo"] if not variant.wrapper else step(user, "make demo", variant, wheels, cwd="~/nightshift")
    check_demo(demo, variant)
    # git with a name, pytest for python3 as the README says to get it where it is not there
    setup = "git config --global user.name 'A Scientist' && git config --global user.email scientist@example.org"
    have = step(user, "python3 -m pytest --version", variant, wheels)
    before = "true" if have.returncode == 0 else readme_pytest_venv()
    script = Path(user.pw_dir) / "tutorial.sh"
    script.write_text("set -euo pipefail\n" + "\n".join(tutorial_blocks()))
    shutil.chown(script, USER, USER)
    folder = "t-" + re.sub(r"\W+", "-", name)
    tutorial = step(user, f"{setup} && {before} && rm -rf {folder} && mkdir {folder} && cd {folder} && "
                          "bash ~/tutorial.sh", variant, wheels)
    out = tutorial.stdout
    assert tutorial.returncode == 0, f"the tutorial failed:\n{out[-3000:]}\n{tutorial.stderr[-3000:]}"
    no_bad_line(tutorial, "the tutorial", variant)
    assert "ready: nothing found that would stop a run" in out
    assert re.search(r"^run \S+: verified done \(exit 0\)", out, re.M), out[-2000:]
    assert "VERIFIED DONE at commit" in out and variant.person in out, out[-2000:]
    if variant.wrapper:  # the report's first line names the tier beside the verdict
        assert re.search(r"VERIFIED DONE at commit \w+, sandbox: landlock \(weaker than full\)", out), out[-2000:]
    assert 'METHOD = "rk4"' in (Path(user.pw_dir) / folder / "decay" / "solver.py").read_text()
    print(f"first hour, {name}: demo and tutorial in {time.monotonic() - started:.1f} s")
