"""``checkpoints.jsonl``'s last line is input too: the whole-tree no-op takes a recorded root
equal to the tree it names as held without a look-up (``CheckpointIndex.last_tree``,
``noop28``). A planted line the index does not take for a checkpoint (no id, a tree that is
no object name) named, with a stat cache planted beside it, a root the store lacks — or
``../../x`` — and the no-op committed it (redteam35). Only a line the index itself would
list is believed."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.jsonl import dumps, loads
from turnback.snapshot import prescan
from wsutil import plain_scan

from .test_planted_trees import MISSING, U32, _fork_now, _whole_answers, _workspace


def _plant_root(ws: Path, tree: str) -> None:
    """The stat cache's recorded root made ``tree``; all else as saved."""
    path = ws / ".turnback" / "cache" / "stat.bin"
    data = path.read_bytes()
    pos = len(prescan.MAGIC)
    (hlen,) = U32.unpack_from(data, pos)
    header = loads(data[pos + 4: pos + 4 + hlen])
    header["dirtrees"][""][0] = tree
    head = dumps(header)
    path.write_bytes(data[:pos] + U32.pack(len(head)) + head + data[pos + 4 + hlen:])


def _last_record(ws: Path) -> dict[str, object]:
    lines = (ws / ".turnback" / "checkpoints.jsonl").read_bytes().splitlines()
    got = loads(lines[-1])
    assert isinstance(got, dict)
    return got


@pytest.mark.parametrize("line", ["tree only", "no id", "tree no name", "id no id"])
def test_a_planted_last_line_the_index_does_not_list_is_not_believed(
        ws: Path, monkeypatch: pytest.MonkeyPatch, line: str) -> None:
    """A last line the index skips (not a checkpoint record, or one whose ids name no
    object) and a stat cache whose root is the tree it names: the no-op walks, and its
    checkpoint is the workspace's, readable; fsck names only the planted line. Failed
    before: the planted root was committed (``MISSING``, or ``../../x`` as a checkpoint's tree)."""
    _workspace(ws)
    tree = "../../x" if line == "tree no name" else MISSING
    record = _last_record(ws)
    planted: dict[str, object] = {
        "tree only": {"tree": tree},
        "no id": {k: v for k, v in {**record, "tree": tree}.items() if k != "id"},
        "tree no name": {**record, "id": "0" * 26, "tree": tree},
        "id no id": {**record, "id": "../x", "tree": tree},
    }[line]
    _plant_root(ws, tree)
    with (ws / ".turnback" / "checkpoints.jsonl").open("ab") as f:
        f.write(dumps(planted) + b"\n")
    _fork_now(monkeypatch)
    taken = _whole_answers(monkeypatch)
    with Store.open(ws) as s:
        s.scanner.fork_verify = True
        cp = s.checkpoint()
        assert cp.tree == plain_scan(ws).tree
        for path, _entry in s.trees.walk(cp.tree, ""):
            assert s.file_content(cp.id, path).text is not None
        # fsck names the planted line, and no object missing
        assert [d["what"] for d in s.fsck().damaged] == ["checkpoint index"]
    assert taken == [False], "checked whole, declined for the root the store lacks"


def test_the_last_checkpoint_record_is_still_believed(ws: Path) -> None:
    """The usual no-op's case keeps its answer: the last line a checkpoint's record."""
    _workspace(ws)
    with Store.open(ws) as s:
        assert s.index.last_tree() == s.checkpoints()[-1].tree
