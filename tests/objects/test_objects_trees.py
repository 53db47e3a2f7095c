"""Content-addressed objects and tree listings."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from texttrees import encode_text
from turnback import NotFound, StoreDamaged, Unsafe
from turnback.objects.objectstore import BLOB, STREAM_THRESHOLD, TREE, ObjectStore, hash_bytes
from turnback.objects.trees import (
    DIR,
    EXEC,
    FILE,
    LINK,
    MAX_ENTRIES,
    Entry,
    Tree,
    TreeReader,
    _encode_named,
    _patched,
    decode,
    encode,
)


def _names_of(data: bytes) -> list[bytes]:
    """A binary tree's names column, in its order."""
    n = int.from_bytes(data[1:5], "little")
    return data[5 + 42 * n:-1].split(b"\0")


@pytest.fixture
def objs(tmp_path: Path) -> ObjectStore:
    return ObjectStore(tmp_path / "objects")


def test_put_get_is_content_addressed(objs: ObjectStore) -> None:
    data = bytes(range(256)) * 10
    name = objs.put(BLOB, data)
    assert name == hash_bytes(BLOB, data) and len(name) == 64
    assert objs.path(name) == objs.root / name[:2] / name[2:]
    assert objs.get(BLOB, name) == data
    mtime = objs.path(name).stat().st_mtime_ns
    assert objs.put(BLOB, data) == name  # idempotent: stored once
    assert objs.path(name).stat().st_mtime_ns == mtime
    assert [n for n, _ in objs.all_names()] == [name]
    assert objs.verify(name) is None


def test_objects_are_compressed(objs: ObjectStore) -> None:
    name = objs.put(BLOB, b"a" * 100_000)
    assert objs.path(name).stat().st_size < 1000


def test_same_bytes_different_kind_differ(objs: ObjectStore) -> None:
    assert objs.put(BLOB, b"x") != objs.put(TREE, b"x")


def test_get_checks_kind(objs: ObjectStore) -> None:
    name = objs.put(TREE, b"")
    with pytest.raises(StoreDamaged, match="not a blob"):
        objs.get(BLOB, name)


def test_missing_and_corrupt_objects(objs: ObjectStore) -> None:
    with pytest.raises(NotFound, match="missing"):
        objs.get(BLOB, "ab" * 32)
    name = objs.put(BLOB, b"hello world" * 100)
    path = objs.path(name)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])  # truncated
    with pytest.raises(StoreDamaged, match="corrupt"):
        objs.get(BLOB, name)
    assert objs.verify(name) is not None


def test_altered_object_fails_verify(objs: ObjectStore) -> None:
    name = objs.put(BLOB, b"original")
    other = objs.put(BLOB, b"altered!")
    os.replace(objs.path(other), objs.path(name))  # valid zstd, wrong content
    problem = objs.verify(name)
    assert problem is not None and "does not match its hash" in problem


def test_streamed_large_file(objs: ObjectStore, tmp_path: Path) -> None:
    src = tmp_path / "big.bin"
    data = os.urandom(1024) * (STREAM_THRESHOLD // 1024 + 7)
    src.write_bytes(data)
    name = objs.put_file(src, len(data))
    assert name == hash_bytes(BLOB, data)
    assert objs.get(BLOB, name) == data
    out = tmp_path / "out.bin"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        assert objs.copy_blob_to(name, fd) == len(data)
    finally:
        os.close(fd)
    assert out.read_bytes() == data


@pytest.mark.parametrize("seen", [0, 1, 99, 100, 101, 5000])
def test_a_small_file_is_stored_as_far_as_the_size_seen(
        objs: ObjectStore, tmp_path: Path, seen: int) -> None:
    """``put_file`` reads a small file up to the size the caller saw (its stat, which makes
    the file's stat cache row), never past it: a file that grew since it was looked at is
    stored as it was then (an appended log: exactly so), and the row's size makes the next
    scan read it again; one that shrank is stored as it is."""
    src = tmp_path / "f.txt"
    for data in (b"", b"x" * 100, os.urandom(3 * 1024 * 1024 + 5)):
        src.write_bytes(data)
        name = objs.put_file(str(src), seen)
        assert name == hash_bytes(BLOB, data[:seen])
        assert objs.get(BLOB, name) == data[:seen]


def test_a_small_file_made_huge_after_its_look_is_not_read_to_its_end(
        objs: ObjectStore, tmp_path: Path) -> None:
    """A file seen at 10 bytes and made a sparse 64 MB before the read (100 GB is the same
    one system call) is stored as the 10 bytes seen: read to its end, a server held all of
    it in memory (and stored it past the size cap)."""
    src = tmp_path / "f.txt"
    src.write_bytes(b"0123456789")
    os.truncate(src, 64 << 20)
    name = objs.put_file(src, 10)
    assert objs.get(BLOB, name) == b"0123456789"


def test_a_large_file_appended_while_streamed_is_stored_as_seen_in_one_go(
        objs: ObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large file (a build log) appended to while it is streamed: both passes (the hash,
    then the compressed copy checked against it) read the size seen, so they agree and the
    file is stored once, as seen. Read to their ends, each pass saw another length and the
    file was read again (a log appended to all along: again and again, until Python's
    recursion limit failed the checkpoint)."""
    import turnback.objects.objectstore as objectstore

    src = tmp_path / "build.log"
    data = os.urandom(STREAM_THRESHOLD + 5)
    src.write_bytes(data)
    opens: list[str] = []
    real = objectstore.open_regular

    def appended(path: Path | str, **kwargs: object) -> int:
        opens.append(os.fspath(path))
        if len(opens) <= 3:
            with open(src, "ab") as f:
                f.write(b"one more line\n")
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(objectstore, "open_regular", appended)
    name = objs.put_file(src, len(data))
    monkeypatch.undo()
    assert len(opens) == 2
    assert name == hash_bytes(BLOB, data)
    assert objs.get(BLOB, name) == data


def test_copy_blob_detects_altered_content(objs: ObjectStore, tmp_path: Path) -> None:
    a = objs.put(BLOB, b"aaaa")
    b = objs.put(BLOB, b"bbbb")
    os.replace(objs.path(b), objs.path(a))
    fd = os.open(tmp_path / "o", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with pytest.raises(StoreDamaged, match="does not match"):
            objs.copy_blob_to(a, fd)
    finally:
        os.close(fd)


def test_stray_temps_are_not_objects(objs: ObjectStore) -> None:
    name = objs.put(BLOB, b"x")
    stray = objs.path(name).parent / ".tmp-deadbeef.1.0000"
    stray.write_bytes(b"half")
    assert [n for n, _ in objs.all_names()] == [name]
    assert list(objs.stray_temps()) == [stray]


def test_tree_encoding_round_trips_and_sorts_by_bytes() -> None:
    h = "0" * 64
    tree = {"b": Entry(FILE, h, 3), "a": Entry(DIR, h, 0), "x.sh": Entry(EXEC, h, 1),
            "ln": Entry(LINK, h, 4), os.fsdecode(b"\xff\xfe"): Entry(FILE, h, 2),
            "back\\slash": Entry(FILE, h, 0)}
    data = encode(tree)
    assert data[:1] == b"\x01"
    assert decode(data, "t") == tree
    names = _names_of(data)
    assert names == sorted(names) and len(names) == len(tree)
    assert encode(decode(data, "t")) == data
    text = encode_text(tree)  # a v2 store's tree of the same folder reads the same
    assert decode(text, "t") == tree and hash_bytes(TREE, text) != hash_bytes(TREE, data)
    assert encode({}) == b"" == encode_text({})  # the empty tree keeps its one name


def test_tree_encoding_sorts_unicode_names_by_bytes() -> None:
    h = "1" * 64
    names = ["z", "é", "\u20ac", "\U0001f600", "\ue000", "A", os.fsdecode(b"\xc3"), "a b"]
    tree = {n: Entry(FILE, h, i) for i, n in enumerate(names)}
    data = encode(tree)
    assert decode(data, "t") == tree
    assert _names_of(data) == sorted(os.fsencode(n) for n in names)


def test_large_pack_index_is_bisected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from turnback.objects import packs
    monkeypatch.setattr(packs, "SORTED_MIN", 4)
    objs = ObjectStore(tmp_path / "objects")
    with objs.batch(fsync=False):
        names = [objs.put(BLOB, b"small %d" % i) for i in range(1000)]  # several a bucket
    with objs.batch(fsync=False):
        pass  # an empty batch writes no pack
    assert len(list((objs.root / "pack").iterdir())) == 2
    again = ObjectStore(tmp_path / "objects")
    for i, n in enumerate(names):
        assert again.get(BLOB, n) == b"small %d" % i
    assert not again.exists("f" * 64) and not again.exists("0" * 64)
    assert sorted(again.packs.names()) == sorted(names)
    assert sorted(n for n, _ in again.all_names()) == sorted(names)


def test_sorted_index_finds_names_sharing_their_first_bytes() -> None:
    """The bisected index narrows by the rows' first two bytes, then bisects the rows
    that share them: names at the ends, many under one prefix, and names absent
    between them."""
    import struct

    from turnback.objects.packs import _ENTRY, IDX_MAGIC, _SortedIndex

    raws = sorted({bytes([0, 0]) + bytes(30), bytes([0, 0]) + b"\xff" * 30,
                   *(b"\xab\xcd" + bytes([i]) * 30 for i in range(0, 256, 3)),
                   b"\xab\xce" + bytes(30), b"\x12\x34" + b"\x01" * 30, b"\xff" * 32})
    data = IDX_MAGIC + struct.pack(">I", len(raws)) + b"".join(
        _ENTRY.pack(r, i * 10, 10, i, 1) for i, r in enumerate(raws))
    idx = _SortedIndex("pack-1-0000000000000000", data, len(raws))
    for i, r in enumerate(raws):
        loc = idx.find(r)
        assert loc is not None and loc.block_off == i * 10 and loc.off == i
    for absent in (b"\xab\xcd" + b"\x01" * 30, b"\xab\xcc" + bytes(30), bytes(32)[:-1] + b"\x01",
                   b"\xff" * 31 + b"\xfe", b"\x00\x01" + bytes(30), b"short"):
        assert idx.find(absent) is None


@pytest.mark.parametrize("name", [b"..", b".", b"a/b", b""])
def test_tree_refuses_escaping_names(name: bytes) -> None:
    raw = b"f " + b"0" * 64 + b" 1 " + name + b"\0"
    with pytest.raises(Unsafe, match="not a plain file name"):
        decode(raw, "t")


@pytest.mark.parametrize("raw", [b"f 00 1 name", b"q " + b"0" * 64 + b" 1 n\0",
                                 b"f " + b"0" * 64 + b" many n\0", b"garbage\0"])
def test_tree_malformed(raw: bytes) -> None:
    with pytest.raises(StoreDamaged):
        decode(raw, "t")


def _binary(rows: list[tuple[int, bytes, int, bytes]], count: int | None = None) -> bytes:
    """A binary tree of (mode code, raw hash, size, name) rows as given, not checked."""
    n = len(rows) if count is None else count
    return (b"\x01" + struct.pack("<I", n) + b"".join(r[1] for r in rows)
            + b"".join(struct.pack("<Q", r[2]) for r in rows)
            + b"".join(struct.pack("<H", r[0]) for r in rows)
            + b"".join(r[3] + b"\0" for r in rows))


_H = b"\xab" * 32


def test_a_crafted_binary_tree_as_written_reads() -> None:
    """The crafting helper below writes what ``encode`` does (so what it breaks is the
    one fault each hostile case names)."""
    data = _binary([(0o100644, _H, 3, b"a"), (0o040000, _H, 9, b"d"), (0o100600, _H, 1, b"k"),
                    (0o120000, _H, 4, b"l"), (0o100755, _H, 2, b"x")])
    tree = {"a": Entry(FILE, "ab" * 32, 3), "d": Entry(DIR, "ab" * 32, 9),
            "k": Entry("p600", "ab" * 32, 1), "l": Entry(LINK, "ab" * 32, 4),
            "x": Entry(EXEC, "ab" * 32, 2)}
    assert data == encode(tree) and decode(data, "t") == tree


@pytest.mark.parametrize(("data", "message"), [
    (b"\x01", "truncated"),
    (b"\x01\x00\x00\x00\x00", "no entries"),
    (_binary([(0o100644, _H, 1, b"a")])[:-1], "truncated"),
    (_binary([(0o100644, _H, 1, b"a")])[:40], "truncated"),
    (_binary([(0o100644, _H, 1, b"a")]) + b"junk", "truncated"),
    (_binary([(0o100644, _H, 1, b"a")]) + b"b\0", "2 names for 1 entries"),
    (_binary([(0o100644, _H, 1, b"b"), (0o100644, _H, 1, b"a")]), "out of order"),
    (_binary([(0o100644, _H, 1, b"a"), (0o100644, _H, 2, b"a")]), "names an entry twice"),
    (_binary([(0o100000 | 0o1000, _H, 1, b"a")]), "mode"),
    (_binary([(0o100644 & 0o7777, _H, 1, b"a")]), "mode"),
    (_binary([(0o040755, _H, 1, b"a")]), "mode"),
    (_binary([(0o160000, _H, 1, b"a")]), "mode"),  # git's submodule: not Turnback's
    (_binary([(0o100644, _H, 1, b"a")], count=MAX_ENTRIES + 1), f"more than {MAX_ENTRIES}"),
    (_binary([(0o100644, _H, 1, b"a")], count=0xFFFFFFFF), f"more than {MAX_ENTRIES}"),
    (_binary([(0o100644, _H, 1, b"a")] * 3, count=2), "names for 2 entries"),
])
def test_a_hostile_binary_tree_is_damage(data: bytes, message: str) -> None:
    with pytest.raises(StoreDamaged, match=message):
        decode(data, "t")


@pytest.mark.parametrize("name", [b"..", b".", b"a/b", b"/", b""])
def test_a_binary_tree_refuses_escaping_names(name: bytes) -> None:
    data = _binary([(0o100644, _H, 1, b"a"), (0o100644, _H, 1, name), (0o100644, _H, 1, b"z")])
    with pytest.raises((Unsafe, StoreDamaged)) as got:
        decode(data, "t")
    if name:  # an empty name is also two NULs in a row: damage either way
        assert isinstance(got.value, Unsafe) and "not a plain file name" in got.value.message


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_cut_or_altered_binary_tree_is_refused_or_reads_as_a_tree(data: st.DataObject
                                                                    ) -> None:
    """Whatever a damaged tree holds, reading it raises StoreDamaged or Unsafe, or gives
    a tree whose names are plain: never another exception, never a name with ``/``."""
    tree = {f"n{i}": Entry(FILE, f"{i:064x}", i) for i in range(5)}
    raw = bytearray(encode(tree))
    cut = data.draw(st.integers(0, len(raw)))
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 255)),
                               max_size=3))
    for at, value in flips:
        raw[at] = value
    try:
        got = decode(bytes(raw[:cut]), "t")
    except (StoreDamaged, Unsafe):
        return
    assert all(n and n not in (".", "..") and "/" not in n for n in got)


def test_tree_reader_walk_lookup(objs: ObjectStore) -> None:
    trees = TreeReader(objs)
    blob = objs.put(BLOB, b"content")
    sub = trees.put({"f.txt": Entry(FILE, blob, 7)})
    root = trees.put({"d": Entry(DIR, sub, 7), "top": Entry(EXEC, blob, 7)})
    assert list(trees.walk(root)) == [("d/f.txt", Entry(FILE, blob, 7)),
                                      ("top", Entry(EXEC, blob, 7))]
    assert trees.lookup(root, "d/f.txt") == Entry(FILE, blob, 7)
    assert trees.lookup(root, "d") == Entry(DIR, sub, 7)
    assert trees.lookup(root, "d/missing") is None
    assert trees.lookup(root, "top/below") is None
    fresh = TreeReader(objs)  # no cache: read from disk
    assert fresh.flatten(root) == trees.flatten(root)


def test_unchanged_folders_are_shared(objs: ObjectStore) -> None:
    trees = TreeReader(objs)
    b1, b2 = objs.put(BLOB, b"1"), objs.put(BLOB, b"2")
    same = trees.put({"f": Entry(FILE, b1, 1)})
    r1 = trees.put({"keep": Entry(DIR, same, 1), "g": Entry(FILE, b1, 1)})
    r2 = trees.put({"keep": Entry(DIR, same, 1), "g": Entry(FILE, b2, 1)})
    assert r1 != r2
    assert trees.get(r1)["keep"].hash == trees.get(r2)["keep"].hash


_names = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)),
                 min_size=1, max_size=8).filter(lambda n: n not in (".", ".."))
_entries = st.builds(Entry, st.sampled_from([FILE, EXEC, LINK, DIR]),
                     st.from_regex(r"[0-9a-f]{64}", fullmatch=True), st.integers(0, 10**12))


def _edited(base: dict[str, Entry], edits: dict[str, Entry | None]) -> dict[str, Entry]:
    """``base`` with ``edits`` made: an entry set, or removed where None."""
    tree = dict(base)
    for n, e in edits.items():
        if e is None:
            tree.pop(n, None)
        else:
            tree[n] = e
    return tree


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_names, _entries, max_size=30),
       st.dictionaries(_names, st.one_of(st.none(), _entries), max_size=10),
       st.lists(_names, max_size=3))
def test_a_patched_tree_encodes_exactly_as_a_whole_one(
        base: dict[str, Entry], edits: dict[str, Entry | None], untouched: list[str]) -> None:
    """Re-encoding only the changed names of a known tree gives the same bytes and hash."""
    reader = TreeReader(ObjectStore(Path(os.devnull)))
    base_hash, base_data = reader.name(dict(base))
    assert base_data == encode(base)
    tree = _edited(base, edits)
    # names said to change that did not (a folder rescanned to the same entry) are harmless
    h, data = reader.name(tree, base_hash, [*edits, *untouched])
    assert data == encode(tree)
    assert h == hash_bytes(TREE, encode(tree))
    again, _ = reader.name(dict(tree), h, [])  # and a patch of the patch
    assert again == h
    back, back_data = reader.name(dict(base), h, [*edits, *untouched])
    assert (back, back_data) == (base_hash, base_data)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_names, _entries, min_size=1, max_size=30),
       st.dictionaries(_names, st.one_of(st.none(), _entries), max_size=10))
def test_a_patch_leaves_its_base_names_as_they_were(
        base: dict[str, Entry], edits: dict[str, Entry | None]) -> None:
    """The kept names a patch starts from are shared, not copied, while no name goes in or
    out (the base's own list, unchanged, is the patched tree's too); a patch that adds or
    removes a name works on a copy, so the base's list never changes."""
    kept, data = _encode_named(base)
    if kept is None:
        return  # a name that is not strict UTF-8: never patched
    before = list(kept)
    tree = _edited(base, edits)
    got = _patched(kept, data, tree, list(edits))
    assert kept == before
    if got is not None:
        assert got[1] == encode(tree)
        assert got[0] == sorted(tree)
        if sorted(tree) == before:
            assert got[0] is kept


@pytest.mark.parametrize("stored", [encode, encode_text])
def test_a_tree_read_from_the_store_is_patched_from_its_encoding(
        objs: ObjectStore, stored: Callable[[Tree], bytes]) -> None:
    """A reader that did not write a folder's tree keeps the encoding it read: a checkpoint
    that patches a few names of it names the result as encoding it whole would. A text
    tree (a v2 store's) is read as it is; its patched version is binary."""
    h = "ab" * 32
    base = {f"f{i}.txt": Entry(FILE, h, i) for i in range(20)} | {"sub": Entry(DIR, h, 0)}
    name = objs.put(TREE, stored(base))
    fresh = TreeReader(objs)
    got = fresh.get(name)
    assert got == base
    assert fresh.held == (42 if stored is encode else 21)  # the kept encoding's names too
    changed = {"f3.txt", "new.txt", "sub"}
    patched = dict(got)
    patched["f3.txt"] = Entry(EXEC, "cd" * 32, 7)
    patched["new.txt"] = Entry(FILE, h, 1)
    del patched["sub"]
    assert fresh.name(patched, name, changed) == (hash_bytes(TREE, encode(patched)),
                                                   encode(patched))


def test_a_tree_stored_out_of_order_is_named_whole(objs: ObjectStore) -> None:
    """A crafted text tree whose lines are not sorted (text trees are read as they are):
    the patched tree's encoding is the canonical binary one."""
    h = "ab" * 32
    data = f"{FILE} {h} 1 b.txt\0{FILE} {h} 2 a.txt\0".encode()  # a text tree: read as it is
    name = objs.put(TREE, data)
    fresh = TreeReader(objs)
    tree = dict(fresh.get(name))
    tree["c.txt"] = Entry(FILE, h, 3)
    assert fresh.name(tree, name, {"c.txt"})[1] == encode(tree)


def _folders(objs: ObjectStore, n: int, per: int) -> tuple[str, list[str]]:
    """A root tree of ``n`` subfolders of ``per`` files each, stored: (root, subfolders)."""
    h = "ab" * 32
    subs = [objs.put(TREE, encode({f"f{i}-{j}": Entry(FILE, h, j) for j in range(per)}))
            for i in range(n)]
    root = objs.put(TREE, encode({f"d{i}": Entry(DIR, s, 0) for i, s in enumerate(subs)}))
    return root, subs


def test_the_tree_cache_drops_the_least_recently_used_trees_first(
    objs: ObjectStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past its budget the cache lets its oldest trees go, not all of them: a tree read
    again since stays decoded (a server's folders touched by every checkpoint)."""
    import turnback.objects.trees as trees_mod

    monkeypatch.setattr(trees_mod, "CACHE_ENTRIES", 100)  # 10 entries and 10 kept names a tree
    _, subs = _folders(objs, 8, 10)
    reader = TreeReader(objs)
    for s in subs[:5]:
        reader.get(s)
    assert reader.held == 100
    reader.get(subs[0])  # used again: the most recent
    reader.get(subs[5])  # one over the budget: subs[1] goes, with its encoding
    assert reader.held == 100
    reads: list[str] = []
    real_get = objs.get
    monkeypatch.setattr(objs, "get", lambda kind, name: reads.append(name) or real_get(kind, name))
    reader.get(subs[0])
    assert reads == []
    patched = dict(reader.get(subs[1]))
    assert reads == [subs[1]], "the least recently used tree was read again"
    patched["new"] = Entry(FILE, "cd" * 32, 1)
    assert reader.name(patched, subs[1], {"new"})[1] == encode(patched)
    assert reader.held <= 100


def test_warm_reads_the_trees_below_a_root_breadth_first_within_a_budget(
    objs: ObjectStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server's warm-up decodes the folders nearest the root first and stops at its
    budget; what it read is then served without reading the store."""
    root, subs = _folders(objs, 6, 10)
    reader = TreeReader(objs)
    # the root (6 entries and 6 kept names), then subfolders (20 each) until 50 entries are held
    assert reader.warm(root, 50) == 3
    assert reader.held == 12 + 2 * 20
    reads: list[str] = []
    real_get = objs.get
    monkeypatch.setattr(objs, "get", lambda kind, name: reads.append(name) or real_get(kind, name))
    for s in [root, *subs[:2]]:
        reader.get(s)
    assert reads == []
    reader.get(subs[2])
    assert reads == [subs[2]]
    assert reader.warm(root, 10_000) == 3  # the three left; those held are not read again
    assert reads == subs[2:]


def test_a_replaced_version_goes_before_a_tree_not_used_since_it_was_read(
    objs: ObjectStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A checkpoint's patched folder supersedes its base: past the bound the base goes
    first, not the folders a warm-up read that no checkpoint has touched yet; a replaced
    version read again (a rewind's target) is kept like any other."""
    import turnback.objects.trees as trees_mod

    monkeypatch.setattr(trees_mod, "CACHE_ENTRIES", 100)
    _, subs = _folders(objs, 8, 10)
    reader = TreeReader(objs)
    for s in subs[:4]:
        reader.get(s)  # 80 held
    patched = dict(reader.get(subs[3]))
    patched["new"] = Entry(FILE, "cd" * 32, 1)
    newer = reader.name(patched, subs[3], {"new"})[0]  # 80 + 22: subs[3] replaced, goes
    assert reader.held <= 100
    reads: list[str] = []
    real_get = objs.get
    monkeypatch.setattr(objs, "get", lambda kind, name: reads.append(name) or real_get(kind, name))
    for s in subs[:3]:
        reader.get(s)
    reader.get(newer)
    assert reads == [], "the trees read before the patch stayed"
    reader.get(subs[3])
    assert reads == [subs[3]]


def test_a_look_up_leaves_a_replaced_version_first_to_go(
    objs: ObjectStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A path looked up in a replaced version (a server's read-ahead, in a safety
    checkpoint a rewind has left) does not make it "in use again": past the bound it still
    goes before the trees read since; a whole read (a diff) does."""
    import turnback.objects.trees as trees_mod

    monkeypatch.setattr(trees_mod, "CACHE_ENTRIES", 100)
    _, subs = _folders(objs, 8, 10)
    reader = TreeReader(objs)
    for s in subs[:3]:
        reader.get(s)  # 60 held
    patched = dict(reader.get(subs[0]))
    patched["new"] = Entry(FILE, "cd" * 32, 1)
    reader.name(patched, subs[0], {"new"})  # 82 held: subs[0] replaced
    assert reader.lookup(subs[0], "f0-1") is not None
    reader.get(subs[3])  # past the bound: the replaced version goes, looked up or not
    reads: list[str] = []
    real_get = objs.get
    monkeypatch.setattr(objs, "get", lambda kind, name: reads.append(name) or real_get(kind, name))
    reader.get(subs[1])
    reader.get(subs[2])
    assert reads == []
    reader.get(subs[0])
    assert reads == [subs[0]]


def test_a_tree_dropped_by_another_thread_while_read_is_still_returned(
    objs: ObjectStore,
) -> None:
    """A server's read pool uses the tree cache while a write drops trees from it: a read
    that found a tree which another thread drops before it is marked as used returns it."""
    from collections import OrderedDict

    class DroppedAfterGet(OrderedDict[str, Tree]):
        def get(self, key: str, default: object = None) -> Tree | None:  # type: ignore[override]
            tree = super().get(key)
            self.pop(key, None)  # the other thread's eviction, between the two steps
            return tree

    _, subs = _folders(objs, 2, 10)
    want = TreeReader(objs).get(subs[0])
    reader = TreeReader(objs)
    reader.get(subs[0])
    reader._cache = DroppedAfterGet(reader._cache)
    assert reader.get(subs[0]) == want
    assert reader.get(subs[0]) == want  # and again, read from the store this time




def test_the_cache_count_stays_exact_under_threads(objs: ObjectStore) -> None:
    """The server's read pool and its writes share one reader: the count of held entries
    must stay what the cache holds (``+=`` on an attribute is not atomic: a count that
    drifted up kept the cache emptying itself). Another thread caches a tree in the middle
    of this thread's count update; guarded, it waits for this update to end."""
    import threading

    _, subs = _folders(objs, 2, 10)
    reader = TreeReader(objs)
    reached = threading.Event()  # the other thread finished, or reached the guard

    def cache_another() -> None:
        reader.get(subs[1])
        reached.set()

    other = threading.Thread(target=cache_another)
    real = threading.Lock()

    class Guard:
        def __enter__(self) -> None:
            if threading.current_thread() is other:
                reached.set()
            real.acquire()

        def __exit__(self, *exc: object) -> None:
            real.release()

    reader._guard = Guard()  # type: ignore[assignment]

    class CountedMidway(dict[str, Entry]):
        def __len__(self) -> int:  # read by ``_held += len(tree)`` after ``_held`` is
            other.start()
            reached.wait()
            return super().__len__()

    tree = CountedMidway(reader.get(subs[0]))
    reader.clear()
    reader._remember("a" * 64, tree)
    other.join()
    held = (sum(dict.__len__(t) for t in reader._cache.values())
            + sum(len(names) for names, _ in reader._kept.values()))
    assert reader.held == held == 10 + 20
