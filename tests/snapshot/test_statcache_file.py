"""The stat cache's file: rows grouped by folder with their spans in the header; a file
written before the spans (rows in any order) still opens, and damaged spans cost a re-read,
never a wrong tree."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.jsonl import dumps, loads
from turnback.snapshot.prescan import MAGIC
from wsutil import age, age_tree, plain_scan, write

U32 = struct.Struct("<I")


def _parts(path: Path) -> tuple[dict, list[bytes], list[bytes]]:  # type: ignore[type-arg]
    data = path.read_bytes()
    pos = len(MAGIC)
    (hlen,) = U32.unpack_from(data, pos)
    header = loads(data[pos + 4: pos + 4 + hlen])
    pos += 4 + hlen
    count, klen = U32.unpack_from(data, pos)[0], U32.unpack_from(data, pos + 4)[0]
    pos += 8
    keys = data[pos: pos + klen].split(b"\0")
    rows = [data[pos + klen + i * 76: pos + klen + (i + 1) * 76] for i in range(count)]
    return header, keys, rows


def _put(path: Path, header: dict, keys: list[bytes], rows: list[bytes]) -> None:  # type: ignore[type-arg]
    head = dumps(header)
    k = b"\0".join(keys)
    path.write_bytes(b"".join([MAGIC, U32.pack(len(head)), head, U32.pack(len(rows)),
                               U32.pack(len(k)), k, *rows]))


def _workspace(ws: Path) -> None:
    for i in range(30):
        write(ws, f"d{i % 3}/sub{i % 2}/f{i}.txt", f"content {i}")
    write(ws, "top.txt", "top")
    age_tree(ws)


def test_rows_are_grouped_by_folder_and_spanned(store: Store, ws: Path) -> None:
    _workspace(ws)
    store.checkpoint()
    header, keys, rows = _parts(store.root / "cache" / "stat.bin")
    spans = header["rowspans"]
    assert sum(n for _, _, _, n in spans.values()) == len(keys) == len(rows) == 31
    for folder, (_, _, r0, n) in spans.items():
        assert all(k.decode().rpartition("/")[0] == folder for k in keys[r0: r0 + n])


def test_a_file_without_spans_rows_in_any_order_still_serves_its_rows(
        store: Store, ws: Path) -> None:
    _workspace(ws)
    first = store.checkpoint()
    store.close()
    path = store.root / "cache" / "stat.bin"
    header, keys, rows = _parts(path)
    del header["rowspans"]
    del header["dirrecs"]  # rows looked up one by one
    order = sorted(range(len(keys)), key=lambda i: keys[i][::-1])  # folders interleaved
    _put(path, header, [keys[i] for i in order], [rows[i] for i in order])
    with Store.open(ws) as again:
        res = again.scanner.scan()
        assert (res.tree, res.read) == (first.tree, 0), "every row found: nothing read"
    assert "rowspans" in _parts(path)[0], "written grouped again"


def test_damaged_spans_cost_a_re_read_never_a_wrong_tree(store: Store, ws: Path) -> None:
    _workspace(ws)
    first = store.checkpoint()
    store.close()
    path = store.root / "cache" / "stat.bin"
    header, keys, rows = _parts(path)
    del header["dirrecs"]
    spans = list(header["rowspans"].items())
    # two folders' names swapped: the spans still tile the file, but name the other's rows
    (a, sa), (b, sb) = spans[0], spans[1]
    header["rowspans"] = dict([(b, sa), (a, sb), *spans[2:]])
    _put(path, header, keys, rows)
    with Store.open(ws) as again:
        res = again.scanner.scan()
    assert res.tree == first.tree == plain_scan(ws).tree
    assert res.read == sa[3] + sb[3], "those two folders' files read again, no other"
    header["rowspans"] = {"": [0, 5, 0, 10**6]}  # past the end: the whole cache is dropped
    _put(path, header, keys, rows)
    with Store.open(ws) as again:
        res = again.scanner.scan()
    assert (res.tree, res.read) == (first.tree, 31)
    header["rowspans"] = "not spans"
    _put(path, header, keys, rows)
    with Store.open(ws) as again:
        assert again.scanner.scan().tree == first.tree


def test_a_save_copies_unchanged_folders_from_the_loaded_file(store: Store, ws: Path) -> None:
    _workspace(ws)
    store.checkpoint()
    store.close()
    path = store.root / "cache" / "stat.bin"
    _, keys_before, rows_before = _parts(path)
    before = dict(zip(keys_before, rows_before, strict=True))
    write(ws, "d1/sub0/f4.txt", "changed")  # a folder between unchanged ones
    write(ws, "d2/new.txt", "new")
    age(ws / "d1/sub0/f4.txt")
    age(ws / "d2/new.txt")
    with Store.open(ws) as again:
        second = again.checkpoint()
        again.checkpoint()  # the one that records every folder: a save of spans only
    _, keys, rows = _parts(path)
    after = dict(zip(keys, rows, strict=True))
    assert set(after) == set(before) | {b"d2/new.txt"}
    assert {k for k in after if after[k] != before.get(k)} == {b"d1/sub0/f4.txt", b"d2/new.txt"}
    with Store.open(ws) as third:
        res = third.scanner.scan()
    assert (res.tree, res.read) == (second.tree, 0) and res.tree == plain_scan(ws).tree


def test_a_loaded_file_cut_short_underneath_costs_a_re_read(store: Store, ws: Path) -> None:
    _workspace(ws)
    first = store.checkpoint()
    store.close()
    path = store.root / "cache" / "stat.bin"
    with Store.open(ws) as again:
        again.scanner.statcache.load()
        with path.open("r+b") as f:  # the very file it holds open, truncated in place
            f.truncate(path.stat().st_size // 2)
        write(ws, "d0/sub0/f0.txt", "changed")
        age_tree(ws)
        cp = again.checkpoint()
    assert cp.tree == plain_scan(ws).tree != first.tree
    with Store.open(ws) as third:
        assert third.scanner.scan().tree == cp.tree


def test_rows_of_an_incremental_scan_are_kept_for_folders_it_did_not_unpack(
        store: Store, ws: Path) -> None:
    _workspace(ws)
    store.checkpoint()
    store.checkpoint()  # records every folder: the next full scan reads no file
    changed = ["d0/sub0/f0.txt", "d1/sub1/f1.txt", "d2/sub0/f2.txt"]
    for rel in changed:
        write(ws, rel, f"changed {rel}")
        age(ws / rel)
    cp = store.checkpoint(dirty=changed)  # incremental: rows added to folders left packed
    assert cp.tree == plain_scan(ws).tree
    store.close()  # saves what throttled incremental saves held back
    with Store.open(ws) as again:
        res = again.scanner.scan()
    assert (res.tree, res.read) == (cp.tree, 0), "the changed files' rows were saved"


def _plant_long_header(path: Path, what: str) -> None:
    """A header said to be 4 GiB long in a file of a few bytes, or one that its (sparse)
    file does hold, past ``HEADER_MAX``: anything in ``.turnback/`` may be planted."""
    from turnback.snapshot import prescan

    if what == "said":
        path.write_bytes(MAGIC + U32.pack(2**32 - 1) + b"{}" + bytes(8))
        return
    hlen = getattr(prescan, "HEADER_MAX", 64 << 20) + (16 << 20)
    with path.open("wb") as f:
        f.write(MAGIC + U32.pack(hlen))
        f.truncate(len(MAGIC) + 4 + hlen + 8)  # sparse: no disk space, zero counts after


@pytest.mark.parametrize("what", ["said", "held"])
def test_a_planted_long_header_is_never_read_and_said_once(
        store: Store, ws: Path, what: str, caplog: pytest.LogCaptureFixture) -> None:
    """Before, the store allocated what the header said (``pread`` of 4 GiB) or read the
    whole sparse header; now neither: the cache is not used (the checkpoint reads every
    file and is right), the log names the file once, and the next save mends it."""
    import logging
    import tracemalloc

    _workspace(ws)
    store.checkpoint()
    store.close()
    path = store.root / "cache" / "stat.bin"
    _plant_long_header(path, what)
    caplog.set_level(logging.WARNING, logger="turnback.store")
    tracemalloc.start()
    try:
        with Store.open(ws) as again:
            again.scanner.statcache.load()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak} bytes allocated reading a planted header"
    with Store.open(ws) as again:  # the same file again: not said twice
        cp = again.checkpoint()
    assert cp.tree == plain_scan(ws).tree
    told = [r.getMessage() for r in caplog.records if r.name == "turnback.store"]
    assert len(told) == 1 and str(path) in told[0] and "not read" in told[0], told
    header, keys, _ = _parts(path)
    assert len(keys) == 31 and "rowspans" in header, "the cache written anew"


def test_the_start_childs_reading_of_a_long_header_allocates_nothing(tmp_path: Path) -> None:
    """``prescan.read_records`` (the start child's, the CLI's early child's) refused a
    header longer than its file, but read one its file held whole, however long."""
    import tracemalloc

    from turnback.snapshot import prescan

    path = tmp_path / "stat.bin"
    _plant_long_header(path, "held")
    tracemalloc.start()
    try:
        got = prescan.read_records(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got is None
    assert peak < 4 << 20, f"{peak} bytes allocated reading a planted header"


@pytest.mark.parametrize("planted", [5, [1], {"a": 1}, ["x", "y", "z", 3], [None, 1, 2, 3]])
def test_folder_trees_of_the_wrong_types_cost_a_re_read_not_every_checkpoint(
        store: Store, ws: Path, planted: object) -> None:
    """A planted ``dirtrees`` whose entries are not [hash, files, bytes, entries]: the
    build indexed and added them, so **every** checkpoint failed (TypeError, IndexError,
    KeyError) and none wrote the cache anew. The whole cache is dropped instead."""
    _workspace(ws)
    first = store.checkpoint()
    store.close()
    path = store.root / "cache" / "stat.bin"
    header, keys, rows = _parts(path)
    header["dirtrees"] = dict.fromkeys(header["dirtrees"], planted)
    _put(path, header, keys, rows)
    with Store.open(ws) as again:
        cp = again.checkpoint()
    assert cp.tree == first.tree == plain_scan(ws).tree
    assert all(type(t) is list and type(t[0]) is str for t in _parts(path)[0]["dirtrees"].values())


def test_a_header_exactly_at_its_file_or_the_cap_is_read_one_byte_more_is_not() -> None:
    """The bound's edges (held): a file of MAGIC, the length, the header and the two
    counts holds a header of its size less 20 bytes, not one byte more; the cap is
    ``HEADER_MAX`` itself, whatever a sparse file holds."""
    from turnback.snapshot.prescan import HEADER_MAX, header_fits

    fixed = len(MAGIC) + 3 * U32.size
    assert header_fits(100, 100 + fixed) and not header_fits(101, 100 + fixed)
    assert header_fits(0, fixed) and not header_fits(0, fixed - 1)
    assert header_fits(HEADER_MAX, 1 << 40) and not header_fits(HEADER_MAX + 1, 1 << 40)
    assert not header_fits(2**32 - 1, 2**40)
