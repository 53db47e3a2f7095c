"""Walks saved between processes: used when the history still holds, continued over new
steps, and a miss (never an error, never a wrong answer) when anything is off."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.attribution import saved
from turnback.attribution.blame import Walker, blame_now
from turnback.attribution.history import load_history
from turnback.events import Kind


def _fresh(store: Store, path: str) -> list[str]:
    return [repr(o) for o in blame_now(store, load_history(store), path).origins]


def _from_saved(store: Store, path: str) -> tuple[list[str], bool]:
    h = load_history(store)
    walker = saved.load(store, h, path)
    hit = walker is not None
    result = blame_now(store, h, path, walker or Walker(store, path))
    return [repr(o) for o in result.origins], hit


def _walk_and_save(store: Store, path: str) -> None:
    h = load_history(store)
    w = saved.load(store, h, path) or Walker(store, path)
    blame_now(store, h, path, w)
    saved.save(store, h, w)


@pytest.fixture
def history(store: Store, ws: Path) -> Path:
    f = ws / "f.txt"
    f.write_text("a\nb\n")
    store.checkpoint(label="1")
    f.write_text("a\nb\nc\n")
    store.checkpoint(label="2")
    return f


def test_a_saved_walk_is_used_and_continued(store: Store, history: Path) -> None:
    _walk_and_save(store, "f.txt")
    got, hit = _from_saved(store, "f.txt")
    assert hit and got == _fresh(store, "f.txt")
    history.write_text("a\nb\nc\nd\n")
    store.checkpoint(label="3")
    got, hit = _from_saved(store, "f.txt")
    assert hit and got == _fresh(store, "f.txt")  # continued over the new step


def test_a_changed_past_is_a_miss(store: Store, ws: Path) -> None:
    """The session's turn is recorded after its checkpoints (as an import does): the steps
    already walked change author, so the saved walk no longer holds."""
    sid = store.start_session(agent="aider").id
    f = ws / "f.txt"
    f.write_text("a\n")
    c1 = store.checkpoint(label="1", session_id=sid)
    f.write_text("a\nb\n")
    c2 = store.checkpoint(label="2", session_id=sid)
    _walk_and_save(store, "f.txt")
    p = store.append(sid, Kind.PROMPT, {"text": "x"}, parent=None)
    store.append(sid, Kind.CHECKPOINT, {"checkpoint": c1.id}, parent=p.id)
    store.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
    store.append(sid, Kind.CHECKPOINT, {"checkpoint": c2.id})
    got, hit = _from_saved(store, "f.txt")
    assert not hit and got == _fresh(store, "f.txt")
    assert "aider" in got[1]


@pytest.mark.parametrize("damage", [
    b"", b"not json", b"[]", b'{"v": 1}',
    b'{"v": 1, "path": "f.txt", "position": 1, "digest": "x", "blob": null, "runs": []}',
])
def test_a_damaged_save_is_a_miss(store: Store, history: Path, damage: bytes) -> None:
    _walk_and_save(store, "f.txt")
    (file,) = (store.root / "cache" / "blame").iterdir()
    file.write_bytes(damage)
    got, hit = _from_saved(store, "f.txt")
    assert not hit and got == _fresh(store, "f.txt")


def test_runs_that_do_not_add_up_are_a_miss(store: Store, history: Path) -> None:
    import orjson

    _walk_and_save(store, "f.txt")
    (file,) = (store.root / "cache" / "blame").iterdir()
    body = orjson.loads(file.read_bytes())
    for runs in ([[99, 0]], [[3, 7]], [["a", 0]], [[-1, 0], [4, 0]]):
        file.write_bytes(orjson.dumps({**body, "runs": runs}))
        assert saved.load(store, load_history(store), "f.txt") is None
    file.unlink()
    file.symlink_to("/etc/passwd")  # a link planted in the store is not followed
    assert saved.load(store, load_history(store), "f.txt") is None
