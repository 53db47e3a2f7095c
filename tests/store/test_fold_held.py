"""A server's held batches as raw zstd frames (``ObjectStore.raw_held``), folded into a pack
at the configured level in its quiet time (``Store.fold_held``): the stored bytes come back,
from the log and from the pack, and the checkpoint stays listed and durable throughout."""

from __future__ import annotations

import os
from pathlib import Path

import zstandard

from turnback import Store
from turnback.fs.locks import rw_lock
from turnback.objects import packlog
from turnback.objects.packs import TREE_LEVEL, _compressor, _in_parts, read_index
from wsutil import age_tree, write


def _edit(ws: Path, tag: str) -> dict[str, str]:
    # compressible text: a raw block is then larger than any compressed one
    files = {f"d{i}/f{i}.txt": f"{tag} line {i}\n" * 400 for i in range(10)}
    for rel, text in files.items():
        write(ws, rel, text)
    age_tree(ws)
    return files


def _blocks(path: Path) -> list[bytes]:
    """The zstd frames (blocks) a log's frames or a pack's index place objects in."""
    data = path.read_bytes()
    if path.parent.name == "log":
        fd = os.open(path, os.O_RDONLY)
        try:
            found, _ = packlog.frames(fd, 0, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        rows = b"".join(f.rows for f in found)
    else:
        rows = (path.with_suffix(".idx")).read_bytes()[len(b"TBIDX1\n") + 4:]
    places = {(int.from_bytes(rows[i + 32: i + 40], "big"),
               int.from_bytes(rows[i + 40: i + 44], "big")) for i in range(0, len(rows), 52)}
    return [data[off: off + length] for off, length in sorted(places)]


def _raw(block: bytes) -> bool:
    """Whether a zstd frame's first block is stored raw (block type 0)."""
    assert block[:4] == b"\x28\xb5\x2f\xfd"
    fhd = block[4]
    single = bool(fhd & 0x20)
    size_bytes = [1 if single else 0, 2, 4, 8][fhd >> 6]
    at = 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3] + size_bytes
    return (block[at] >> 1) & 3 == 0


def _logs(root: Path) -> list[Path]:
    return [root / "objects" / "log" / n for n in packlog.log_names(root / "objects" / "log")]


def _packs(root: Path) -> list[Path]:
    folder = root / "objects" / "pack"
    return sorted(folder / n for n in os.listdir(folder) if n.endswith(".pack"))


def test_a_servers_held_batch_goes_raw_reads_back_and_folds_to_the_configured_level(
        ws: Path) -> None:
    """Fails before: the held batch's file block went out at level 1 (compressed), and
    there was no fold (``Store.fold_held``)."""
    root = ws / ".turnback"
    _edit(ws, "start")  # the folders there before: an at-once checkpoint lists none whole
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)  # the first checkpoint's log out of the way
        store.objects.raw_held = True
        files = _edit(ws, "held")
        cp = store.checkpoint_now(set(files), label="at once")
        assert cp is not None
        store.save_scan_cache()
        [log] = [p for p in _logs(root) if p.stat().st_size]
        blocks = _blocks(log)
        assert blocks and all(_raw(b) for b in blocks)
        assert store.objects.unfolded
        for rel, text in files.items():  # read back from the raw frames
            assert store.file_content(cp.id, rel).text == text
        assert store.fold_held() is True
        assert not store.objects.unfolded
        # the log merged away, the next one made ahead (empty, named)
        assert not log.exists()
        assert [p.stat().st_size for p in _logs(root)] == [0]
        level = store.config.compression_level
        for pack in _packs(root):
            # a file block's frame is cut at object ends (``packs.SUB_BLOCK``)
            parts: dict[int, list[tuple[str, int, int]]] = {}
            for name, loc in read_index(pack.with_suffix(".idx")).items():
                parts.setdefault(loc.block_off, []).append((name, loc.off, loc.length))
            data_at = pack.read_bytes()
            for block in _blocks(pack):
                data = zstandard.ZstdDecompressor().decompress(block)
                assert not _raw(block)
                objects = sorted(parts[data_at.index(block)], key=lambda row: row[1])
                assert block in (_in_parts(_compressor(level), data, objects),
                                 _compressor(TREE_LEVEL).compress(data))
        for rel, text in files.items():
            assert store.file_content(cp.id, rel).text == text
        assert store.fold_held() is False  # nothing raw since
        # the next checkpoint goes to the log made ahead
        more = _edit(ws, "next")
        again = store.checkpoint_now(set(more), label="next")
        assert again is not None
        assert [p.stat().st_size > 0 for p in _logs(root)] == [True]
    with Store.open(ws) as other:  # another process sees both, from the pack and the log
        ids = [c.id for c in other.checkpoints()]
        assert cp.id in ids and again.id in ids
        for rel, text in more.items():
            assert other.file_content(again.id, rel).text == text
        for rel, text in files.items():
            assert other.file_content(cp.id, rel).text == text


def test_a_store_not_told_to_fold_keeps_compressed_frames(ws: Path) -> None:
    """The CLI and the API (no quiet time after them): a held batch as before."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)
        files = _edit(ws, "cli")
        cp = store.checkpoint(dirty=set(files), label="cli")
        [log] = [p for p in _logs(root) if p.stat().st_size]
        assert not any(_raw(b) for b in _blocks(log))
        assert not store.objects.unfolded and store.fold_held() is False
        assert log.exists()
        assert store.file_content(cp.id, "d1/f1.txt").text == files["d1/f1.txt"]


def test_a_fold_waits_for_a_busy_gc_lock_and_loses_nothing(ws: Path) -> None:
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.objects.raw_held = True
        files = _edit(ws, "busy")
        cp = store.checkpoint(dirty=set(files), label="busy")
        with rw_lock(root / "locks" / "gc", exclusive=True):  # a gc, a merge
            assert store.fold_held() is False
        assert store.objects.unfolded
        assert any(p.stat().st_size for p in _logs(root))
        assert store.fold_held() is True
        assert all(not p.stat().st_size for p in _logs(root))
        for rel, text in files.items():
            assert store.file_content(cp.id, rel).text == text


def test_raw_frames_a_server_left_unfolded_are_packed_by_the_next_merge(ws: Path) -> None:
    """A server gone before its quiet moment: its raw frames are read, listed, and packed
    at the configured level by whichever process merges next."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)
        store.objects.raw_held = True
        files = _edit(ws, "left")
        cp = store.checkpoint(dirty=set(files), label="left")
    assert all(_raw(b) for p in _logs(root) if p.stat().st_size for b in _blocks(p))
    with Store.open(ws) as other:
        assert cp.id in [c.id for c in other.checkpoints()]
        assert other.merge_logs(at_least=0) is not None
        assert not any(p.stat().st_size for p in _logs(root))
        assert not any(_raw(b) for p in _packs(root) for b in _blocks(p))
        for rel, text in files.items():
            assert other.file_content(cp.id, rel).text == text


def test_the_log_made_ahead_and_never_written_goes_at_close(ws: Path) -> None:
    root = ws / ".turnback"
    store = Store.open(ws, create=True)
    store.checkpoint(label="walk")
    store.objects.raw_held = True
    files = _edit(ws, "ahead")
    store.checkpoint(dirty=set(files), label="ahead")
    assert store.fold_held() is True
    assert [p.stat().st_size for p in _logs(root)] == [0]
    store.close()
    assert _logs(root) == []
