"""nightshift's own git executes nothing the repository names.

Every git process nightshift starts (GitPython's included) gets ``safe_env``: git's environment-variable config
(GIT_CONFIG_COUNT/KEY/VALUE, read after every config file, inherited by the git processes git itself starts) that
switches off hooks, fsmonitor, pagers, editors, signing and credential programs, and, for every filter, diff and
merge driver the effective configuration defines (the repository's, an included file's, the user's), its
commands. Diff-producing calls also take ``--no-ext-diff --no-textconv``, and the variables that would name a
program or another repository (GIT_EXTERNAL_DIFF, GIT_DIR, ...) are dropped from nightshift's own environment
(``scrub_environ``). Reading the configuration to find the drivers executes nothing (``git config --list``); the
result is kept while the config files it read are unchanged.

What is switched off is said at a run's start (``not_run``): a user's own hook or driver does not run while
nightshift commits; the agent cannot add one (the control files are read-only in its namespace and restored at
every stop: verify/git_controls.py).

May import: errors.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from nightshift.supervisor.errors import UserError

GIT_TIMEOUT = 120.0  # seconds for one git call of ours: a verdict never waits on git forever
HASHING = frozenset({"add", "hash-object", "update-index", "write-tree", "commit-tree"})  # calls that read file content
_LIBC: list = []  # libc, loaded at the first hashing call (not at import: every process imports this module)

# Settings whose value git runs as a program (or that make it run one), each set to what runs nothing.
FIXED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false"), ("core.pager", "cat"), ("core.editor", ":"),
    ("sequence.editor", ":"), ("core.askPass", ""), ("core.sshCommand", "false"), ("core.gitProxy", ""),
    ("credential.helper", ""), ("commit.gpgSign", "false"), ("tag.gpgSign", "false"), ("gpg.program", "false"),
    ("gpg.ssh.program", "false"), ("gpg.x509.program", "false"), ("log.showSignature", "false"),
    ("merge.verifySignatures", "false"), ("submodule.recurse", "false"), ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"), ("protocol.ext.allow", "never"), ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
# The same switches where git reads the environment before its config.
ENV: dict[str, str] = {"GIT_PAGER": "cat", "PAGER": "cat", "GIT_EDITOR": ":", "GIT_SEQUENCE_EDITOR": ":",
                       "GIT_TERMINAL_PROMPT": "0", "GIT_NO_REPLACE_OBJECTS": "1", "GIT_OPTIONAL_LOCKS": "0"}
DROPPED = ("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND",
           "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
           "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES")
NO_DIFF_PROGRAMS = ("--no-ext-diff", "--no-textconv")
DRIVER_KEY = re.compile(r"^(filter|diff|merge)\.(.+)\.(clean|smudge|process|required|textconv|command|driver)$",
                        re.S)
DRIVER_OFF = {"filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
              "diff": (("textconv", ""), ("command", ""), ("cachetextconv", "false")),
              "merge": (("driver", "false"),)}  # a merge driver that ran would be ours: `false` fails the merge

_drivers_seen: dict[tuple, list[tuple[str, str]]] = {}


class GitGuardError(UserError, OSError):
    """git could not be asked (a timeout, no git): the call is refused, never run unguarded."""


def _config_files(cwd: Path) -> list[Path]:
    """The config files git reads for ``cwd`` (enough to tell when its answer may have changed)."""
    home = Path(os.environ.get("HOME", "~")).expanduser()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    files = [Path("/etc/gitconfig"), home / ".gitconfig", xdg / "git" / "config"]
    if (cwd / ".git").is_file():  # a worktree's pointer (a folder's mtime moves with every index write)
        files.append(cwd / ".git")
    try:
        gitdir, common, _ = git_dirs(cwd)
    except OSError:
        return files
    return files + [common / "config", gitdir / "config.worktree"]


def _signature(cwd: Path) -> tuple:
    out = []
    for path in _config_files(cwd):
        try:
            st = os.stat(path)
            out.append((str(path), st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((str(path), None))
    return tuple(out)


def scrub_environ() -> None:
    """Drop from this process's environment what would make git run a program or work on another repository
    (GitPython starts git with os.environ plus its overrides: it cannot remove a variable)."""
    for key in [k for k in os.environ if k in DROPPED or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        os.environ.pop(key, None)


def _base_env(env: dict[str, str] | None = None) -> dict[str, str]:
    base = {k: v for k, v in (env if env is not None else os.environ).items() if k not in DROPPED
            and not k.startswith("GIT_CONFIG_KEY_") and not k.startswith("GIT_CONFIG_VALUE_")}
    base.update(ENV)
    return base


def _with_settings(env: dict[str, str], settings: list[tuple[str, str]]) -> dict[str, str]:
    env["GIT_CONFIG_COUNT"] = str(len(settings))
    for i, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


def drivers(cwd: Path) -> list[tuple[str, str]]:
    """(kind, name) of every filter, diff and merge driver the effective config of ``cwd`` defines."""
    cwd = Path(cwd)
    sig = _signature(cwd)
    if sig in _drivers_seen:
        return _drivers_seen[sig]
    env = _with_settings(_base_env(), list(FIXED))
    try:
        proc = subprocess.run(["git", "config", "--null", "--name-only", "--list"], cwd=cwd, env=env,
                              capture_output=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitGuardError(f"git config in {cwd} did not answer ({exc}); nightshift runs no git it cannot "
                            "guard: check the repository's .git/config and `git config --list`") from None
    found: dict[tuple[str, str], None] = {}
    keys = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    for key in keys:
        match = DRIVER_KEY.match(key)
        if match:
            found[(match.group(1), match.group(2))] = None
    result = sorted(found)
    if not any(k.lower().startswith(("include.", "includeif.")) for k in keys):  # an included file may change
        _drivers_seen[sig] = result                                              # unseen: asked again each time
    return result


def settings(cwd: Path) -> list[tuple[str, str]]:
    """Every key=value nightshift's git in ``cwd`` runs with."""
    out = list(FIXED)
    for kind, name in drivers(cwd):
        out += [(f"{kind}.{name}.{key}", value) for key, value in DRIVER_OFF[kind]]
    return out


def safe_env(cwd: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for any git process nightshift starts in the repository at ``cwd``."""
    return _with_settings(_base_env(env), settings(Path(cwd)))


def run_git(cwd: Path, *args: str, timeout: float = GIT_TIMEOUT, text: bool = True,
            check: bool = False, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """git ``args`` in ``cwd`` with the guard; a call that does not answer in time is ended (GitGuardError).
    ``env``: variables nightshift itself sets for this call (a private GIT_INDEX_FILE), over the guarded environment:
    they are ours, so kept where an inherited one of the same name is dropped."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, env={**safe_env(Path(cwd)), **(env or {})}, capture_output=True,
                              text=text, timeout=timeout, check=check, stdin=subprocess.DEVNULL,
                              preexec_fn=dies_with_us(args))
    except subprocess.TimeoutExpired:
        raise GitGuardError(f"`git {args[0]}` in {cwd} did not answer in {timeout:g}s and was ended") from None


def dies_with_us(argv) -> Callable[[], None] | None:
    """For a git call that hashes the workspace's files: a ``preexec_fn`` that has it die with this process, kill -9
    included (Linux's parent-death signal; a killed supervisor's `git add` of a giant hashed on for 50 minutes).
    None for the other calls: it needs fork instead of vfork (+2 ms a call), and they end in milliseconds."""
    if not HASHING.intersection(argv) or not sys.platform.startswith("linux"):
        return None
    if not _LIBC:
        import ctypes
        _LIBC.append(ctypes.CDLL(None, use_errno=True))  # this process's own libc: no library search
    libc, parent = _LIBC[0], os.getpid()

    def die_with_parent() -> None:  # in the child between fork and exec: no import, no lock
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        if os.getppid() != parent:  # the parent died before prctl took hold (under any subreaper): go now
            os._exit(1)
    return die_with_parent


def not_run(cwd: Path) -> list[str]:
    """The user's own git programs nightshift will not run in this repository (hooks, drivers, fsmonitor), named
    for the run's first lines; empty when there are none."""
    cwd = Path(cwd)
    out = [f"{kind} driver '{name}'" for kind, name in drivers(cwd)]
    env = _with_settings(_base_env(), [])
    for key in ("core.hooksPath", "core.fsmonitor"):
        proc = subprocess.run(["git", "config", "--get", key], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
        value = proc.stdout.strip()
        if value and not (key == "core.fsmonitor" and value.lower() in ("false", "0", "no", "off")):
            out.append(f"{key} = {value}")
    hooks = _hooks_dir(cwd)
    if hooks is not None and hooks.is_dir():
        out += [f"hook {p.name}" for p in sorted(hooks.iterdir())
                if p.is_file() and not p.name.endswith(".sample") and os.access(p, os.X_OK)]
    return out


def _hooks_dir(cwd: Path) -> Path | None:
    try:
        return git_dirs(cwd)[1] / "hooks"
    except OSError:
        return None


def git_dirs(workspace: Path) -> tuple[Path, Path, Path | None]:
    """(git dir, common dir, the `.git` pointer file of a worktree or None) of ``workspace``, as its files say now."""
    dotgit = Path(workspace) / ".git"
    gitdir, pointer = dotgit, None
    if dotgit.is_file() and not dotgit.is_symlink():
        line = dotgit.read_text(errors="replace").strip()
        if line.startswith("gitdir:"):
            gitdir, pointer = (Path(workspace) / line.split(":", 1)[1].strip()).resolve(), dotgit
    common = gitdir
    if (gitdir / "commondir").is_file():
        common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
    return gitdir, common, pointer


def control_paths(workspace: Path) -> list[Path]:
    """The repository's control files: what makes git run a program (config, hooks, attributes, grafts and excludes
    in info/, a worktree's config and `.git` pointer, commondir, alternates and shallow, a submodule's config and
    hooks). Read-only in the agent's
    namespace; kept as they were at the run's start (verify/git_controls.py)."""
    gitdir, common, pointer = git_dirs(workspace)
    # and what git reads as a pointer to other objects or another repository: commondir (the agent pointed it at a
    # copy of .git whose config set core.fsmonitor), alternates, shallow, a linked worktree's gitdir file
    out = [common / "config", common / "hooks", common / "info", gitdir / "config.worktree", gitdir / "commondir",
           gitdir / "gitdir", common / "commondir", common / "objects" / "info" / "alternates",
           common / "objects" / "info" / "http-alternates", common / "shallow"]
    if pointer is not None:
        out.insert(0, pointer)
    modules = common / "modules"
    if modules.is_dir() and not modules.is_symlink():
        for config in sorted(modules.glob("**/config"))[:64]:
            if (config.parent / "HEAD").exists():
                out += [config, config.parent / "hooks", config.parent / "info"]
    return list(dict.fromkeys(out))


@contextmanager
def cat_file_batch(argv: list[str], env: dict[str, str], shas: list[str], cwd: Path | None = None):
    """``git ... cat-file --batch`` (``argv``, the caller's guarded git) over ``shas``, its output read as a stream
    (a blob of gigabytes never sits in memory); the ids are fed from a thread so neither side waits on a full pipe.
    Shared by the verdict's tree and the attestation's --rerun checkout."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env)

    def feed() -> None:
        try:
            proc.stdin.write("".join(f"{sha}\n" for sha in shas).encode())
            proc.stdin.close()
        except OSError:
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        yield proc.stdout
    finally:
        proc.kill()
        proc.wait()
        feeder.join(timeout=5)
