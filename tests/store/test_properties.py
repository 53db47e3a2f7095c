"""Property tests: random trees and random edits checkpoint and rewind byte for byte.

Edits cover binary content, names that are not UTF-8, executable bits, symlinks
(dangling ones too), deletions and file <-> folder swaps in both directions.
Ignored files (under ``ign/``) must come out of every rewind untouched.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnback import Store
from wsutil import Picture, picture

NAMES = [b"a", b"b", b"c\xe9", b"d d", b"e.txt", b"\xff"]
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(lambda p: b"/".join(p))
contents = st.one_of(st.binary(max_size=300), st.text(max_size=100).map(str.encode))

write_op = st.tuples(st.just("write"), paths, contents, st.booleans())
delete_op = st.tuples(st.just("delete"), paths)
chmod_op = st.tuples(st.just("chmod"), paths)
link_op = st.tuples(st.just("link"), paths, st.sampled_from([*NAMES, b"a/b", b"missing"]))
ops = st.lists(st.one_of(write_op, write_op, delete_op, chmod_op, link_op), max_size=12)
trees = st.lists(write_op, min_size=1, max_size=10)

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@contextmanager
def workspace() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="tb-prop-"))
    try:
        ws = d / "ws"
        ws.mkdir()
        (ws / ".gitignore").write_bytes(b"ign/\n")
        (ws / "ign").mkdir()
        (ws / "ign" / "cache.bin").write_bytes(b"ignored v1")
        yield ws
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _through_real_folders(root: bytes, rel: bytes) -> bool:
    """Whether every folder on the way to ``rel`` is a real folder (no link, no file)."""
    cur = root
    for part in rel.split(b"/")[:-1]:
        cur = os.path.join(cur, part)
        try:
            if not stat.S_ISDIR(os.lstat(cur).st_mode):
                return False
        except FileNotFoundError:
            return False
    return True


def _clear(p: bytes) -> None:
    """Remove whatever stands at ``p`` (file, link or folder)."""
    try:
        st_ = os.lstat(p)
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISDIR(st_.st_mode):
        shutil.rmtree(p)
    else:
        os.unlink(p)


def _parents(root: bytes, rel: bytes) -> None:
    """Make ``rel``'s folders, replacing files or links in the way (file -> folder swaps)."""
    cur = root
    for part in rel.split(b"/")[:-1]:
        cur = os.path.join(cur, part)
        try:
            st_ = os.lstat(cur)
            if not stat.S_ISDIR(st_.st_mode):
                os.unlink(cur)
                os.mkdir(cur)
        except FileNotFoundError:
            os.mkdir(cur)


def apply(ws: Path, op: tuple[object, ...]) -> None:
    root = os.fsencode(str(ws))
    rel = op[1]
    assert isinstance(rel, bytes)
    full = os.path.join(root, rel)
    if op[0] == "write":
        _parents(root, rel)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)  # folder -> file swap
        elif os.path.islink(full):
            os.unlink(full)
        data, exe = op[2], op[3]
        assert isinstance(data, bytes)
        with open(full, "wb") as f:
            f.write(data)
        os.chmod(full, 0o755 if exe else 0o644)
    elif op[0] == "delete":
        if _through_real_folders(root, rel):
            _clear(full)
    elif op[0] == "chmod":
        if _through_real_folders(root, rel) and os.path.isfile(full) and not os.path.islink(
                full):
            os.chmod(full, os.stat(full).st_mode ^ stat.S_IXUSR)
    elif op[0] == "link":
        _parents(root, rel)
        _clear(full)
        target = op[2]
        assert isinstance(target, bytes)
        os.symlink(target, full)


def tracked(pic: Picture) -> Picture:
    return {k: v for k, v in pic.items() if not k.startswith(b"ign/")}


def ignored(pic: Picture) -> Picture:
    return {k: v for k, v in pic.items() if k.startswith(b"ign/")}


@SETTINGS
@given(initial=trees, edits=ops)
def test_rewind_and_undo_are_byte_exact(initial: list[tuple[object, ...]],
                                        edits: list[tuple[object, ...]]) -> None:
    with workspace() as ws:
        for op in initial:
            apply(ws, op)
        store = Store.open(ws)
        t0 = picture(ws)
        cp0 = store.checkpoint()
        for op in edits:
            apply(ws, op)
        (ws / "ign" / "cache.bin").write_bytes(b"ignored v2")
        t1 = picture(ws)
        cp1 = store.checkpoint()
        store.rewind(cp0.id)
        now = picture(ws)
        assert tracked(now) == tracked(t0)
        assert ignored(now) == ignored(t1)
        store.undo()
        assert picture(ws) == t1
        store.rewind(cp1.id)
        assert picture(ws) == t1
        # a fresh process sees the same checkpoint contents
        again = Store.open(ws)
        again.rewind(cp0.id)
        assert tracked(picture(ws)) == tracked(t0)


@SETTINGS
@given(initial=trees, steps=st.lists(ops, min_size=1, max_size=4), data=st.data())
def test_any_earlier_checkpoint_and_path_subsets(initial: list[tuple[object, ...]],
                                                 steps: list[list[tuple[object, ...]]],
                                                 data: st.DataObject) -> None:
    with workspace() as ws:
        for op in initial:
            apply(ws, op)
        store = Store.open(ws)
        history: list[tuple[str, Picture]] = [(store.checkpoint().id, picture(ws))]
        for edits in steps:
            for op in edits:
                apply(ws, op)
            history.append((store.checkpoint().id, picture(ws)))
        cp, want = data.draw(st.sampled_from(history), label="target")
        # a subset of top-level names: a name selects the file and the folder alike
        chosen = data.draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
                           label="paths")
        before = picture(ws)
        if not chosen:
            store.rewind(cp)
            assert tracked(picture(ws)) == tracked(want)
            return
        store.rewind(cp, [os.fsdecode(n) for n in chosen])

        def inside(k: bytes) -> bool:
            return any(k == n or k.startswith(n + b"/") for n in chosen)

        now = picture(ws)
        assert {k: v for k, v in now.items() if inside(k)} == {
            k: v for k, v in want.items() if inside(k)}
        assert {k: v for k, v in now.items() if not inside(k)} == {
            k: v for k, v in before.items() if not inside(k)}
        store.undo()
        assert picture(ws) == before
