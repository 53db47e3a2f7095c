"""A checkpoint's session event through the held store root (``trust32``), when
``sessions/`` is not what it should be: the error names the thing and says what to do.

Reached by path, a ``sessions/`` swapped for a link after the store was opened was
refused as ``LinkedInStore`` naming it. Through the held root
(``FileSessions.append(store_root=)``) it became a bare ``NotADirectoryError`` ("[Errno
20] Not a directory") or, by path (``TURNBACK_FS_PATHS=1``), ``OSError`` ELOOP; and none
there at all a bare ``FileNotFoundError`` where it was ``NotFound`` ("no session ...").
Each is again what it was by path (``FileSessions._sessions_in``). And a link the user
put in a store they named (``--store``) is followed again, as by path.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Conflict, LinkedInStore, NotFound
from turnback.fs.folders import PathFolder, identity


def _store(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    return ws, tmp_path / "named-store"


def _after_the_look(store: Store, then: Callable[[], None]) -> None:
    """``then`` run just after the checkpoint's look at its session (``exists``), before
    its record and event: what the event finds is what ``then`` left."""
    real = store.backend.exists

    def exists_then(session_id: str) -> bool:
        there = real(session_id)
        then()
        return there

    store.backend.exists = exists_then  # type: ignore[method-assign]


@pytest.mark.parametrize("put", ["a link to a copy", "a file"])
def test_sessions_swapped_after_the_look_is_refused_naming_it(tmp_path: Path, put: str) -> None:
    """The workspace's own store (``.turnback``): a link in its layout is never followed."""
    ws, _named = _store(tmp_path)
    store_dir = ws / ".turnback"
    copy = tmp_path / "copy"
    with Store.open(ws) as store:
        sid = store.start_session(title="t").id
        sessions = store.root / "sessions"

        def swap() -> None:
            shutil.copytree(sessions, copy)
            shutil.rmtree(sessions)
            if put == "a file":
                sessions.write_text("not a folder\n")
            else:
                os.symlink(copy, sessions)

        _after_the_look(store, swap)
        (ws / "f.txt").write_text("two\n")
        with pytest.raises(LinkedInStore) as caught:
            store.checkpoint(label="c", session_id=sid)
    message = str(caught.value)
    assert str(store_dir / "sessions") in message
    assert "Remove it" in message
    # nothing of it went into the link's target
    assert len((copy / f"{sid}.jsonl").read_bytes().splitlines()) == 1  # the header only


def test_sessions_gone_after_the_look_is_no_session(tmp_path: Path) -> None:
    ws, store_dir = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        sid = store.start_session(title="t").id
        _after_the_look(store, lambda: shutil.rmtree(store.root / "sessions"))
        (ws / "f.txt").write_text("two\n")
        with pytest.raises(NotFound, match="no session"):
            store.checkpoint(label="c", session_id=sid)


@pytest.mark.parametrize("then", ["another folder there", "nothing there"])
def test_a_root_replaced_by_path_is_said_to_be(tmp_path: Path, then: str) -> None:
    """Folders by path (``PathFolder``, as ``TURNBACK_FS_PATHS=1`` or Windows give): the
    root's look after ``sessions/`` is reached refused a replaced root with a bare
    ``OSError`` ("[Errno 40] was replaced while Turnback used it; not followed"), or
    ``FileNotFoundError`` for a root moved away; now ``Conflict`` saying the store was
    replaced and what to do. Nothing is appended."""
    ws, store_dir = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        sid = store.start_session(title="t").id
        session = store.root / "sessions" / f"{sid}.jsonl"
        before = session.read_bytes()
        held = PathFolder(str(store.root), identity(os.stat(store.root)))
        real = held.child

        def child_then(name: str) -> PathFolder:
            """``sessions/`` reached, then the root moved away and (a copy) put back."""
            out = real(name)
            shutil.copytree(store.root, tmp_path / "copy")
            os.rename(store.root, tmp_path / "moved")
            if then == "another folder there":
                os.rename(tmp_path / "copy", store.root)
            return out

        held.child = child_then  # type: ignore[method-assign]
        with pytest.raises(Conflict, match="was replaced") as caught:
            store.append(sid, "note", {"n": 1}, sessions=store.backend.sessions_in(held, sid))
        assert str(store.root) in str(caught.value)
        assert (tmp_path / "moved" / "sessions" / f"{sid}.jsonl").read_bytes() == before
        if then == "another folder there":
            assert session.read_bytes() == before


def test_a_linked_sessions_folder_in_a_named_store_gets_its_events(tmp_path: Path) -> None:
    """A store the user named (``--store``) may hold links (``sessions/`` on another disk,
    tests/reliability/test_hostile_sharing_hooks_attribution.py): by path they were followed;
    through the held root ``sessions/`` was refused, and every checkpoint's event failed after its
    record with a bare ``NotADirectoryError``. Followed again, by path, as before."""
    ws, store_dir = _store(tmp_path)
    elsewhere = tmp_path / "other-disk"
    with Store.open(ws, store_dir=store_dir) as store:
        sid = store.start_session(title="t").id
    shutil.move(store_dir / "sessions", elsewhere)
    os.symlink(elsewhere, store_dir / "sessions")
    with Store.open(ws, store_dir=store_dir) as store:
        (ws / "f.txt").write_text("two\n")
        cp = store.checkpoint(label="c", session_id=sid)
    last = (elsewhere / f"{sid}.jsonl").read_bytes().splitlines()[-1]
    assert f'"checkpoint":"{cp.id}"'.encode() in last
