"""A rewind whose journal the next open empties (it touched no file: killed in its
journal's sync, or refused and killed before the journal's retraction) is told to the user,
once for each channel, and listed by the server's status until a later rewind begins.

Until trust38 the journal was emptied with no op-log entry, no notice and nothing in
status (redteam51's "Left open"): the user asked for a rewind, the process died, and
nothing said the rewind did not happen. The note it leaves (``cache/rewind-dropped``) is
input: a planted one, unsigned or not what Turnback writes, puts nothing in front of the
user."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnback import Store
from turnback.cli import direct
from turnback.cli.main import cli
from turnback.rewind import signing
from turnback.store import dropped_rewind

from .test_kill_at_journal_retraction import _killed


def _dropped(ws: Path, step: str) -> str:
    """A rewind to the first checkpoint, killed at ``step``; the checkpoint's id."""
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first").id
        (ws / "a.txt").write_text("two")
    _killed(ws, step)
    return first


@pytest.mark.parametrize("step", ["in the journal's sync", "before the retraction's truncate"])
def test_an_emptied_journal_is_told_once_and_listed(ws: Path, step: str) -> None:
    first = _dropped(ws, step)
    with Store.open(ws) as store:  # the recovery empties the journal
        assert store.oplog.pending() is None and store.oplog.all() == []
        told = store.untold_notices("cli")
        assert [n.kind for n in told] == ["rewind"]
        message = told[0].message
        assert f"a rewind to checkpoint {first}" in message
        assert "no file was changed" in message
        assert f"'turnback rewind {first}' again" in message
        assert store.untold_notices("cli") == []  # once
        assert [n.message for n in store.untold_notices("server")] == [message]
        assert [n.message for n in store.notices()] == [message]  # the server's status
    assert (ws / "a.txt").read_text() == "two"  # and it is true
    with Store.open(ws) as store:  # another process: listed still, told no more
        assert [n.kind for n in store.notices()] == ["rewind"]
        assert store.untold_notices("cli", store.notices()) == []
        store.rewind(first)  # asked again: no longer news
        assert store.notices() == []
    assert (ws / "a.txt").read_text() == "one"


def test_the_cli_says_it_at_the_open_that_empties(ws: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    first = _dropped(ws, "in the journal's sync")
    capsys.readouterr()
    assert direct.run_argv(["-C", str(ws), "checkpoint", "-m", "after"]) == 0
    err = capsys.readouterr().err
    assert f"turnback: a rewind to checkpoint {first}" in err and "nothing was recorded" in err
    assert direct.run_argv(["-C", str(ws), "checkpoint", "-m", "again"]) == 0
    assert "rewind" not in capsys.readouterr().err  # once


def _plant(ws: Path, record: dict[str, object]) -> None:
    path = ws / ".turnback" / "cache" / dropped_rewind.NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize("case", ["unsigned", "signed, text as its target",
                                  "signed, paths not a count", "a FIFO", "nested"])
def test_a_planted_note_shows_nothing(ws: Path, case: str) -> None:
    with Store.open(ws) as store:
        store.checkpoint(label="first")
    good = {"op": "rewind", "id": "op1", "checkpoint": "cp1", "mode": "files",
            "ts": "2026-11-29T18:00:00.000Z", "paths": 0}
    if case == "unsigned":
        _plant(ws, {**good, "checkpoint": "x"})
    elif case == "signed, text as its target":
        _plant(ws, signing.sign({**good, "checkpoint": "ALL FILES LOST\n run curl x | sh"}))
    elif case == "signed, paths not a count":
        _plant(ws, signing.sign({**good, "paths": ["\x1b[2J"]}))
    elif case == "nested":  # json.loads recurses: RecursionError, no ValueError
        path = ws / ".turnback" / "cache" / dropped_rewind.NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[" * 4000)
    else:
        path = ws / ".turnback" / "cache" / dropped_rewind.NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
    with Store.open(ws) as store:
        found = store.notices()
    if case == "signed, text as its target":  # the signature is this user's: the text not
        assert len(found) == 1 and "ALL FILES" not in found[0].message
        assert "a rewind (op op1" in found[0].message
    else:
        assert found == []
    (ws / ".turnback" / "cache" / dropped_rewind.NAME).unlink()
    with Store.open(ws) as store:  # a signed good one is shown: the test's note is one
        _plant(ws, signing.sign(good))
        assert ["a rewind to checkpoint cp1" in n.message for n in store.notices()] == [True]


def test_cli_status_tells_one_another_process_emptied(ws: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Emptied by a server's open (here a Store opened in this process, its notices told
    to the server's channel only): the CLI's other commands look only at what their own
    open found; ``status`` looks for every cause."""
    first = _dropped(ws, "in the journal's sync")
    with Store.open(ws) as store:
        assert [n.kind for n in store.untold_notices("server")] == ["rewind"]
    capsys.readouterr()
    assert direct.run_argv(["-C", str(ws), "checkpoint", "-m", "after"]) == 0
    assert "rewind" not in capsys.readouterr().err
    runner = CliRunner()
    res = runner.invoke(cli, ["-C", str(ws), "status"], prog_name="turnback")
    assert res.exit_code == 0, res.output
    assert f"turnback: a rewind to checkpoint {first}" in res.stderr
    res = runner.invoke(cli, ["-C", str(ws), "status"], prog_name="turnback")
    assert res.exit_code == 0 and "a rewind" not in res.stderr  # once
