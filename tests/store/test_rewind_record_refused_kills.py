"""A rewind whose files are in place but whose record was refused (a link swapped in for
``sessions/``), then the process killed before or while its retry (``_record_refused``)
records it, or the open after that killed while it finishes the record.

The files were written long before: a server holds the store for hours, and the user goes on
working. Before, the next open took the journal for a rewind a crash had cut short and
applied its plan again to every path that held its safety checkpoint's content, so what the
user had done since was undone without a word: a file set back to what it held before the
rewind was rewound again, a file the rewind made and the user deleted came back, a file the
rewind removed and the user made again was removed. (No byte was lost: the safety
checkpoint holds them; but nothing said so.) Now the refused record marks the journal as
applied, and an open that finds that mark only records the rewind.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
from tests.reliability.crashkit import Ack, run_child

from turnback import Kind, Store
from turnback.errors import Unsafe
from turnback.rewind import apply, signing
from wsutil import age_tree, journal_left, write

# the user's work after the rewind: a.txt set back, b.txt (made by the rewind) deleted,
# c.txt (removed by the rewind) made again as it was
USERS = {"a.txt": b"two\n", "b.txt": None, "c.txt": b"c\n"}


def _prepared(ws: Path) -> str:
    """A store with checkpoint ``first`` (a.txt 'one', b.txt) and a workspace changed since
    (a.txt 'two', b.txt gone, c.txt made): the rewind to ``first`` writes, makes, removes."""
    write(ws, "a.txt", "one\n")
    write(ws, "b.txt", "b\n")
    age_tree(ws)
    with Store.open(ws, create=True) as store:
        store.start_session(title="t", session_id="s1")
        store.append("s1", Kind.PROMPT, {"text": "x"})
        first = store.checkpoint(session_id="s1").id
    write(ws, "a.txt", "two\n")
    (ws / "b.txt").unlink()
    write(ws, "c.txt", "c\n")
    age_tree(ws)
    return first


def _refused_rewind(ws: Path, first: str, held: dict[str, Any]) -> None:
    """In this process: the rewind to ``first``, its files written, then ``sessions/`` swapped
    for a link so that its record is refused; the link then removed (the store in
    ``held['store']``, its record still to be retried)."""
    store = Store.open(ws)
    sessions, aside = store.root / "sessions", ws.parent / "aside"
    applied = apply.Applier.apply

    def swapped(self: apply.Applier, *args: Any, **kw: Any) -> Any:
        out = applied(self, *args, **kw)
        shutil.copytree(sessions, aside.with_name("copy"))
        shutil.move(sessions, aside)
        os.symlink(aside.with_name("copy"), sessions)
        apply.Applier.apply = applied  # type: ignore[method-assign]
        return out

    apply.Applier.apply = swapped  # type: ignore[method-assign]
    try:
        store.rewind(first)
    except Unsafe:
        pass
    else:
        raise AssertionError("the rewind's record was not refused")
    finally:
        apply.Applier.apply = applied  # type: ignore[method-assign]
    assert (ws / "a.txt").read_text() == "one\n"  # in place
    os.unlink(sessions)
    shutil.move(aside, sessions)
    held["store"] = store


def _users_work(ws: Path) -> None:
    for rel, data in USERS.items():
        if data is None:
            (ws / rel).unlink(missing_ok=True)
        else:
            write(ws, rel, data)
    age_tree(ws)


def _check_recorded_once(ws: Path, where: str) -> None:
    """The user's work kept, the rewind recorded once, no journal left."""
    with Store.open(ws) as store:
        assert store.journal_problem is None, f"{where}: {store.journal_problem}"
        assert not journal_left(store.root), f"{where}: the journal was left"
        now = {rel: (ws / rel).read_bytes() if (ws / rel).exists() else None for rel in USERS}
        assert now == USERS, f"{where}: the user's work since the rewind was undone: {now}"
        rewinds = [op for op in store.oplog.all() if op.get("op") == "rewind"]
        assert len(rewinds) == 1, f"{where}: {len(rewinds)} rewinds in the op log"
        events = [e for e in store.backend.load("s1").events if e.kind == Kind.REWIND]
        assert [e.id for e in events] == [f"rw-{rewinds[0]['id']}"], where
        assert rewinds[0].get("newHead") == events[0].id, where
        assert "applied" not in rewinds[0], where
        undone = store.undo()  # reverts it: back to what the safety checkpoint holds
        assert undone.written == [] and undone.created == [] and undone.removed == []
        assert {rel: (ws / rel).read_bytes() if (ws / rel).exists() else None
                for rel in USERS} == USERS, where


def test_the_user_s_work_after_a_refused_record_survives_the_process_s_death(
        tmp_path: Path) -> None:
    """The process dies before any retry; the user works on; the next open records it."""
    ws = tmp_path / "ws"
    first = _prepared(ws)
    held: dict[str, Any] = {}

    def dies(ack: Ack) -> None:
        _refused_rewind(ws, first, held)
        ack("refused")
        os._exit(0)  # no retry, no close: a kill

    out = run_child(dies)
    assert out.acks == ["refused"], out
    _users_work(ws)
    _check_recorded_once(ws, "after the death")


def _dies_after_refusal(ws: Path, first: str) -> None:
    """A child process whose rewind to ``first`` had its record refused, killed before any
    retry (no close)."""
    held: dict[str, Any] = {}

    def dies(ack: Ack) -> None:
        _refused_rewind(ws, first, held)
        os._exit(0)

    run_child(dies)


def _retry(held: dict[str, Any]) -> Any:
    def run(ack: Ack) -> None:
        held["store"].checkpoint(session_id="s1")  # the next write retries the record
        ack("recorded")
    return run


def test_a_kill_at_every_step_of_the_retry_keeps_the_user_s_work(tmp_path: Path) -> None:
    count = tmp_path / "count" / "ws"
    first = _prepared(count)
    held: dict[str, Any] = {}
    out = run_child(_retry(held), before=lambda ack: _refused_rewind(count, first, held))
    assert out.error is None, out.error
    assert out.steps and out.steps > 3, out
    for k in range(1, out.steps + 1):
        for seed in (0, 1):  # a kill at a write: whole, torn
            ws = tmp_path / f"k{k}-{seed}" / "ws"
            first = _prepared(ws)
            out = run_child(_retry(held), kill_at=k, seed=seed,
                            before=lambda ack, ws=ws, first=first: _refused_rewind(
                                ws, first, held))
            assert out.error is None, f"step {k}: {out.error}"
            _users_work(ws)
            _check_recorded_once(ws, f"killed at step {k} of the retry")
            shutil.rmtree(ws.parent)


def test_a_kill_at_every_step_of_the_open_after_keeps_the_user_s_work(
        tmp_path: Path) -> None:
    def dead_after_refusal(ws: Path) -> None:
        _dies_after_refusal(ws, _prepared(ws))
        _users_work(ws)

    def opens(ws: Path) -> Any:
        def run(ack: Ack) -> None:
            Store.open(ws).close()
            ack("opened")
        return run

    count = tmp_path / "count" / "ws"
    dead_after_refusal(count)
    out = run_child(opens(count))
    assert out.error is None, out.error
    assert out.steps, out
    for k in range(1, out.steps + 1):
        for seed in (0, 1):
            ws = tmp_path / f"k{k}-{seed}" / "ws"
            dead_after_refusal(ws)
            out = run_child(opens(ws), kill_at=k, seed=seed)
            assert out.error is None, f"step {k}: {out.error}"
            _check_recorded_once(ws, f"killed at step {k} of the open after")
            shutil.rmtree(ws.parent)


def test_the_journal_of_a_refused_record_says_its_files_are_in_place(tmp_path: Path) -> None:
    """What the next open reads: the journal marked, still signed (a plain one would be
    applied again)."""
    ws = tmp_path / "ws"
    first = _prepared(ws)
    held: dict[str, Any] = {}
    _refused_rewind(ws, first, held)
    store = held["store"]
    try:
        pending = store.oplog.pending()
        assert pending is not None and pending.get("applied") is True
        assert signing.check(pending) is None
    finally:
        store.close()


def test_a_recovery_that_cannot_record_does_not_apply_again_at_the_next_open(
        tmp_path: Path) -> None:
    """A rewind cut short after its files were written (its journal not marked), the session
    it records into damaged: the open's recovery applies the plan, cannot record it, and
    marks the journal; the user works on; the open after the session is repaired records the
    rewind without applying the plan a second time."""
    ws = tmp_path / "ws"
    _dies_after_refusal(ws, _prepared(ws))
    journal = ws / ".turnback" / "journal.json"
    record = orjson.loads(journal.read_bytes())
    record.pop("applied")
    record.pop(signing.FIELD)
    journal.write_bytes(orjson.dumps(signing.sign(record)) + b"\n")  # as a crash leaves it
    session = ws / ".turnback" / "sessions" / "s1.jsonl"
    kept = session.read_bytes()
    session.write_bytes(b'{"id": 1}\n')  # its header lost
    with Store.open(ws) as store:
        assert store.journal_problem is not None and "could not be recorded" in (
            store.journal_problem)
        pending = store.oplog.pending()
        assert pending is not None and pending.get("applied") is True
    _users_work(ws)
    session.write_bytes(kept)  # repaired
    _check_recorded_once(ws, "after the session was repaired")
