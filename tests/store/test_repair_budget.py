"""``fsck --repair`` copies at most ``junk_tail.REPAIR_MOST`` bytes into side files over the
whole repair, not ``COPY_MOST`` a file without end (redteam48, left open: a thousand
planted session files with sparse tails made 129 GiB of side files). Every refused file is
still cut, so appends work again; what the budget left out is dropped and said. The bounds
are patched small here (the real ones are 129 and 258 MiB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import junk_tail

JUNK = b"x" * 99 + b"\n"  # 1,100 of them: past the head read's HEAD_REACH lines


def test_the_side_files_of_a_repair_hold_its_budget_at_most(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(junk_tail, "COPY_MOST", 4096)
    monkeypatch.setattr(junk_tail, "REPAIR_MOST", 6000, raising=False)
    with Store.open(ws) as store:
        sids = [store.start_session(agent="test").id for _ in range(3)]
        for sid in sids:
            store.append(sid, "note", {"text": "before"})
        paths = [store.backend.path(sid) for sid in sids]  # type: ignore[attr-defined]
    kept = [p.read_bytes() for p in paths]
    for p in paths:
        with open(p, "ab") as f:
            f.write(JUNK * 1100)
    with Store.open(ws) as store:
        moved = store.repair_logs()
        assert sorted(m.file for m in moved) == sorted(str(p) for p in paths)
        assert sum(m.bytes for m in moved) == 6000  # before: 3 x 4,096
        sides = sorted(ws.glob(".turnback/sessions/*.junk-*"))
        assert sum(s.stat().st_size for s in sides) == 6000
        assert len(sides) == 2  # the budget spent: the third's tail dropped, no side file
        assert [m.side for m in moved].count("") == 1
        assert all(m.bytes + m.dropped == len(JUNK) * 1100 for m in moved)
        assert sum(m.spent for m in moved) == 2  # the second cut short, the third none
        assert [p.read_bytes() for p in paths] == kept  # every file cut after its record
        for sid in sids:
            store.append(sid, "note", {"text": "after"})  # appends work again
