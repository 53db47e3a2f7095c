"""Store.adopt_checkpoints (what a pull writes through): records whose trees hold a path no
rewind may write are refused whole, also when earlier checkpoints of the same batch share
their other folders (those are checked once, not skipped wrongly)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.models import Checkpoint
from turnback.objects.objectstore import BLOB
from turnback.objects.trees import DIR, FILE, Entry


def _record(cid: str, tree: str) -> Checkpoint:
    return Checkpoint(cid, "pulled", "2026-01-01T00:00:00Z", tree, None, None,
                      files=1, bytes=1, origin="other-12345678")


@pytest.mark.parametrize("bad", [".git", ".GIT", "git~1", ".turnback"])
def test_a_reserved_path_in_a_later_checkpoint_is_refused_with_nothing_added(
        tmp_path: Path, bad: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as s:
        def build() -> list[Checkpoint]:
            blob = s.objects.put(BLOB, b"x\n")
            src = s.trees.put({"a.py": Entry(FILE, blob, 2)})
            good = s.trees.put({"src": Entry(DIR, src, 2), "r.txt": Entry(FILE, blob, 2)})
            hidden = s.trees.put({"config": Entry(FILE, blob, 2)})
            nested = s.trees.put({"a.py": Entry(FILE, blob, 2), bad: Entry(DIR, hidden, 2)})
            evil = s.trees.put({"src": Entry(DIR, nested, 4), "r.txt": Entry(FILE, blob, 2)})
            return [_record("c0ffee000001", good), _record("c0ffee000002", evil)]

        with pytest.raises(TurnbackError):
            s.adopt_checkpoints(build)
        assert s.checkpoints() == []


def test_checkpoints_sharing_folders_are_adopted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as s:
        def build() -> list[Checkpoint]:
            one = s.objects.put(BLOB, b"1\n")
            two = s.objects.put(BLOB, b"2\n")
            src = s.trees.put({"a.py": Entry(FILE, one, 2)})
            first = s.trees.put({"src": Entry(DIR, src, 2), "r.txt": Entry(FILE, one, 2)})
            second = s.trees.put({"src": Entry(DIR, src, 2), "r.txt": Entry(FILE, two, 2)})
            return [_record("c0ffee000001", first), _record("c0ffee000002", second)]

        added = s.adopt_checkpoints(build)
        assert [c.id for c in added] == ["c0ffee000001", "c0ffee000002"]
        assert s.read_file("c0ffee000002", "r.txt") == b"2\n"
        assert s.read_file("c0ffee000002", "src/a.py") == b"1\n"
