"""The store verifies everything it reads: ids before they become paths, bytes against their
hash, sizes and offsets against their bounds, trees against loops and depth.

Each test damages or crafts store files as an attacker (or a bad disk) would, then checks
that the operation stops with ``StoreDamaged`` (saying ``turnback fsck``), that nothing in
the workspace or beside it changed, and that no other exception escapes.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest
import zstandard

from turnback import Checkpoint, Store, StoreDamaged, TurnbackError
from turnback.objects import packs
from turnback.objects import trees as trees_mod
from turnback.objects.objectstore import BLOB, TREE, hash_bytes
from turnback.snapshot import changes as changes_mod
from turnback.store import fsck as fsck_mod
from wsutil import journal_left, picture, run_cli, write

from .crashkit import tally


@pytest.fixture(autouse=True)
def _packs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These attacks are on packs and their indexes: every batch writes one (a small one
    would go to the object log, tested in tests/store/test_object_log.py)."""
    from turnback.objects import packs
    monkeypatch.setattr(packs, "LOG_BYTES", 0)



def count(case: str) -> None:
    tally("verified reads").add_case(case, True)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    write(d, "keep.txt", "outside\n")
    return d


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    write(d, "small.txt", "small\n")  # packed
    write(d, "src/code.py", "print(1)\n")  # packed
    write(d, "big.bin", os.urandom(600_000))  # loose
    return d


def first_checkpoint(ws: Path) -> tuple[Store, Checkpoint]:
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "small.txt", "now\n")
    write(ws, "new.txt", "new\n")
    return store, cp


def raw_tree(entries: list[tuple[str, str, int, bytes]]) -> bytes:
    return b"".join(f"{m} {h} {n} ".encode() + name + b"\0" for m, h, n, name in entries)


def list_checkpoint(store: Store, tree: str, cid: str) -> str:
    """Append a checkpoint record naming ``tree`` as it is (no check on the way in)."""
    line = Checkpoint(cid, "crafted", "2030-01-01T00:00:00.000Z", tree, None, None).to_json()
    with open(store.root / "checkpoints.jsonl", "ab") as f:
        f.write(json.dumps(line).encode() + b"\n")
    return cid


def loose_as(store: Store, name: str, raw: bytes) -> None:
    """Write ``raw`` (``<type>\\0<content>``) as the loose file of object ``name``."""
    p = store.objects.root / name[:2] / name[2:]
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(zstandard.ZstdCompressor().compress(raw))


def rewrite_packed(store: Store, name: str, change: bytes, to: bytes) -> None:
    """Replace ``change`` by ``to`` (same length) inside packed object ``name``: its block is
    recompressed and appended to the pack, and the index points at the new block — a
    well-formed pack whose object no longer matches its name."""
    objs = store.objects
    objs.packs.refresh()
    loc = objs.packs.locate(name)
    assert loc is not None
    pack = objs.root / "pack" / f"{loc.pack}.pack"
    data = pack.read_bytes()
    block = zstandard.ZstdDecompressor().decompress(
        data[loc.block_off: loc.block_off + loc.block_len])
    obj = block[loc.off: loc.off + loc.length]
    assert change in obj and len(change) == len(to)
    block = block[: loc.off] + obj.replace(change, to, 1) + block[loc.off + loc.length:]
    new = zstandard.ZstdCompressor().compress(block)
    new_off = len(data)
    pack.write_bytes(data + new)
    idx = objs.root / "pack" / f"{loc.pack}.idx"
    rows = packs.read_index(idx)
    body = b"".join(
        packs._ENTRY.pack(bytes.fromhex(n), new_off if lc.block_off == loc.block_off
                          else lc.block_off,
                          len(new) if lc.block_off == loc.block_off else lc.block_len,
                          lc.off, lc.length)
        for n, lc in sorted(rows.items()))
    idx.write_bytes(packs.IDX_MAGIC + struct.pack(">I", len(rows)) + body)


def assert_damage(exc: TurnbackError, what: str) -> None:
    assert isinstance(exc, StoreDamaged), exc
    assert what in exc.message and "turnback fsck" in exc.message, exc.message


# -- 1. ids are checked before they become paths ---------------------------------------------

@pytest.mark.parametrize("tree", ["../../etc", "../../../../../../etc/passwd", "ab", "A" * 64])
def test_checkpoint_tree_id_never_becomes_a_path(ws: Path, outside: Path, tree: str) -> None:
    store, _cp = first_checkpoint(ws)
    cid = list_checkpoint(store, tree, "badtree00001")
    store = Store.open(ws)
    rep = store.fsck()  # before: read ../../etc as an object and aborted (Is a directory)
    bad = [d for d in rep.damaged if d["what"] == "checkpoint index"]
    assert bad and "not 64 lowercase hex digits" in bad[0]["problem"]
    before = picture(ws)
    with pytest.raises(TurnbackError):
        store.rewind(cid)
    assert picture(ws) == before
    with pytest.raises(StoreDamaged, match="turnback fsck"):
        store.objects.path(tree)
    count(f"checkpoint tree id {tree[:20]!r}")


@pytest.mark.parametrize("bad", ["../../../outside/keep.txt", "0" * 63, "0" * 65, "G" * 64])
def test_tree_entry_hash_never_becomes_a_path(ws: Path, outside: Path, bad: str) -> None:
    store, _cp = first_checkpoint(ws)
    tree = store.objects.put(TREE, raw_tree([("f", bad, 8, b"x.txt")]))
    cid = list_checkpoint(store, tree, "badentry0001")
    before, out = picture(ws), picture(outside)
    for op in (lambda: store.rewind(cid), lambda: store.read_file(cid, "x.txt"),
               lambda: store.changes(cid), lambda: store.diff(cid)):
        with pytest.raises(StoreDamaged) as info:
            op()
        assert_damage(info.value, "not 64 lowercase hex digits")
    assert picture(ws) == before and picture(outside) == out
    rep = store.fsck()
    assert cid in [d["id"] for d in rep.damaged if d["what"] == "checkpoint"]
    count(f"tree entry hash {bad[:20]!r}")


def test_pack_index_with_a_foreign_name_is_not_read(ws: Path) -> None:
    store, cp = first_checkpoint(ws)
    folder = store.objects.root / "pack"
    idx = next(folder.glob("*.idx"))
    (folder / "evil.idx").write_bytes(idx.read_bytes())
    store = Store.open(ws)
    assert "evil" in [d["id"] for d in store.fsck().damaged if d["what"] == "pack"]
    assert store.read_file(cp.id, "small.txt") == b"small\n"  # the real pack still serves
    count("pack index named evil.idx")


def test_session_index_keys_never_become_paths(ws: Path, outside: Path) -> None:
    store = Store.open(ws)
    store.start_session(session_id="s1")
    store.close()
    index = store.root / "index"
    (index / "summaries.json").unlink(missing_ok=True)
    entry = {"size": 0, "ino": 0, "lines": 0, "events": 0, "head": None, "header": {},
             "acc": {}, "stats": {}}
    (index / "sessions.json").write_text(json.dumps({"../../../../outside/evil": entry}))
    out, inside = picture(outside), picture(ws)
    store = Store.open(ws)
    assert [s.header.id for s in store.sessions()[0]] == ["s1"]
    store.close()
    assert picture(outside) == out  # before: outside/evil.json was written
    assert picture(ws) == inside
    count("session index key ../../../../outside/evil")


# -- 2. verified on read -----------------------------------------------------------------------

def test_altered_packed_blob_stops_rewind_and_show(ws: Path, outside: Path) -> None:
    store, cp = first_checkpoint(ws)
    small = store.trees.lookup(cp.tree, "small.txt")
    assert small is not None
    rewrite_packed(store, small.hash, b"small", b"EVIL!")
    store = Store.open(ws)
    before, out = picture(ws), picture(outside)
    for op in (lambda: store.rewind(cp.id), lambda: store.read_file(cp.id, "small.txt"),
               lambda: store.file_content(cp.id, "small.txt"), lambda: store.diff(cp.id),
               lambda: store.changes(cp.id)):
        with pytest.raises(StoreDamaged) as info:  # before: EVIL! reached the workspace
            op()
        assert_damage(info.value, small.hash[:12])
    assert picture(ws) == before and picture(outside) == out
    assert not journal_left(store.root)
    assert small.hash in [d["id"] for d in store.fsck().damaged if d["what"] == "object"]
    count("packed blob altered, block well formed")


def test_altered_packed_tree_is_refused(ws: Path) -> None:
    store, cp = first_checkpoint(ws)
    rewrite_packed(store, cp.tree, b"small.txt", b"small.exe")
    store = Store.open(ws)
    before = picture(ws)
    with pytest.raises(StoreDamaged) as info:  # before: the renamed file was restored
        store.rewind(cp.id)
    assert_damage(info.value, cp.tree[:12])
    assert picture(ws) == before
    count("packed tree altered, block well formed")


def test_altered_loose_object_is_refused_on_show(ws: Path) -> None:
    store, cp = first_checkpoint(ws)
    big = store.trees.lookup(cp.tree, "big.bin")
    assert big is not None
    loose_as(store, big.hash, b"blob\0not the big file")
    with pytest.raises(StoreDamaged) as info:  # before: showed the substituted bytes
        Store.open(ws).read_file(cp.id, "big.bin")
    assert_damage(info.value, big.hash[:12])
    count("loose blob replaced by a valid frame")


def test_trees_are_verified_once_per_read_from_disk(ws: Path) -> None:
    store, cp = first_checkpoint(ws)
    store = Store.open(ws)
    reads: list[str] = []
    raw = store.objects._raw

    def counting(name: str) -> bytes:
        reads.append(name)
        return raw(name)

    store.objects._raw = counting  # type: ignore[method-assign]
    store.trees.flatten(cp.tree)
    store.trees.flatten(cp.tree)
    assert sorted(reads) == sorted(set(reads))  # cache hits are not read (nor hashed) again


# -- 3. bounded decoding -----------------------------------------------------------------------

def test_frame_saying_more_than_any_object_is_refused(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    from turnback.objects import objectstore as objects
    store, cp = first_checkpoint(ws)
    big = store.trees.lookup(cp.tree, "big.bin")
    assert big is not None
    monkeypatch.setattr(objects, "MAX_LOOSE", 100_000, raising=False)
    with pytest.raises(StoreDamaged) as info:  # before: inflated whatever the frame held
        Store.open(ws).read_file(cp.id, "big.bin")
    assert_damage(info.value, "more than any object may")


def test_streamed_frame_inflating_past_the_cap_stops(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    """A frame that does not say its size (as streamed writes make) is counted as it inflates."""
    from turnback.objects import objectstore as objects
    store, cp = first_checkpoint(ws)
    big = store.trees.lookup(cp.tree, "big.bin")
    assert big is not None
    p = store.objects.root / big.hash[:2] / big.hash[2:]
    with open(p, "wb") as f, zstandard.ZstdCompressor().stream_writer(f) as w:
        w.write(b"blob\0" + bytes(3_000_000))  # a bomb: 3 MB of zeros in a few hundred bytes
    monkeypatch.setattr(objects, "MAX_LOOSE", 1_000_000, raising=False)
    store = Store.open(ws)
    with pytest.raises(StoreDamaged) as info:
        store.read_file(cp.id, "big.bin")
    assert_damage(info.value, "inflates past 1000000 bytes")
    write(ws, "big.bin", "changed\n")
    before = picture(ws)
    with pytest.raises(StoreDamaged):
        store.rewind(cp.id)
    assert picture(ws) == before


@pytest.mark.parametrize(("field", "value", "message"), [
    ("block_len", 0xFFFFFFF0, "names bytes"),
    ("block_off", 1 << 40, "names bytes"),
    ("block_off", 0, "names bytes"),
    ("off", 0xFFFFFF00, "past any block's end"),
    ("length", 0xFFFFFF00, "past any block's end"),
])
def test_pack_index_offsets_checked_against_the_file(ws: Path, field: str, value: int,
                                                     message: str) -> None:
    store, cp = first_checkpoint(ws)
    small = store.trees.lookup(cp.tree, "small.txt")
    assert small is not None
    store.objects.packs.refresh()
    loc = store.objects.packs.locate(small.hash)
    assert loc is not None
    idx = store.objects.root / "pack" / f"{loc.pack}.idx"
    rows = packs.read_index(idx)
    rows[small.hash] = rows[small.hash]._replace(**{field: value})
    body = b"".join(packs._ENTRY.pack(bytes.fromhex(n), *lc[1:]) for n, lc in sorted(rows.items()))
    idx.write_bytes(packs.IDX_MAGIC + struct.pack(">I", len(rows)) + body)
    with pytest.raises(StoreDamaged) as info:
        Store.open(ws).read_file(cp.id, "small.txt")
    assert_damage(info.value, message)
    count(f"pack index {field} = {value:#x}")


def nested(store: Store, depth: int) -> str:
    """A chain of ``depth`` folders (well-formed objects) with one file at the bottom."""
    blob = store.objects.put(BLOB, b"deep\n")
    h = store.objects.put(TREE, raw_tree([("f", blob, 5, b"f.txt")]))
    for _ in range(depth):
        h = store.objects.put(TREE, raw_tree([("d", h, 5, b"d")]))
    return h


def test_deep_tree_is_damage_not_recursion_error(ws: Path) -> None:
    store, _cp = first_checkpoint(ws)
    cid = list_checkpoint(store, nested(store, 1100), "deep00000001")
    store = Store.open(ws)
    before = picture(ws)
    for op in (lambda: store.rewind(cid), lambda: store.changes(cid),
               lambda: store.trees.flatten(store.resolve_checkpoint(cid).tree)):
        with pytest.raises(StoreDamaged) as info:  # before: RecursionError
            op()
        assert_damage(info.value, "deep")
    assert picture(ws) == before
    rep = store.fsck()
    assert cid in [d["id"] for d in rep.damaged if d["what"] == "checkpoint"]
    store.gc()  # before: RecursionError; its objects are kept (it is still listed)
    assert store.objects.exists(store.resolve_checkpoint(cid).tree)
    count("folders nested 1100 deep")


def test_tree_containing_itself_is_damage(ws: Path) -> None:
    """Only a loose file that lies about its name can loop; it is refused by its hash, and the
    walk's own check stands behind that."""
    store, _cp = first_checkpoint(ws)
    name = hash_bytes(TREE, b"placeholder")
    loose_as(store, name, b"tree\0" + raw_tree([("d", name, 0, b"loop")]))
    cid = list_checkpoint(store, name, "loop00000001")
    store = Store.open(ws)
    before = picture(ws)
    for op in (lambda: store.rewind(cid), lambda: store.changes(cid),
               lambda: store.read_file(cid, "loop/loop/loop/x")):
        with pytest.raises(StoreDamaged):  # before: RecursionError
            op()
    assert picture(ws) == before
    assert cid in [d["id"] for d in store.fsck().damaged if d["what"] == "checkpoint"]
    store.gc()
    # and without the hash check (a reader handed such trees) the walk stops by itself
    store.objects._raw = lambda n: b"tree\0" + raw_tree([("d", name, 0, b"loop")])  # type: ignore[method-assign]
    store.trees.clear()
    with pytest.raises(StoreDamaged, match="contains itself"):
        store.trees.flatten(name)
    count("tree containing itself")


def test_tree_naming_one_subtree_many_times_is_bounded(ws: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Small on disk, millions of paths when flattened: walks stop at MAX_FILES."""
    store, _cp = first_checkpoint(ws)
    blob = store.objects.put(BLOB, b"x")
    h = store.objects.put(TREE, raw_tree([("f", blob, 1, f"f{i:03}".encode())
                                          for i in range(100)]))
    for _ in range(3):  # 100 ** 4 = 100,000,000 paths
        h = store.objects.put(TREE, raw_tree([("d", h, 1, f"d{i:03}".encode())
                                              for i in range(100)]))
    cid = list_checkpoint(store, h, "bomb00000001")
    for mod in (trees_mod, changes_mod, fsck_mod):
        monkeypatch.setattr(mod, "MAX_FILES", 2_000, raising=False)
    store = Store.open(ws)
    before = picture(ws)
    for op in (lambda: store.rewind(cid), lambda: store.changes(cid)):
        with pytest.raises(StoreDamaged) as info:
            op()
        assert_damage(info.value, "more than 2000 files")
    assert picture(ws) == before
    assert cid in [d["id"] for d in store.fsck().damaged if d["what"] == "checkpoint"]
    count("tree naming one subtree 100x at 4 levels")


# -- 4. no traceback ---------------------------------------------------------------------------

def test_cli_reports_damage_without_a_traceback(ws: Path) -> None:
    store, _cp = first_checkpoint(ws)
    list_checkpoint(store, "../../etc", "badtree00001")
    list_checkpoint(store, nested(store, 1100), "deep00000001")
    store.close()
    for args, code in ((["fsck"], 1), (["rewind", "deep00000001"], 1),
                       (["diff", "deep00000001"], 1), (["checkpoints"], 0)):
        proc = run_cli(ws, *args, check=None)
        err = proc.stderr.decode()
        assert "Traceback" not in err, (args, err)
        assert proc.returncode == code, (args, proc.returncode, err)
    count("CLI on a damaged store")


def test_checkpoint_record_with_wrong_types_is_a_bad_line(ws: Path) -> None:
    store, _cp = first_checkpoint(ws)
    tree = store.checkpoints()[-1].tree
    with open(store.root / "checkpoints.jsonl", "ab") as f:
        f.write(json.dumps({"id": "odd000000001", "tree": tree, "partial": True,
                            "absent": [1, 2]}).encode() + b"\n")
    store = Store.open(ws)
    with pytest.raises(TurnbackError):  # before: AttributeError ('int' has no 'split')
        store.rewind("odd000000001")
    assert any("absent" in d["problem"] for d in store.fsck().damaged)
