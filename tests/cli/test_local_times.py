"""The CLI prints the store's UTC times on the local clock with the zone named, as the
editor's tooltips do (cli/times.py)."""

from __future__ import annotations

import re
from datetime import timedelta, timezone
from pathlib import Path

from turnback.cli.times import local_clock, local_time, zone_name
from wsutil import cli_env, run_cli

PLUS_5_30 = timezone(timedelta(hours=5, minutes=30))


def test_a_store_time_on_a_given_clock_names_its_zone() -> None:
    assert local_time("2026-11-29T06:27:12.123Z", timezone.utc) == "2026-11-29 06:27:12 UTC"
    assert local_time("2026-11-29T06:27:12Z", PLUS_5_30) == "2026-11-29 11:57:12 UTC+5:30"
    assert local_time("2026-11-29T06:27:12+00:00", timezone(-timedelta(hours=5))) == \
        "2026-11-29 01:27:12 UTC-5"
    assert local_clock("2026-11-29T23:59:00Z", timezone(timedelta(hours=1))) == "00:59:00"
    assert zone_name(timedelta(0)) == "UTC"


def test_text_that_is_no_time_is_shown_as_it_is_on_one_line() -> None:
    assert local_time("yesterday\nnoon") == "yesterday\\nnoon"  # one_line marks it
    assert local_time("9" * 500) == "9" * 40
    assert local_time("") == ""
    assert local_time("9999-12-31T23:59:59Z", PLUS_5_30) == "9999-12-31T23:59:59Z"


def test_checkpoints_log_and_sessions_print_local_times_with_the_zone(ws: Path) -> None:
    env = {**cli_env(), "TZ": "IST-5:30"}  # POSIX: UTC+5:30, no zone files needed
    (ws / "f.txt").write_text("one\n")
    run_cli(ws, "init", env=env)
    good = run_cli(ws, "checkpoint", "-m", "one", env=env).stdout.decode().split()[0]
    (ws / "f.txt").write_text("two\n")
    run_cli(ws, "rewind", good, env=env)
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+5:30"
    for verb in (("checkpoints",), ("log",), ("session", "list")):
        rows = run_cli(ws, *verb, env=env).stdout.decode().splitlines()
        assert rows and re.search(stamp, rows[0]), (verb, rows)
        assert not re.search(r"\d\dT\d\d:", "\n".join(rows)), (verb, rows)
