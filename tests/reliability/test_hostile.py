"""Hostile input: nothing is ever written outside the workspace, into a .git folder or
into the store; each attempt is refused with a clear error.

Covers rewind paths, stored trees crafted by hand, seed-001 checkpoint files, device
files and FIFOs, and a symlink swapped in while a rewind runs.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Checkpoint, InvalidInput, Store, TurnbackError, Unsafe
from turnback.fs.osflags import DESCRIPTORS
from turnback.objects.objectstore import BLOB, TREE
from turnback.objects.trees import BINARY_TAG, MODE_CODES
from wsutil import journal_left, picture, run_cli, write

from .crashkit import tally


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace that must stay exactly as it is."""
    d = tmp_path / "outside"
    write(d, "keep.txt", "outside\n")
    return d


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    write(d, "a.txt", "a\n")
    write(d, "src/b.txt", "b\n")
    return d


def count(case: str, refused: bool) -> None:
    tally("hostile input").add_case(case, refused)


# -- rewind paths ----------------------------------------------------------------------------

BAD_PATHS = [
    ("..", Unsafe, "outside the workspace"),
    ("../outside/keep.txt", Unsafe, "outside the workspace"),
    ("src/../../outside", Unsafe, "outside the workspace"),
    ("/etc/passwd", Unsafe, "absolute"),
    ("..\\outside\\keep.txt", Unsafe, "backslash"),
    ("src\\b.txt", Unsafe, "backslash"),
    ("a\0b", Unsafe, "NUL"),
    ("x" * 300, InvalidInput, "longer than 255 bytes"),
    ("", InvalidInput, "non-empty"),
    (".", InvalidInput, "workspace itself"),
]


@pytest.mark.parametrize(("path", "error", "message"), BAD_PATHS)
def test_rewind_paths_refused(ws: Path, outside: Path, path: str, error: type[TurnbackError],
                              message: str) -> None:
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "changed\n")
    before, out_before = picture(ws), picture(outside)
    with pytest.raises(error, match=message):
        store.rewind(cp.id, [path])
    assert picture(ws) == before and picture(outside) == out_before
    assert store.log() == []  # refused before anything: no operation recorded
    count(f"rewind path {path[:20]!r}", True)


def test_rewind_paths_refused_on_the_cli(ws: Path, outside: Path) -> None:
    run_cli(ws, "init")
    cp = json.loads(run_cli(ws, "--json", "checkpoint").stdout)["id"]
    for path, code, message in (("../outside/keep.txt", 1, b"outside the workspace"),
                                ("/etc/passwd", 1, b"absolute"),
                                ("a\\b", 1, b"backslash")):
        proc = run_cli(ws, "rewind", cp, path, check=None)
        assert proc.returncode == code and message in proc.stderr, proc.stderr
    assert picture(outside) == {b"keep.txt": ("f", b"outside\n", 0o644)}


# -- stored trees crafted by hand ------------------------------------------------------------

def raw_tree(entries: list[tuple[str, str, int, bytes]]) -> bytes:
    """A text tree (formats 1-2) of the entries as given, unchecked."""
    return b"".join(f"{m} {h} {n} ".encode() + name + b"\0" for m, h, n, name in entries)


def raw_binary_tree(entries: list[tuple[str, str, int, bytes]]) -> bytes:
    """A binary tree (format 3) of the entries in the order given, unchecked."""
    return (BINARY_TAG + struct.pack("<I", len(entries))
            + b"".join(bytes.fromhex(h) for _, h, _, _ in entries)
            + b"".join(struct.pack("<Q", n) for _, _, n, _ in entries)
            + b"".join(struct.pack("<H", MODE_CODES[m]) for m, _, _, _ in entries)
            + b"".join(name + b"\0" for _, _, _, name in entries))


ENCODINGS = pytest.mark.parametrize("raw", [raw_tree, raw_binary_tree], ids=["text", "binary"])
Raw = Callable[[list[tuple[str, str, int, bytes]]], bytes]


def crafted_checkpoint(store: Store, entries: list[tuple[str, str, int, bytes]],
                       cid: str, raw: Raw = raw_tree) -> str:
    """Write a tree object as an attacker would and list it as a checkpoint."""
    tree = store.objects.put(TREE, raw(entries))
    store.index.add(Checkpoint(cid, "crafted", "2030-01-01T00:00:00.000Z", tree, None, None),
                    fsync=False)
    return cid


@pytest.mark.parametrize(("name", "message"), [
    (b"..", "not a plain file name"),
    (b".", "not a plain file name"),
    (b"../../outside/evil", "not a plain file name"),
    (b"/etc/evil", "not a plain file name"),
    (b"a\0b", "malformed|not a plain file name|2 names for 1 entries"),
])
@ENCODINGS
def test_crafted_tree_names_refused(ws: Path, outside: Path, name: bytes, message: str,
                                    raw: Raw) -> None:
    store = Store.open(ws)
    blob = store.objects.put(BLOB, b"evil\n")
    cid = crafted_checkpoint(store, [("f", blob, 5, name)], "evil00000001", raw)
    before, out_before = picture(ws), picture(outside)
    with pytest.raises(TurnbackError, match=message):
        store.rewind(cid)
    assert picture(ws) == before and picture(outside) == out_before
    Store.open(ws)  # still opens
    count(f"stored tree entry {name!r}", True)


@pytest.mark.parametrize("where", [".git/hooks/pre-commit", "sub/.git/config",
                                   ".turnback/config.json", ".turnback/objects/xx"])
@ENCODINGS
def test_crafted_tree_into_git_or_store_refused(ws: Path, where: str, raw: Raw) -> None:
    store = Store.open(ws)
    write(ws, "sub/.git/config", "[core]\n")
    write(ws, ".git/HEAD", "ref: refs/heads/main\n")
    blob = store.objects.put(BLOB, b"#!/bin/sh\nrm -rf ~\n")
    parts = where.split("/")
    entries: list[tuple[str, str, int, bytes]] = [("x", blob, 19, parts[-1].encode())]
    for part in reversed(parts[:-1]):
        sub = store.objects.put(TREE, raw(entries))
        entries = [("d", sub, 19, part.encode())]
    cid = crafted_checkpoint(store, entries, "evil00000002", raw)
    before, config = picture(ws), (ws / ".turnback" / "config.json").read_bytes()
    with pytest.raises(Unsafe, match=r"\.git folder|the Turnback store"):
        store.rewind(cid)
    assert picture(ws) == before  # .git folders included (only the store is left out)
    assert (ws / ".turnback" / "config.json").read_bytes() == config
    assert not (ws / ".turnback" / "objects" / "xx").exists()
    count(f"stored tree path {where!r}", True)


def test_crafted_tree_long_name_refused_and_store_opens(ws: Path, outside: Path) -> None:
    store = Store.open(ws)
    blob = store.objects.put(BLOB, b"x")
    cid = crafted_checkpoint(store, [("f", blob, 1, b"a.txt"), ("f", blob, 1, b"n" * 300)],
                             "evil00000003")
    write(ws, "a.txt", "changed\n")
    before = picture(ws)
    with pytest.raises((TurnbackError, OSError)):
        store.rewind(cid)
    reopened = Store.open(ws)  # must open: no journal left to fail again
    assert not journal_left(reopened.root)
    assert picture(ws) == before  # rolled back: as it was before the rewind
    count("stored tree name of 300 bytes", True)


def test_crafted_symlink_entries_stay_links(ws: Path, outside: Path) -> None:
    """A stored symlink may point anywhere: it is restored as a link, never followed."""
    store = Store.open(ws)
    target = store.objects.put(BLOB, str(outside).encode())
    evil = store.objects.put(BLOB, b"evil\n")
    sub = store.objects.put(TREE, raw_tree([("f", evil, 5, b"keep.txt")]))
    cid = crafted_checkpoint(store, [("l", target, len(str(outside)), b"link")], "evil00000004")
    store.rewind(cid)
    assert os.readlink(ws / "link") == str(outside)
    # a second checkpoint has a folder of the same name: the link is removed, not followed
    cid2 = crafted_checkpoint(store, [("d", sub, 5, b"link")], "evil00000005")
    store.rewind(cid2)
    assert not (ws / "link").is_symlink() and (ws / "link" / "keep.txt").read_text() == "evil\n"
    assert (outside / "keep.txt").read_text() == "outside\n"
    count("stored symlink pointing outside", False)


# -- symlinks in the workspace -----------------------------------------------------------------

def test_untracked_symlinked_parent_refused(ws: Path, outside: Path) -> None:
    """An ignored symlink where the checkpoint has a folder: never written through."""
    write(ws, ".gitignore", "src\n")  # src is ignored from now on
    store = Store.open(ws)
    s = store.start_session()
    cp = store.import_checkpoint({"src/b.txt": b"restored\n"}, s.id)
    shutil.rmtree(ws / "src")
    os.symlink(outside, ws / "src")
    with pytest.raises(Unsafe, match="'src' is a symlink"):
        store.rewind(cp.id)
    assert picture(outside) == {b"keep.txt": ("f", b"outside\n", 0o644)}
    Store.open(ws)
    count("symlinked parent folder (untracked)", True)


def test_symlink_swapped_in_during_rewind(ws: Path, outside: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is replaced by a link to outside right before the rewind writes in it."""
    import turnback.rewind.apply as rw

    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "src/b.txt", "changed\n")
    write(ws, "src/c.txt", "created\n")
    real = rw.open_dir
    swapped = []

    def racing(root: int, parts: list[str], *, create: bool) -> int:
        if parts == ["src"] and not swapped:
            swapped.append(1)
            shutil.rmtree(ws / "src")
            os.symlink(outside, ws / "src")
        return real(root, parts, create=create)

    monkeypatch.setattr(rw, "open_dir", racing)
    with pytest.raises(Unsafe, match="symlink"):
        store.rewind(cp.id)
    monkeypatch.undo()
    assert swapped
    assert picture(outside) == {b"keep.txt": ("f", b"outside\n", 0o644)}
    assert not journal_left(Store.open(ws).root)
    count("symlink swapped in during a rewind", True)


def test_symlink_flipping_thread_never_leads_outside(ws: Path, outside: Path) -> None:
    """A thread swaps a folder and a link to outside as fast as it can while rewinds run."""
    for i in range(30):
        write(ws, f"src/f{i}.txt", f"{i}\n")
    store = Store.open(ws)
    a = store.checkpoint()
    for i in range(30):
        write(ws, f"src/f{i}.txt", f"changed {i}\n")
    b = store.checkpoint()
    stop = threading.Event()
    flips = [0]

    def flipper() -> None:
        while not stop.is_set():
            try:
                tmp = ws / "src.flip"
                os.symlink(outside, tmp)
                os.rename(ws / "src", ws / "src.real")
                os.rename(tmp, ws / "src")
                time.sleep(0.0005)
                os.unlink(ws / "src")
                os.rename(ws / "src.real", ws / "src")
                flips[0] += 1
            except OSError:
                pass

    t = threading.Thread(target=flipper)
    t.start()
    refused = done = 0
    try:
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            for cp in (a, b):
                try:
                    Store.open(ws).rewind(cp.id)
                    done += 1
                except (TurnbackError, OSError):  # the race may also make the folder vanish
                    refused += 1
    finally:
        stop.set()
        t.join()
    assert flips[0] > 0
    seen = picture(outside)
    if not DESCRIPTORS:
        # folders reached by path (Windows' way): the one-lstat window RELIABILITY.md names
        # ("Windows") can leave an empty private temporary file where the link led, when
        # the swap back came before its removal; never any content, never a user's name
        seen = {k: v for k, v in seen.items()
                if not (k.startswith(b".turnback-tmp-") and v == ("f", b"", 0o600))}
    assert seen == {b"keep.txt": ("f", b"outside\n", 0o644)}, "wrote outside"
    Store.open(ws).rewind(a.id)  # once the race is over, the store opens and rewinds
    count(f"folder/link flipping thread ({done} rewinds done, {refused} refused)", True)


# -- device files and FIFOs ------------------------------------------------------------------

def test_fifo_at_a_tracked_path_is_replaced_not_written(ws: Path) -> None:
    store = Store.open(ws)
    cp = store.checkpoint()
    os.unlink(ws / "a.txt")
    os.mkfifo(ws / "a.txt")  # opening it for writing would block forever
    res = store.checkpoint()
    assert [s["path"] for s in res.skipped] == ["a.txt"]
    store.rewind(cp.id)
    assert stat.S_ISREG(os.lstat(ws / "a.txt").st_mode)
    assert (ws / "a.txt").read_text() == "a\n"
    count("FIFO at a tracked path", False)


def test_device_file_skipped_and_replaced(ws: Path) -> None:
    try:
        os.mknod(ws / "dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null
    except (PermissionError, OSError):
        pytest.skip("cannot create a device file here (not root)")
    store = Store.open(ws)
    cp = store.checkpoint()
    assert {"path": "dev", "reason": "not a regular file, folder or symlink"} in cp.skipped
    s = store.start_session()
    target = store.import_checkpoint({"dev": b"plain file\n"}, s.id)
    store.rewind(target.id)
    assert stat.S_ISREG(os.lstat(ws / "dev").st_mode)  # the node was replaced, not written
    count("device file in the workspace", False)


# -- seed-001 checkpoint files -----------------------------------------------------------------

def seed001(folder: Path, paths: list[str]) -> Path:
    doc = {
        "id": "c1", "timestamp": {"secs_since_epoch": 1_700_000_000, "nanos_since_epoch": 0},
        "user_prompts": ["do it"], "assistant_responses": ["done"], "tool_calls": [],
        "stats": {"start_time": {"secs_since_epoch": 1_699_999_000, "nanos_since_epoch": 0}},
        "file_diffs": [{"path": p, "before": "old\n", "after": "EVIL\n"} for p in paths],
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "c1.json").write_text(json.dumps(doc))
    return folder


@pytest.mark.parametrize("path", [
    "../outside/keep.txt", "/etc/passwd", "{outside}/keep.txt", "{ws}/../outside/keep.txt",
    "src\\..\\..\\outside\\keep.txt", "a\u0000b", "n" * 300, ".git/config", "sub/.git/HEAD",
    ".turnback/config.json", "{ws}/link/keep.txt",
])
def test_seed001_hostile_paths(ws: Path, outside: Path, tmp_path: Path, path: str) -> None:
    from turnback.importers import import_source

    os.symlink(outside, ws / "link")
    write(ws, "sub/.git/HEAD", "ref\n")
    store = Store.open(ws)
    store.checkpoint()
    p = path.format(ws=ws, outside=outside)
    res = import_source(store, "checkpoint-json", seed001(tmp_path / "seed", [p]))
    before = picture(ws, skip=())
    refused_at_import = not store.checkpoints(res.sessions[0]) if res.sessions else True
    for cp in store.checkpoints():
        if cp.partial:
            try:
                store.rewind(cp.id)
            except TurnbackError as exc:
                assert isinstance(exc, (Unsafe, InvalidInput)) or "symlink" in exc.message
    assert picture(outside) == {b"keep.txt": ("f", b"outside\n", 0o644)}, "wrote outside"
    after = picture(ws, skip=())
    for rel in (b".git/config", b"sub/.git/HEAD", b".turnback/config.json"):
        assert after.get(rel) == before.get(rel), f"{rel!r} was written"
    assert res.problems or not refused_at_import, "a refused path must be reported"
    count(f"seed-001 path {path[:24]!r}", True)
