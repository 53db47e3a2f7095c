"""Waiting for a descriptor to be ready, with ``poll``: ``select`` refuses any descriptor
numbered 1,024 or more (``ValueError: filedescriptor out of range``), which a long-lived
server or a process holding many stores reaches; then the agents' watcher fell back to
re-reads and the CLI's early check was given up. Where ``poll`` is missing (Windows, where
neither caller runs), ``select`` as before."""

from __future__ import annotations


def readable(fds: list[int], timeout: float | None) -> set[int]:
    """Those of ``fds`` readable (or closed at the other end) within ``timeout`` seconds
    (None: no limit); empty when the time ran out."""
    import select

    if not hasattr(select, "poll"):
        return set(select.select(fds, [], [], timeout)[0])
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN | select.POLLPRI)
    return {fd for fd, _events in poller.poll(None if timeout is None else _ms(timeout))}


def writable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` can be written within ``timeout`` seconds (a reader that left counts:
    the write then fails, as it should)."""
    import select

    if not hasattr(select, "poll"):
        return bool(select.select([], [fd], [], timeout)[1])
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return bool(poller.poll(_ms(timeout)))


def _ms(timeout: float) -> int:
    """``timeout`` seconds as poll's whole milliseconds, rounded up (never early)."""
    return max(0, int(timeout * 1000 + 0.999))
