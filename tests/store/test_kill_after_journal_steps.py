"""A process killed (``os._exit`` in a forked child: no clean-up of any kind) at each step
of a rewind's record after its journal, which ``trust35`` routed through one ``dup`` of the
held root: after the session event, after the op-log line, within the journal's mark that
its files are in place, and the same for an undo. The next open recovers each: the rewind
recorded once (one op-log line, one event), nothing applied twice, and undo still works."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.rewind.oplog import OpLog


def _die(*_a: Any, **_kw: Any) -> None:
    os._exit(0)


def _refuse(*_a: Any, **_kw: Any) -> None:
    raise OSError(28, "No space left on device")


# (what is patched, with what): the step the child dies at
STEPS = {
    "after the event": {"add": _die},
    "after the op-log line": {"end": _die},
    "in the mark that its files are in place": {"add": _refuse, "mark_applied": _die},
}


def _killed(ws: Path, verb: str, step: str) -> None:
    pid = os.fork()
    if pid == 0:  # the child: nothing here returns
        try:
            store = Store.open(ws)
            cps = store.checkpoints()
            for name, fn in STEPS[step].items():
                setattr(OpLog, name, fn)
            if verb == "rewind":
                store.rewind(cps[0].id)
            else:
                store.undo()
        finally:
            os._exit(3)  # the step was never reached: the test fails below
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _rewinds(store: Store) -> list[str]:
    sid = store.oplog.all()[0]["session"]
    return [e.id for e in store.backend.load(sid).events if e.kind == "rewind"]


@pytest.mark.parametrize("step", list(STEPS))
def test_a_kill_at_each_step_after_the_journal_is_recovered_once(
        ws: Path, step: str) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
        (ws / "a.txt").write_text("two")
        store.checkpoint(label="second")
    _killed(ws, "rewind", step)
    assert (ws / "a.txt").read_text() == "one"
    with Store.open(ws) as store:
        assert store.oplog.pending() is None
        assert [op.get("op") for op in store.oplog.all()] == ["rewind"]
        assert len(_rewinds(store)) == 1
    (ws / "b.txt").write_text("since")  # the user's work after the rewind
    _killed(ws, "undo", step)
    assert (ws / "a.txt").read_text() == "two"
    with Store.open(ws) as store:
        assert store.oplog.pending() is None
        ops = store.oplog.all()
        assert [op.get("op") for op in ops] == ["rewind", "undo"], ops
        assert len(_rewinds(store)) == 2
    assert (ws / "a.txt").read_text() == "two"
