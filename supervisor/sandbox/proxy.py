"""The model's API from a namespace without network (``[policy] network = false``): the only door out.

``outside SOCKET``: run by the turn's wrapper outside the namespace; listens on a unix socket in the turn's private
TMPDIR (bound in) and connects only to the model's API: the host of ANTHROPIC_BASE_URL (plain HTTP, forwarded as
is) or, for HTTPS, a CONNECT to that host (api.anthropic.com:443 when the variable is unset). Anything else is
refused with 403. ``inside SOCKET PORT``: run inside; listens on the namespace's own 127.0.0.1:PORT and carries each
connection to the socket. Claude Code is pointed at it with ANTHROPIC_BASE_URL (HTTP) or HTTPS_PROXY (HTTPS).
Both end with their parent (the wrapper, or the namespace).
"""
from __future__ import annotations

import asyncio
import os
import sys
from urllib.parse import urlsplit


def upstream() -> tuple[str, str, int]:
    """(scheme, host, port) of the model's API as the agent's environment names it."""
    url = urlsplit(os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com")
    scheme = url.scheme or "https"
    return scheme, url.hostname or "api.anthropic.com", url.port or (443 if scheme == "https" else 80)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


async def _join(r1, w1, r2, w2) -> None:
    await asyncio.gather(_pipe(r1, w2), _pipe(r2, w1))


async def _outside_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    scheme, host, port = upstream()
    try:
        first = await reader.readuntil(b"\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    if first.startswith(b"CONNECT "):
        target = first.split()[1].decode("latin-1") if len(first.split()) > 1 else ""
        want_host, _, want_port = target.rpartition(":")
        if want_host.strip("[]") != host or not want_port.isdigit() or int(want_port) != port:
            writer.write(b"HTTP/1.1 403 Forbidden\r\n\r\nnightshift: only the model's API is reachable\r\n")
            writer.close()
            return
        while await reader.readline() not in (b"\r\n", b"\n", b""):
            pass  # the CONNECT request's headers
        up_reader, up_writer = await asyncio.open_connection(host, port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    elif scheme == "http":
        up_reader, up_writer = await asyncio.open_connection(host, port)
        up_writer.write(first)
    else:
        writer.write(b"HTTP/1.1 403 Forbidden\r\n\r\nnightshift: only the model's API is reachable\r\n")
        writer.close()
        return
    await _join(reader, writer, up_reader, up_writer)


async def _inside_client(socket: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        up_reader, up_writer = await asyncio.open_unix_connection(socket)
    except OSError:
        writer.close()
        return
    await _join(reader, writer, up_reader, up_writer)


async def _orphan_watch() -> None:
    parent = os.getppid()
    while os.getppid() == parent:
        await asyncio.sleep(1.0)


async def _serve(argv: list[str]) -> None:
    if argv[0] == "outside":
        folder, name = os.path.split(argv[1])
        os.chdir(folder)  # a socket path is limited to ~108 bytes: bind by its short name
        server = await asyncio.start_unix_server(_outside_client, name)
        os.chmod(name, 0o600)
    else:
        socket = argv[1]
        server = await asyncio.start_server(lambda r, w: _inside_client(socket, r, w), "127.0.0.1", int(argv[2]))
        open("/tmp/.api.ready", "w").close()
    async with server:
        await _orphan_watch()


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("outside", "inside") or (argv[0] == "inside" and len(argv) < 3):
        print("usage: proxy outside SOCKET | proxy inside SOCKET PORT", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(argv))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
