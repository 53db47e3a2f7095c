"""The store's times (UTC, ISO 8601) as the CLI prints them: on the local clock with its
zone named, "2026-11-29 07:27:12 UTC+1", as the editor's tooltips say them (its
``format.ts``). They were the UTC digits with no mark: an hour or more off the clock beside
them for most people, with nothing saying so."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo

from ..fs.paths import one_line


def zone_name(offset: timedelta) -> str:
    """"UTC", "UTC+1", "UTC-5:30": the editor's ``zoneName``."""
    minutes = round(offset.total_seconds() / 60)
    if minutes == 0:
        return "UTC"
    sign = "+" if minutes > 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def _parse(ts: str) -> datetime | None:
    """A store time, or None when it is none (store text: anything may be there)."""
    try:
        t = datetime.fromisoformat(ts[:64].replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def local_time(ts: str, zone: tzinfo | None = None) -> str:
    """``ts`` on the local clock (``zone`` for tests) with the zone named; text that is
    no time, shown as it is (one line, 40 characters)."""
    t = _parse(ts)
    if t is None:
        return one_line(ts[:40])
    try:
        here = t.astimezone(zone)
    except (OverflowError, ValueError, OSError):  # a year the platform cannot place
        return one_line(ts[:40])
    offset = here.utcoffset() or timedelta(0)
    return f"{here:%Y-%m-%d %H:%M:%S} {zone_name(offset)}"


def local_clock(ts: str, zone: tzinfo | None = None) -> str:
    """Only the clock of :func:`local_time` ("07:27:12"), for rows of one session."""
    t = _parse(ts)
    if t is None:
        return one_line(ts[11:19])
    try:
        return f"{t.astimezone(zone):%H:%M:%S}"
    except (OverflowError, ValueError, OSError):
        return one_line(ts[11:19])
