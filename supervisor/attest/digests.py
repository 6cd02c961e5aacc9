"""sha256 of files, streamed (a reference may be gigabytes) and read without following any link: a path is
opened one component at a time from its root with O_NOFOLLOW, so a workspace that swapped a file or a folder for a
symlink reads as "a link", never as the file it points to.
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

CHUNK = 1 << 20


class LinkRefused(OSError):
    """A path component is a symbolic link (or not a plain file where one was expected)."""


def open_no_follow(root: Path, relative: str) -> int:
    """A read-only fd of ``root/relative`` reached without following links; ``relative`` must stay under root."""
    parts = [p for p in Path(relative).parts if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts) or Path(relative).is_absolute():
        raise LinkRefused(f"{relative} is not a path inside {root}")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (40, 20):  # ELOOP, ENOTDIR: a link (or a file) where a folder should be
                    raise LinkRefused(f"{relative}: {part} is a link or not a folder") from None
                raise
            os.close(fd)
            fd = nxt
        try:
            # O_NONBLOCK: a FIFO swapped in for a file never holds verify-result (refused below by its type)
            leaf = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        except OSError as exc:
            if exc.errno == 40:
                raise LinkRefused(f"{relative} is a symbolic link") from None
            raise
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(leaf).st_mode):
        os.close(leaf)
        raise LinkRefused(f"{relative} is not a regular file")
    os.set_blocking(leaf, True)
    return leaf


def sha256_fd(fd: int) -> tuple[str, int]:
    """(hex digest, size) of an open file, read in 1 MiB chunks; the fd is closed."""
    digest, size = hashlib.sha256(), 0
    with os.fdopen(fd, "rb", buffering=0) as fh:
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        while True:
            n = fh.readinto(buf)
            if not n:
                break
            digest.update(view[:n])
            size += n
    return digest.hexdigest(), size


def sha256_under(root: Path, relative: str) -> tuple[str, int]:
    """(digest, size) of a file inside ``root`` (a workspace, a fresh tree), links refused."""
    return sha256_fd(open_no_follow(Path(root), relative))


def sha256_path(path: Path) -> tuple[str, int]:
    """(digest, size) of a file given by an absolute path that nightshift itself chose (its private stores, a
    folder the user named); the last component must not be a link."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LinkRefused(f"{path} is not a regular file")
    return sha256_fd(fd)


def sha256_prefix(path: Path, length: int) -> str | None:
    """Digest of the first ``length`` bytes of an append-only file (the event log), None when it is shorter."""
    digest, left = hashlib.sha256(), length
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        while left:
            chunk = fh.read(min(CHUNK, left))
            if not chunk:
                return None
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digests_under(pairs: list[tuple[Path, str]]) -> dict[tuple[Path, str], str | OSError]:
    """sha256 of many files inside their roots at once (hashlib releases the GIL on large reads: a core per file),
    each a digest or the OSError that stopped it (a missing file, a link)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(pair: tuple[Path, str]) -> str | OSError:
        try:
            return sha256_under(*pair)[0]
        except OSError as exc:
            return exc

    unique = list(dict.fromkeys(pairs))
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        return dict(zip(unique, pool.map(one, unique)))
