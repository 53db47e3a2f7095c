"""A wait on the event loop with a bound, answered as True (done) or False (the bound came).

``asyncio.wait_for`` raises ``asyncio.TimeoutError`` at its bound, which is the builtin
``TimeoutError`` only from Python 3.11 on: on 3.10 (``requires-python``) an ``except
TimeoutError`` let it through, and the agent follower's loop ended at its first quiet
moment, the shutdown's bounded wait raised out of ``shutdown``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable


async def within(work: Awaitable[object], bound: float | None) -> bool:
    """Await ``work`` for ``bound`` seconds at most (None: no bound): whether it ended.
    At the bound ``work`` is cancelled, as ``asyncio.wait_for`` does (shield it to keep
    it running)."""
    try:
        await asyncio.wait_for(work, bound)
    except asyncio.TimeoutError:  # not the builtin TimeoutError on Python 3.10
        return False
    return True
