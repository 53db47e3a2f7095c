"""A rewind whose files are in place but whose record is refused: a link swapped in for
``sessions/`` while the files changed (a server holds the store for hours). Nothing is
lost (the journal and the safety checkpoint hold it), and once the link is gone the same
open records it before its next write: undo then reverts it, as after any rewind. Before,
that open answered "nothing to undo" and refused every rewind ("another process left it
unfinished") until the server was restarted."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turnback import Kind, Store
from turnback.errors import Unsafe
from turnback.rewind import apply
from wsutil import age_tree, write


def _swap_during_apply(monkeypatch: pytest.MonkeyPatch, sessions: Path, aside: Path) -> None:
    """The files written, then ``sessions/`` moved aside and a link to a copy put there."""
    applied: Callable[..., Any] = apply.Applier.apply

    def swapped(self: apply.Applier, *args: Any, **kw: Any) -> Any:
        out = applied(self, *args, **kw)
        copy = aside.with_name("copy")
        shutil.copytree(sessions, copy)
        shutil.move(sessions, aside)
        os.symlink(copy, sessions)
        monkeypatch.setattr(apply.Applier, "apply", applied)  # once
        return out

    monkeypatch.setattr(apply.Applier, "apply", swapped)


@pytest.mark.parametrize("finish_later", [False, True])
def test_a_rewind_refused_its_record_is_recorded_once_the_link_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, finish_later: bool) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "one\n")
    age_tree(ws)
    with Store.open(ws) as store:
        store.start_session(title="t", session_id="s1")
        store.append("s1", Kind.PROMPT, {"text": "x"})
        first = store.checkpoint(session_id="s1")
        write(ws, "a.txt", "two\n")
        age_tree(ws)
        sessions, aside = store.root / "sessions", tmp_path / "aside"
        _swap_during_apply(monkeypatch, sessions, aside)
        with pytest.raises(Unsafe, match="sessions"):
            store.rewind(first.id, finish_later=finish_later)
            store.finish_rewind()
        assert (ws / "a.txt").read_text() == "one\n"  # in place; the journal holds it
        os.unlink(sessions)
        shutil.move(aside, sessions)  # the link gone, the folder back

        undone = store.undo()
        assert undone.written == ["a.txt"]
        assert (ws / "a.txt").read_text() == "two\n"
        assert not store.oplog.holds_journal()
        ops = [op["op"] for op in store.oplog.all()]
        assert ops[-2:] == ["rewind", "undo"]
        assert sum(e.kind == Kind.REWIND for e in store.backend.load("s1").events) == 2


def test_a_file_set_back_before_the_record_is_retried_is_left_as_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry records the rewind; it does not apply its plan again (recovery from the
    journal would: a file that holds its safety checkpoint's content again is rewound)."""
    ws = tmp_path / "ws"
    write(ws, "a.txt", "one\n")
    age_tree(ws)
    with Store.open(ws) as store:
        store.start_session(title="t", session_id="s1")
        first = store.checkpoint(session_id="s1")
        write(ws, "a.txt", "two\n")
        age_tree(ws)
        sessions, aside = store.root / "sessions", tmp_path / "aside"
        _swap_during_apply(monkeypatch, sessions, aside)
        with pytest.raises(Unsafe, match="sessions"):
            store.rewind(first.id)
        os.unlink(sessions)
        shutil.move(aside, sessions)
        write(ws, "a.txt", "two\n")  # the user's editor puts back what was there
        age_tree(ws)
        store.checkpoint(session_id="s1")  # the next write records the rewind
        assert not store.oplog.holds_journal()
        assert [op["op"] for op in store.oplog.all()][-1:] == ["rewind"]
        assert (ws / "a.txt").read_text() == "two\n"
