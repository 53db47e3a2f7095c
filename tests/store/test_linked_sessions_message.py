"""A command naming a session while ``sessions/`` is a link swapped in after the store was
opened (a server holds it for hours): writes through it are refused (``trust17``), and a read
that finds no file there said "no session 's1'; start one with 'turnback session start'",
which is wrong (the session is in the folder moved aside) and leads nowhere (the start it
suggests is refused naming the link). Now every "no session" answer first looks whether the
way to the session's file holds a link, and names it (redteam13 left it open)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turnback import Kind, Store
from turnback.errors import LinkedInStore, NotFound


def _reads(store: Store) -> dict[str, Callable[[], Any]]:
    return {
        "session": lambda: store.session("s1"),
        "append": lambda: store.append("s1", Kind.PROMPT, {"text": "x"}),
        "page": lambda: store.session_page("s1", 0, 10),
        "summary": lambda: store.session_summary("s1"),
        "end": lambda: store.end_session("s1"),
        "update": lambda: store.update_session("s1", title="t2"),
        "head": lambda: store.backend.head("s1"),
        "has_event": lambda: store.backend.has_event("s1", "e1"),
    }


@pytest.mark.parametrize("call", [
    "session", "append", "page", "summary", "end", "update", "head", "has_event"])
def test_a_session_read_through_a_linked_sessions_folder_names_the_link(
        ws: Path, tmp_path: Path, call: str) -> None:
    with Store.open(ws, create=True) as store:
        store.start_session(title="t", session_id="s1")
        sessions = store.root / "sessions"
        empty = tmp_path / "elsewhere"
        empty.mkdir()
        shutil.move(sessions, tmp_path / "aside")
        os.symlink(empty, sessions)
        with pytest.raises(LinkedInStore) as caught:
            _reads(store)[call]()
        message = caught.value.message
        assert "sessions" in message and "link" in message, message
        assert "Remove it" in message, message
        assert "start one" not in message, message


def test_a_session_that_is_not_there_is_still_no_session(ws: Path) -> None:
    with Store.open(ws, create=True) as store:
        store.start_session(title="t", session_id="s1")
        with pytest.raises(NotFound, match="no session 's2'"):
            store.session("s2")
        with pytest.raises(NotFound, match="no session 's2'; start one"):
            store.append("s2", Kind.PROMPT, {"text": "x"})
