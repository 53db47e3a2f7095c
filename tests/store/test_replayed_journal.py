"""A journal of this user's, signed, copied aside and put back after its rewind was recorded
and others followed: anyone who can write the workspace can do it (a sync tool, a backup
restored, a hand). Recovery asked only whether the op log's *last* record was this rewind's,
so it recorded the old rewind a second time, after the newer ones: 'undo' then reverted that
old rewind, not the user's last, and the workspace went back to what it held before it. Now
a rewind whose op the log holds anywhere only ends the journal."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from turnback import Store
from turnback.rewind.oplog import OpLog
from turnback.store.rewind_ops import RewindOps
from wsutil import age_tree, write


def _checkpoint(store: Store, ws: Path, text: str) -> str:
    write(ws, "a.txt", text)
    age_tree(ws)
    return store.checkpoint().id


def _refused_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next rewind's record refused once (its files in place): the journal is marked
    applied and signed, and the record is retried at the next write."""
    real = RewindOps._finish

    def refuse(self: RewindOps, record: dict[str, object], root: object) -> str:
        monkeypatch.setattr(RewindOps, "_finish", real)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RewindOps, "_finish", refuse)


def test_a_replayed_applied_journal_is_not_recorded_again(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(ws, create=True) as store:
        one = _checkpoint(store, ws, "one\n")
        two = _checkpoint(store, ws, "two\n")
        journal = store.oplog.journal
        _refused_once(monkeypatch)
        with pytest.raises(OSError):
            store.rewind(one)
        replay = journal.read_bytes()  # signed, marked applied: what an attacker keeps
        assert b'"applied":true' in replay
        store.finish_rewind()  # the retry records it
        first = store.oplog.last()
        assert first is not None and not journal.read_bytes()
        store.rewind(two)  # the user's last rewind
        last = store.oplog.last()
        assert last is not None and last["id"] != first["id"]
    journal.write_bytes(replay)
    with Store.open(ws) as store:
        ops = [op["id"] for op in store.oplog.all()]
        assert ops.count(first["id"]) == 1, ops
        assert store.oplog.last() == last
        assert not journal.read_bytes()
        store.undo()  # reverts the user's last rewind, to two's safety checkpoint
    assert (ws / "a.txt").read_text() == "one\n"


def test_a_replayed_journal_not_marked_is_not_recorded_again(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with a journal kept before its rewind ended (what main did before the
    mark): its plan finds its files in place, and its op is not logged twice."""
    with Store.open(ws, create=True) as store:
        one = _checkpoint(store, ws, "one\n")
        two = _checkpoint(store, ws, "two\n")
        journal = store.oplog.journal
        kept: list[bytes] = []
        real = RewindOps._finish

        def keep(self: RewindOps, record: dict[str, object], root: object) -> str:
            kept.append(journal.read_bytes())
            return real(self, record, root)

        monkeypatch.setattr(RewindOps, "_finish", keep)
        store.rewind(one)
        monkeypatch.setattr(RewindOps, "_finish", real)
        first = store.oplog.last()
        store.rewind(two)
        last = store.oplog.last()
    assert first is not None and last is not None
    journal.write_bytes(kept[0])
    with Store.open(ws) as store:
        ops = [op["id"] for op in store.oplog.all()]
        assert ops.count(first["id"]) == 1, ops
        assert store.oplog.last() == last
    assert (ws / "a.txt").read_text() == "two\n"  # the user's last rewind, not undone


@pytest.mark.parametrize("tampered", [False, True])
def test_the_applied_mark_is_signed(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                    tampered: bool) -> None:
    """(Sound as merged.) A journal whose rewind must be finished, 'applied' added by hand
    without the user's key: refused whole (its signature covers the mark), never taken for
    a rewind done and recorded with its files left unwritten."""
    with Store.open(ws, create=True) as store:
        one = _checkpoint(store, ws, "one\n")
        _checkpoint(store, ws, "two\n")
        journal = store.oplog.journal
        ops = store.oplog.all()

        def refuse(*_args: object, **_kw: object) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(RewindOps, "_finish", refuse)
        monkeypatch.setattr(OpLog, "mark_applied", refuse)
        with pytest.raises(OSError):
            store.rewind(one)
        monkeypatch.undo()
        store._refused_record = None  # the process dies here
    if tampered:
        write(ws, "a.txt", "two\n")  # as if the crash came before the files were written
        record = orjson.loads(journal.read_bytes())
        journal.write_bytes(orjson.dumps({**record, "applied": True}) + b"\n")
    with Store.open(ws) as store:
        if tampered:
            assert store.journal_problem and "signature" in store.journal_problem
            assert store.oplog.all() == ops  # nothing recorded
            assert (ws / "a.txt").read_text() == "two\n"  # nothing written either
        else:
            # its files in place, the journal honoured: recorded. (Set back by hand, as the
            # tampered case's, no file shows the rewind and trust37's recovery empties it)
            assert store.journal_problem is None
            assert [op.get("op") for op in store.oplog.all()] == [
                op.get("op") for op in ops] + ["rewind"]
            assert (ws / "a.txt").read_text() == "one\n"  # finished
