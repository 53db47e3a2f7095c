"""The server's stdin as bytes: every line and every body read in bounded memory.

A pipe or a socket is read on the event loop (pygls reads stdin with a thread per line);
anything else (a regular file, a terminal, ``/dev/null``, Windows' stdin) on a thread. Both
ways hold the same bounds: a line past ``LINE_LIMIT`` is dropped, not held whole (pygls's
thread reader held it all: a 512 MB line, 512 MB of memory), and a body the framing refuses
is skipped ``CHUNK`` bytes at a time (``framing.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from typing import BinaryIO

LINE_LIMIT = 2**24  # longest header line held in memory
CHUNK = 2**20  # what a skip holds at once

log = logging.getLogger("turnback_transport")


class StdinReader:
    """Lines, exact reads and skips of stdin, for the framing's loop."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._stdin = stdin
        self._stream: asyncio.StreamReader | None = None
        self._threaded = False

    async def _reader(self) -> asyncio.StreamReader | None:
        """The stream a pipe or socket is read through; None: read on a thread."""
        if self._stream is not None or self._threaded:
            return self._stream
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
        try:
            mode = os.fstat(self._stdin.fileno()).st_mode
        except (OSError, ValueError, AttributeError):
            mode = 0
        # POSIX pipes and sockets only: a file, /dev/null or a terminal cannot be polled,
        # and Windows' event loop needs overlapped handles, which stdin is not.
        if os.name != "posix" or not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            self._threaded = True
            return None
        try:
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(stream, loop=loop), self._stdin
            )
        except (OSError, ValueError):  # no pipe support: read on a thread
            self._threaded = True
            return None
        self._stream = stream
        return stream

    async def readline(self) -> bytes | None:
        """The next line with its ``\\n``; b"" at the end; None for a line longer than
        ``LINE_LIMIT``, dropped (from a pipe its last piece may come as the next line)."""
        stream = await self._reader()
        try:
            if stream is None:
                return await asyncio.get_running_loop().run_in_executor(
                    None, _bounded_line, self._stdin)
            return await stream.readline()
        except ValueError:
            # past the stream's limit: the stream has dropped what it held
            return None
        except OSError as exc:
            return _failed(exc)

    async def readexactly(self, n: int) -> bytes:
        """``n`` bytes, fewer at the end of stdin (the framing bounds ``n``)."""
        return await self._read(n, exactly=True)

    async def skip(self, n: int) -> int:
        """Read and drop ``n`` bytes, ``CHUNK`` at a time; how many there were."""
        left = n
        while left > 0:
            got = await self._read(min(left, CHUNK))
            if not got:
                break
            left -= len(got)
        return n - left

    async def _read(self, n: int, exactly: bool = False) -> bytes:
        """At most ``n`` bytes as they come (``exactly``: ``n``, fewer only at the end);
        b"" at the end of stdin."""
        stream = await self._reader()
        try:
            if stream is None:
                return await asyncio.get_running_loop().run_in_executor(
                    None, self._stdin.read, n)
            return await (stream.readexactly(n) if exactly else stream.read(n))
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except OSError as exc:
            return _failed(exc)


def _failed(exc: OSError) -> bytes:
    """A read that failed (a terminal hung up: EIO; a socket reset) is stdin's end: the
    server stops as when a pipe closes, not with a traceback and exit code 1."""
    log.warning("reading stdin failed (%s); taking it as its end", exc)
    return b""


def _bounded_line(f: BinaryIO) -> bytes | None:
    """A thread's ``readline`` that holds no more than ``LINE_LIMIT`` + 1 bytes."""
    line = f.readline(LINE_LIMIT + 1)
    if len(line) <= LINE_LIMIT or line.endswith(b"\n"):
        return line
    while True:  # drop the rest of the line, a chunk at a time
        rest = f.readline(CHUNK)
        if not rest or rest.endswith(b"\n"):
            return None
