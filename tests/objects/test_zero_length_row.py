"""A crafted index row of length 0 (redteam39's open item).

No writer writes one (an object is at least ``blob\\0``), but an index is input: such a
row decoded nothing (``need`` 0) and cached an empty block counted as 0 bytes, so the
cache's byte bound (``CACHE_BYTES``) did not bound how many entries it held, one per
crafted row. A row shorter than the shortest object is now damage, refused before the
cache, naming fsck.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.objects.test_block_parts import _payloads, _written

from turnback.errors import StoreDamaged
from turnback.objects.packs import Loc


@pytest.mark.parametrize("length", [0, 4])
def test_a_row_shorter_than_any_object_is_damage_and_caches_nothing(
        tmp_path: Path, length: int) -> None:
    payloads = _payloads(20)
    reader, locs = _written(tmp_path, payloads)
    real = next(iter(locs.values()))
    size = reader.path_of(real.pack).stat().st_size
    before = dict(reader._blocks)
    refused = 0
    for at in range(8, min(size, 208)):  # 200 rows, each a block of its own
        with pytest.raises(StoreDamaged, match="fsck") as got:
            reader.read(Loc(real.pack, at, 1, 0, length))
        assert real.pack in str(got.value)
        refused += 1
    assert refused == min(size, 208) - 8
    assert reader._blocks.keys() == before.keys(), "a crafted row's empty block was cached"
    # a real row is still read
    name, loc = next(iter(locs.items()))
    assert reader.read(loc) == payloads[int(name, 16)]
