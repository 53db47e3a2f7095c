"""A rewind's safety checkpoint in a ``--store`` store replaced after the rewind's look.

The safety checkpoint's record went through the held root (``trust31``), but its session
event and, after the journal, the stat cache were written by path: with a copy of the
store put at its path, the copy's session got an event naming a checkpoint it lacks, then
the journal, the rewind's event and its operation-log line, and the stat cache. Now the
record, its event and its listing go through one ``dup`` of the held root and the
session's folder opened there (``store/record_folders``, as a checkpoint's), the root is
looked at again before the journal (a replaced store's rewind is refused, nothing
rewound), and the stat cache is not saved where the path leads elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest

from turnback import Store
from turnback.errors import Conflict, TurnbackError
from turnback.fs.osflags import DESCRIPTORS
from turnback.objects.objectstore import ObjectStore
from turnback.rewind.oplog import OpLog

from .swap_setup import replaced_after


def _contents(root: Path) -> dict[str, bytes]:
    """Every file at or below ``root`` (a link followed) and its bytes."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _rewound(tmp_path: Path, put: str, owner: type, method: str
             ) -> tuple[Path, Path, dict[str, bytes], dict[str, bytes], Exception | None]:
    """A rewind of a ``--store`` store moved to ``moved`` and ``put`` in its place right
    after ``owner.method``: (workspace, moved, what the store's path and ``elsewhere``
    (the link's target) held just after the swap, what they held after the rewind, the
    rewind's error)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store_dir = tmp_path / "named-store"
    moved = tmp_path / "moved"

    def there() -> dict[str, bytes]:
        return {**_contents(store_dir.absolute()),
                **{f"elsewhere/{k}": v for k, v in _contents(elsewhere).items()}}

    at_swap: dict[str, bytes] = {}
    error: Exception | None = None
    with Store.open(ws, store_dir=store_dir) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        with replaced_after(owner, method, store.root, moved, put, elsewhere):
            swapping = getattr(owner, method)

            def swapped_then_noted(self: object, *a: object, **kw: object) -> object:
                out = swapping(self, *a, **kw)
                at_swap.update(there())
                return out

            with mock.patch.object(owner, method, swapped_then_noted):
                try:
                    store.rewind(first.id)
                except TurnbackError as exc:
                    error = exc
        left = there()
    return ws, moved, at_swap, left, error


@pytest.mark.parametrize("put", ["a copy", "a link", "an empty folder"])
def test_nothing_of_the_rewind_where_the_path_leads(tmp_path: Path, put: str) -> None:
    """Swapped after the safety's objects and record went into its log frame, before its
    record's line and its event: what is at the path is as the swap left it."""
    ws, moved, at_swap, left, error = _rewound(tmp_path, put, ObjectStore, "commit_unsynced")
    assert left == at_swap  # nothing written, nothing removed there
    assert (ws / "f.txt").read_text() == "two\n"  # nothing rewound
    assert isinstance(error, Conflict) and "replaced" in str(error)
    if DESCRIPTORS:  # the safety checkpoint and its event in the store looked at: its
        # record in its log frame (listed once the frame is synced: not by a path that
        # leads elsewhere), put back at that store's next open
        events = (moved / "sessions" / "workspace.jsonl").read_bytes().splitlines()
        with Store.open(ws, store_dir=moved) as again:
            safety = again.checkpoints()[-1]
        assert safety.label.startswith("before rewind")
        assert f'"checkpoint":"{safety.id}"'.encode() in events[-1]
        assert safety.id in str(error)


def test_no_stat_cache_saved_where_the_path_leads(tmp_path: Path) -> None:
    """Swapped after the journal (a copy put there): the stat cache, saved by path after
    it, went into the copy."""
    _ws, _moved, at_swap, left, _error = _rewound(tmp_path, "a copy", OpLog, "begin")
    assert "cache/stat.bin" in at_swap
    assert left["cache/stat.bin"] == at_swap["cache/stat.bin"]
