"""``Applier.preload``'s block order (``rewind29``) under a red-team pass (``redteam39``):
a target list with duplicates, targets in several packs and logs, targets missing or not
even names. Probe: sound before; kept as a test of what the order must not break."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import blake3
import pytest

from turnback import Store
from turnback.objects.packs import Loc, PackReader
from turnback.objects.trees import LINK, Entry
from turnback.rewind.apply import Applier
from turnback.rewind.plan import Plan


def _text(seed: int) -> bytes:
    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(2000):04d}" for _ in range(900)).encode() + b"\n"


def test_duplicates_many_packs_and_missing_targets_preload_each_stored_one_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    texts: dict[str, bytes] = {}
    for round_ in range(3):  # three stores open in turn: a log each
        with Store.open(ws, create=True) as store:
            for i in range(6):
                rel = f"r{round_}/f{i}.txt"
                texts[rel] = _text(round_ * 10 + i)
                (ws / rel).parent.mkdir(exist_ok=True)
                (ws / rel).write_bytes(texts[rel])
            store.checkpoint(label=f"c{round_}")
    with Store.open(ws) as store:
        objects = store.objects
        objects.packs.refresh()  # as reading the plan's trees does
        names = {rel: blake3.blake3(b"blob\0" + t).hexdigest() for rel, t in texts.items()}
        where = {objects.packs.locate(n) for n in names.values()}
        assert None not in where and len({loc.pack for loc in where if loc}) >= 2
        plan = Plan()
        for rel, name in names.items():
            plan.write[rel] = Entry("f", name, len(texts[rel]))
            plan.create["copy/" + rel] = Entry("f", name, len(texts[rel]))  # duplicates
        plan.create["missing.txt"] = Entry("f", hashlib.sha256(b"x").hexdigest(), 1)
        plan.create["not-a-name.txt"] = Entry("f", "zz" * 32, 1)
        plan.create["short.txt"] = Entry("f", "ab", 1)
        plan.create["link"] = Entry(LINK, names["r0/f0.txt"], 5)
        blocks: list[tuple[str, int]] = []
        decompress = PackReader._decompress

        def counted(self: PackReader, loc: Loc, need: int) -> bytes:
            blocks.append((loc.pack, loc.block_off))
            return decompress(self, loc, need)

        monkeypatch.setattr(PackReader, "_decompress", counted)
        objects.packs._blocks.clear()
        objects.packs._cached = 0
        applier = Applier(str(ws), objects, fsync=False)
        applier.preload(plan)
        want = {name: texts[rel] for rel, name in names.items()}
        assert applier._loaded == want  # each stored target once, its bytes; none else
        assert len(blocks) == len(set(blocks)), f"a block decoded twice: {blocks}"
