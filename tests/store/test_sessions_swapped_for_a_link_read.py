"""A store's ``sessions/`` swapped for a link while a process (a server) holds the store:
its reads (a session's events, its head, the listing) went through the link, showing what
the folder it names holds as this store's sessions (redteam50, left open); writes were
refused already. Refused now as the held folders are: ``LinkedInStore`` naming the link,
nothing read there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import LinkedInStore


def test_reads_refuse_a_sessions_folder_swapped_for_a_link(ws: Path, tmp_path: Path) -> None:
    with Store.open(ws) as store:
        sid = store.start_session(agent="test").id
        store.append(sid, "note", {"text": "real"})
        assert [e.data.get("text") for e in store.session(sid).events] == ["real"]
        sessions = ws / ".turnback" / "sessions"
        outside = tmp_path / "outside"
        shutil.copytree(sessions, outside)
        with open(outside / f"{sid}.jsonl", "ab") as f:  # what the link's folder says
            f.write(b'{"type":"note","id":"planted","parent":null,"ts":"2026-01-01T00:00:00Z",'
                    b'"data":{"text":"planted"}}\n')
        sessions.rename(ws / ".turnback" / "sessions-aside")
        sessions.symlink_to(outside, target_is_directory=True)
        with pytest.raises(LinkedInStore, match="sessions"):
            store.session(sid)  # before: read through the link, the planted event shown
        with pytest.raises(LinkedInStore, match="sessions"):
            store.backend.head(sid)
        with pytest.raises(LinkedInStore, match="sessions"):
            store.sessions()
