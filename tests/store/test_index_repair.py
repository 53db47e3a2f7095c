"""A line lost from the middle of ``checkpoints.jsonl`` while a later record of the same
object log survived: garbage or zeros where a power cut did not write a page back, a line
torn by a full disk and cut by the next append while the same server went on, a hand.

The open's restore reads each log from its end and stops at its first record a line holds,
so it never reached the lost one: the checkpoint vanished from listings and could not be
rewound to, although its record and objects were in the log; a merge (or gc) then removed the
log, and with it the only copy of that record (redteam12 left it open). Now a damaged line
seen (in the tail an open reads, or once the whole file is read) makes a repair read every
log whole, the merge and gc always do, and fsck does and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from turnback import Store
from turnback.cli.main import cli
from turnback.store.checkpoint_index import TAIL_BYTES
from wsutil import age_tree, write


def _five(ws: Path) -> list[str]:
    """Five small checkpoints of one process (one object log), each changing a.txt."""
    ids = []
    with Store.open(ws, create=True) as store:
        for i in range(5):
            write(ws, "a.txt", f"version {i}\n")
            age_tree(ws)
            ids.append(store.checkpoint(label=f"v{i}").id)
    return ids


def _lines(ws: Path) -> list[bytes]:
    return (ws / ".turnback" / "checkpoints.jsonl").read_bytes().splitlines(keepends=True)


def _write_lines(ws: Path, lines: list[bytes]) -> None:
    (ws / ".turnback" / "checkpoints.jsonl").write_bytes(b"".join(lines))


def _lose(ws: Path, cp_id: str, how: str) -> None:
    lines = _lines(ws)
    at = next(i for i, line in enumerate(lines) if cp_id.encode() in line)
    if how == "removed":
        del lines[at]
    else:  # a page not written back: zeros where the line was, its newline kept
        lines[at] = b"\0" * (len(lines[at]) - 1) + b"\n"
    _write_lines(ws, lines)


def _rewinds_to_it(ws: Path, store: Store, cp_id: str, i: int) -> None:
    assert cp_id in {c.id for c in store.checkpoints()}
    store.rewind(cp_id)
    assert (ws / "a.txt").read_text() == f"version {i}\n"


@pytest.mark.parametrize("how", ["removed", "zeroed"])
def test_a_merge_puts_back_a_middle_line_before_it_removes_the_log(ws: Path, how: str) -> None:
    ids = _five(ws)
    _lose(ws, ids[1], how)
    with Store.open(ws) as store:
        assert store.merge_logs(at_least=0) is not None  # the log is gone after this
    with Store.open(ws) as store:
        _rewinds_to_it(ws, store, ids[1], 1)
        assert not list((store.root / "objects" / "log").iterdir())


@pytest.mark.parametrize("how", ["removed", "zeroed"])
def test_gc_puts_back_a_middle_line_before_it_removes_the_log(ws: Path, how: str) -> None:
    ids = _five(ws)
    _lose(ws, ids[1], how)
    with Store.open(ws) as store:
        store.gc()
    with Store.open(ws) as store:
        _rewinds_to_it(ws, store, ids[1], 1)


def test_a_damaged_line_in_the_tail_is_mended_at_the_open(ws: Path) -> None:
    ids = _five(ws)
    _lose(ws, ids[2], "zeroed")
    with Store.open(ws) as store:
        assert store.index.repaired == 1  # the open's own read of the tail saw the damage
        _rewinds_to_it(ws, store, ids[2], 2)


def test_a_damaged_line_before_the_tail_is_mended_by_the_listing(ws: Path) -> None:
    ids = _five(ws)
    _lose(ws, ids[1], "zeroed")
    lines = _lines(ws)
    pad = b'{"type":"drop","id":"%026d"}\n'
    filler = [pad % n for n in range(TAIL_BYTES // len(pad % 0) + 10)]
    _write_lines(ws, lines[:3] + filler + lines[3:])  # the damage far from the end
    with Store.open(ws) as store:
        assert store.index.repaired == 0  # the open read the tail only: undamaged
        _rewinds_to_it(ws, store, ids[1], 1)
        assert store.index.repaired == 1
        store.checkpoints()
        assert store.index.repaired == 1  # once: the damage looked past is not mended again


def test_fsck_puts_a_removed_line_back_and_says_so(ws: Path) -> None:
    ids = _five(ws)
    _lose(ws, ids[1], "removed")  # no trace in the file: only the logs tell
    with Store.open(ws) as store:
        report = store.fsck()
        found = [d for d in report.damaged if d["what"] == "checkpoint index"]
        assert found and "1 checkpoint record" in found[0]["problem"], report.damaged
        assert ids[1] in {c.id for c in store.checkpoints()}
        assert store.fsck().ok  # mended


def test_the_cli_listing_says_the_index_was_mended(ws: Path) -> None:
    ids = _five(ws)
    _lose(ws, ids[2], "zeroed")
    result = CliRunner().invoke(cli, ["-C", str(ws), "checkpoints"])
    assert result.exit_code == 0, result.output
    assert ids[2] in result.stdout
    assert "was damaged" in result.stderr and "1 checkpoint record(s) put back" in result.stderr


def test_an_index_cut_short_is_made_whole_from_the_log(ws: Path) -> None:
    """(Held before too: the lost lines are each log's last.)"""
    ids = _five(ws)
    _write_lines(ws, _lines(ws)[:2])
    with Store.open(ws) as store:
        assert [c.id for c in store.checkpoints()] == ids
