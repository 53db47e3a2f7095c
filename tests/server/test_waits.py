"""``server/waits.within``: a bounded wait on the event loop is True when the work ended and
False at the bound, on every Python the project supports. ``asyncio.wait_for``'s timeout is
the builtin ``TimeoutError`` only from 3.11: the follower's ``except TimeoutError`` let
3.10's ``asyncio.TimeoutError`` end its loop at its first quiet moment (the py310 suite
runs this file)."""

from __future__ import annotations

import asyncio

from turnback.server.waits import within


def test_the_bound_is_false_and_the_work_cancelled() -> None:
    async def main() -> tuple[bool, bool]:
        never = asyncio.ensure_future(asyncio.Event().wait())
        ended = await within(never, 0.01)
        await asyncio.sleep(0)  # let the cancellation land
        return ended, never.cancelled()

    assert asyncio.run(main()) == (False, True)


def test_work_that_ends_is_true_with_or_without_a_bound() -> None:
    async def main() -> tuple[bool, bool]:
        done = asyncio.Event()
        done.set()
        return await within(done.wait(), 5.0), await within(done.wait(), None)

    assert asyncio.run(main()) == (True, True)


def test_a_shielded_work_goes_on_after_the_bound() -> None:
    async def main() -> tuple[bool, bool, bool]:
        go = asyncio.Event()
        work = asyncio.ensure_future(go.wait())
        ended = await within(asyncio.shield(work), 0.01)
        go.set()
        await work
        return ended, work.cancelled(), work.result()

    assert asyncio.run(main()) == (False, False, True)
