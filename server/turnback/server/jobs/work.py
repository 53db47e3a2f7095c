"""Blocking store work, off the event loop.

Reads (listing sessions, reading a session, diffs) and writes (checkpoint,
rewind, import, gc) run on separate thread pools, so a minute-long first
checkpoint never delays ``turnback/sessions``. Writes of one folder are also
serialized by that folder's lock (see ``folders.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

READ_WORKERS = 4
WRITE_WORKERS = 2


class Pools:
    def __init__(self) -> None:
        self.reads = ThreadPoolExecutor(READ_WORKERS, thread_name_prefix="turnback-read")
        self.writes = ThreadPoolExecutor(WRITE_WORKERS, thread_name_prefix="turnback-write")

    def shutdown(self) -> None:
        self.reads.shutdown(wait=False, cancel_futures=True)
        self.writes.shutdown(wait=False, cancel_futures=True)


async def run_blocking(
    pool: ThreadPoolExecutor,
    fn: Callable[[], T],
    cancel: threading.Event | None = None,
) -> T:
    """Run ``fn`` on ``pool``; if the request is cancelled, stop it and wait for it.

    Waiting matters: the caller may hold the folder's write lock, and the next
    write must not start while this one still runs on its thread.
    """
    fut = asyncio.get_running_loop().run_in_executor(pool, fn)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        if cancel is not None:
            cancel.set()
        with contextlib.suppress(BaseException):
            await fut
        raise
