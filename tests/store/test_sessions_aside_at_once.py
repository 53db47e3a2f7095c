"""``sessions/`` renamed aside during an at-once checkpoint's scan (``checkpoint_now``).

``checkpoint_now`` opens the session's folder before its scan, for its look at the
session's lock, and keeps it to the event (``store/record_folders.py``). A ``sessions/``
renamed aside during the scan got the event in the folder renamed aside, while the record
went into ``checkpoints.jsonl``: a checkpoint listed with no event in any session listed,
answered as taken. The folder is now looked at again before the record (is it still the
root's ``sessions/``?) and, when it is not, reopened there: refused as a checkpoint's is
(``NotFound``, ``LinkedInStore``), or the event goes into what is at ``sessions/`` now.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.errors import LinkedInStore, NotFound


def _aside_during_scan(store: Store, then: str, aside: Path) -> None:
    """``sessions/`` renamed to ``aside`` while the next scan runs; ``then`` put in its
    place: nothing, a link to ``aside``, or a copy of it."""
    real = store.scanner.scan
    sessions = store.root / "sessions"

    def scan_then(*a: Any, **kw: Any) -> Any:
        res = real(*a, **kw)
        os.rename(sessions, aside)
        if then == "a link":
            os.symlink(aside, sessions)
        elif then == "a copy":
            sessions.mkdir()
            for f in aside.iterdir():
                (sessions / f.name).write_bytes(f.read_bytes())
        store.scanner.scan = real  # type: ignore[method-assign]
        return res

    store.scanner.scan = scan_then  # type: ignore[method-assign]


@pytest.mark.parametrize("named", [True, False])
@pytest.mark.parametrize("then", ["nothing", "a link", "a copy"])
def test_no_checkpoint_listed_without_its_event(tmp_path: Path, then: str,
                                                named: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir = tmp_path / "named-store" if named else None
    aside = tmp_path / "sessions-aside"
    with Store.open(ws, store_dir=store_dir) as store:
        sid = store.start_session(title="t").id
        store.checkpoint(label="first", session_id=sid)
        (ws / "f.txt").write_text("two\n")
        _aside_during_scan(store, then, aside)
        refused: Exception | None = None
        try:
            cp = store.checkpoint_now({"f.txt"}, label="second", session_id=sid)
        except (NotFound, LinkedInStore) as exc:
            refused, cp = exc, None
        root = store.root
    # a link in the workspace's own store is refused; in a named one it is followed
    if then == "nothing":
        assert isinstance(refused, NotFound)
    elif then == "a link" and not named:
        assert isinstance(refused, LinkedInStore)
    else:
        assert cp is not None and refused is None
    listed = [line for line in (root / "checkpoints.jsonl").read_bytes().splitlines()
              if b'"second"' in line]
    if cp is None:
        assert not listed  # refused before the record: nothing of it stands
        assert b'"second"' not in (aside / f"{sid}.jsonl").read_bytes()
    else:
        # the event is in the session at the store's path, where it is listed
        assert len(listed) == 1
        assert cp.id.encode() in (root / "sessions" / f"{sid}.jsonl").read_bytes()
        if then == "a copy":
            assert cp.id.encode() not in (aside / f"{sid}.jsonl").read_bytes()
