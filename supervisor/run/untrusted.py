"""Reading the workspace as a stranger's input: a file the agent wrote is opened only if it is a regular file
reached without leaving the workspace.

Every process of nightshift outside the agent's namespace that reads a workspace file (the plan, the lab notes, a
test report, a candidate, a protected file, anything quoted to the judge, the report or a push-back) goes through
``open_beneath``: the path is walked one component at a time from a descriptor of the workspace, each step opened
with O_NOFOLLOW, so a symlink is followed only where its target stays inside the workspace (a link out is refused,
not read), and the last step must be a regular file (a FIFO, socket or device is refused before it is opened, and
O_NONBLOCK keeps a FIFO swapped in at the last moment from blocking). Refusals are ``Untrusted`` errors whose text is
the finding ("CHANGELOG.md is a symlink out of the workspace (to /home/u/.ssh/id_rsa): not read").
"""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path, PosixPath
from typing import Iterator

MAX_LINKS = 40
KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
         stat.S_IFBLK: "a block device", stat.S_IFDIR: "a folder"}


def kind_of(mode: int) -> str:
    """What a file of ``mode`` (an lstat's) is, in words, for one that is not a regular file."""
    return "a symlink" if stat.S_ISLNK(mode) else KINDS.get(stat.S_IFMT(mode), "not a regular file")


class Untrusted(OSError):
    """A workspace path nightshift will not read; str() is the finding, naming the path and why."""


class DanglingLink(Untrusted, FileNotFoundError):
    """A symlink inside the workspace whose target is missing: missing to a reader that only asks whether the
    file is there (it is a FileNotFoundError), and a finding that names the link to one that catches Untrusted."""


def _rel(root: Path, path: Path) -> str:
    path = Path(path)
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.relative_to(root))
    except ValueError:
        real = os.path.realpath(root)
        try:
            return str(path.relative_to(real))
        except ValueError:
            raise Untrusted(f"{path} is not inside the workspace {root}: not read") from None


def open_beneath(root: Path, path: Path | str, flags: int = os.O_RDONLY) -> int:
    """A descriptor of ``path`` (relative to ``root`` or absolute under it), opened only as described above.
    FileNotFoundError where it does not exist; Untrusted where it may not be read."""
    root = Path(root)
    shown = _rel(root, Path(path))
    real_root = os.path.realpath(root)
    fds = [os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    parts, hops, link = [p for p in shown.split("/") if p not in ("", ".")], 0, ""
    try:
        while parts:
            name = parts.pop(0)
            if name == "..":
                if len(fds) == 1:
                    how = f"is a symlink out of the workspace (to {link})" if link else "leads out of the workspace"
                    raise Untrusted(f"{shown} {how}: not read")
                os.close(fds.pop())
                continue
            try:
                st = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
            except FileNotFoundError:
                if hops:
                    raise DanglingLink(f"{shown} is a symlink to a missing target ({link}): not read") from None
                raise
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                target = link = os.readlink(name, dir_fd=fds[-1])
                if hops > MAX_LINKS:
                    raise Untrusted(f"{shown} goes through more than {MAX_LINKS} symlinks: not read")
                if target.startswith("/"):
                    inside = os.path.normpath(target)
                    if inside != real_root and not inside.startswith(real_root.rstrip("/") + "/"):
                        raise Untrusted(f"{shown} is a symlink out of the workspace (to {target}): not read")
                    while len(fds) > 1:
                        os.close(fds.pop())
                    target = os.path.relpath(inside, real_root)
                parts = [p for p in target.split("/") if p not in ("", ".")] + parts
                continue
            if parts:  # a folder on the way
                if not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(f"{shown}: {name} is not a folder")
                fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                   dir_fd=fds[-1]))
                continue
            if not stat.S_ISREG(st.st_mode):
                raise Untrusted(f"{shown} is {KINDS.get(stat.S_IFMT(st.st_mode), 'not a regular file')}, "
                                "not a regular file: not read")
            fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fds[-1])
            now = os.fstat(fd)
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                os.close(fd)
                raise Untrusted(f"{shown} was replaced while it was opened: not read")
            os.set_blocking(fd, True)
            return fd
        raise Untrusted(f"{shown} is the workspace itself, not a file: not read")
    finally:
        for fd in fds:
            os.close(fd)


def read_bytes(root: Path, path: Path | str, limit: int | None = None) -> bytes:
    """The file's bytes (at most ``limit``), read as ``open_beneath`` allows."""
    with os.fdopen(open_beneath(root, path), "rb") as fh:
        return fh.read() if limit is None else fh.read(limit)


def read_text(root: Path, path: Path | str, limit: int | None = None, errors: str = "replace") -> str:
    return read_bytes(root, path, limit).decode("utf-8", errors)


def is_file(root: Path, path: Path | str) -> bool:
    """A regular file nightshift may read (a missing, linked-out or special one is not)."""
    try:
        os.close(open_beneath(root, path))
        return True
    except OSError:
        return False


class PinnedPath(PosixPath):
    """A workspace path that names one file already opened: it prints, and has a name and suffix, as the path the
    user wrote, while every open of it (``os.fspath``: numpy, h5py, netCDF4, pyarrow, ``open``) goes to
    ``/proc/self/fd/N``, the very file ``open_beneath`` checked. A link swapped in after the check is never read.
    A path derived from it (``.parent``) is a plain path again."""

    _opened: str | None = None

    def __fspath__(self) -> str:
        return self._opened or str(self)


@contextmanager
def pinned(root: Path, path: Path | str) -> Iterator[PinnedPath]:
    """``path`` opened as ``open_beneath`` allows, pinned for the length of the ``with`` (for readers that take a
    path, such as the oracle's); raises as ``open_beneath`` does."""
    fd = open_beneath(root, path)
    try:
        found = PinnedPath(path if Path(path).is_absolute() else Path(root) / path)
        found._opened = f"/proc/self/fd/{fd}"
        yield found
    finally:
        os.close(fd)


def write_beneath(root: Path, path: Path | str, data: bytes) -> None:
    """Put ``data`` back at ``path`` under ``root`` without following a link: a symlink or other non-folder the
    agent put where a folder was is removed first (a folder made again), and so is a link, FIFO or device at the
    path itself. A folder there is not deleted (it may hold the agent's work): Untrusted, named. For restoring
    what the agent may not change."""
    rel = _rel(Path(root), Path(path))
    here = Path(os.path.realpath(root))
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise Untrusted(f"{rel} is not a file inside the workspace: not written")
    for name in parts[:-1]:
        here = here / name
        st = _lstat(here)
        if st is not None and not stat.S_ISDIR(st.st_mode):
            os.unlink(here)
            st = None
        if st is None:
            here.mkdir(mode=0o755)
    here = here / parts[-1]
    st = _lstat(here)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise Untrusted(f"{rel} is a folder now, not a file: not restored (move it away to get the file back)")
    if st is not None and not stat.S_ISREG(st.st_mode):
        os.unlink(here)
    fd = os.open(here, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def read_leaf(path: Path, limit: int | None = None) -> bytes:
    """A file whose folder is already trusted (a path git listed): its last step is not followed if it is a
    link, and only a regular file is read."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Untrusted(f"{path} is not a regular file: not read")
        return fh.read() if limit is None else fh.read(limit)
