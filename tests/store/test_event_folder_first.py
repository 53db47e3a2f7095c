"""A checkpoint's session folder opened before its record (``store/record_folders``).

``sessions/`` removed, or swapped for a link or a file, after a checkpoint's look at its
session was refused when the event was appended, after the record stood: a checkpoint
without its event (in ``checkpoints.jsonl``, or in its object log's frame, put back at the
next open). The folder is now opened in the held root before the frame and the record, at
no extra system call (the event's own open, moved): the refusal leaves no record.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import LinkedInStore, NotFound, TurnbackError


def _after_the_look(store: Store, then: Callable[[], None]) -> None:
    """``then`` run just after the checkpoint's look at its session (``exists``)."""
    real = store.backend.exists

    def exists_then(session_id: str) -> bool:
        there = real(session_id)
        then()
        return there

    store.backend.exists = exists_then  # type: ignore[method-assign]


def _refused(tmp_path: Path, put: str, named: bool) -> tuple[Path, Path, str, TurnbackError]:
    """A checkpoint whose ``sessions/`` was ``put`` away after its look: (workspace, store,
    the first checkpoint's id, the refusal); ``sessions/`` put back as it was after."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir = tmp_path / "named-store" if named else ws / ".turnback"
    aside = tmp_path / "aside"
    with Store.open(ws, store_dir=store_dir if named else None) as store:
        sid = store.start_session(title="t").id
        first = store.checkpoint(label="first", session_id=sid).id
        sessions = store.root / "sessions"

        def away() -> None:
            os.rename(sessions, aside)
            if put == "a file":
                sessions.write_text("not a folder\n")
            elif put == "a link":
                os.symlink(aside, sessions)

        _after_the_look(store, away)
        (ws / "f.txt").write_text("two\n")
        with pytest.raises(TurnbackError) as caught:
            store.checkpoint(label="second", session_id=sid)
        if sessions.is_symlink() or sessions.is_file():
            sessions.unlink()
        os.rename(aside, sessions)
    return ws, store_dir, first, caught.value


@pytest.mark.parametrize(("put", "named"), [("nothing", True), ("nothing", False),
                                            ("a link", False), ("a file", False)])
def test_a_refused_event_leaves_no_record(tmp_path: Path, put: str, named: bool) -> None:
    ws, store_dir, first, error = _refused(tmp_path, put, named)
    assert isinstance(error, NotFound if put == "nothing" else LinkedInStore)
    assert len((store_dir / "checkpoints.jsonl").read_bytes().splitlines()) == 1
    # nor a frame in its object log, which the next open would list without its event
    with Store.open(ws, store_dir=store_dir if named else None) as store:
        assert [cp.id for cp in store.checkpoints()] == [first]
        assert not [e for s in store.sessions()[0] for e in store.session(s.header.id).events
                    if e.kind == "checkpoint" and e.data.get("checkpoint") != first]
