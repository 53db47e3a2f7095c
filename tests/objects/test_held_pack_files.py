"""A pack read once stays open for the next block reads (``objects/heldfiles.py``): one
``open`` a pack, not one a block decoded, with a bounded number held, none kept on a
pack removed or replaced, and every read still of the file at the name now."""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pack_reads import varied_text
from turnback.errors import StoreDamaged
from turnback.objects.heldfiles import HELD_MAX, HeldFiles
from turnback.objects.packs import Loc, PackReader, PackWriter

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"),
                                reason="descriptors listed by /proc/self/fd")


def _pack(folder: Path, n: int, seed: int, prefix: int = 0) -> dict[str, tuple[bytes, Loc]]:
    """A pack of ``n`` 1-6 KB objects; each name's payload and place, read back by a new
    reader."""
    rng = random.Random(seed)
    payloads = {f"{prefix + i:064x}": b"blob\0" + varied_text(rng).encode() for i in range(n)}
    writer = PackWriter(folder, 3)
    for name, p in payloads.items():
        writer.add(name, p)
    writer.finish(fsync=False)
    reader = PackReader(folder)
    reader.refresh()
    out = {}
    for name, p in payloads.items():
        loc = reader.locate(name)
        assert loc is not None
        out[name] = (p, loc)
    return out


def _first_of_each_block(objs: dict[str, tuple[bytes, Loc]]) -> list[tuple[bytes, Loc]]:
    firsts: dict[int, tuple[bytes, Loc]] = {}
    for p, loc in objs.values():
        firsts.setdefault(loc.block_off, (p, loc))
    return [firsts[k] for k in sorted(firsts)]


def _opens_of(monkeypatch: pytest.MonkeyPatch, suffix: str) -> list[str]:
    """The paths ending in ``suffix`` that ``os.open`` is asked for from now on."""
    seen: list[str] = []
    real: Callable[..., int] = os.open

    def counting(path: Any, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path).endswith(suffix):
            seen.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return seen


def _open_on(folder: Path) -> list[str]:
    """This process's descriptors on files in ``folder`` (removed ones too)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder) + "/"):
            out.append(target)
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="nothing is held open on Windows")
def test_a_pack_is_opened_once_for_the_blocks_read_from_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    objs = _pack(tmp_path, 120, seed=5)
    blocks = _first_of_each_block(objs)
    assert len(blocks) >= 4, "the pack has too few blocks for the test to say anything"
    reader = PackReader(tmp_path)
    reader.refresh()
    opens = _opens_of(monkeypatch, ".pack")
    for payload, loc in blocks:
        assert reader.read(loc) == payload
    assert len(opens) == 1, f"{len(blocks)} blocks read with {len(opens)} opens of the pack"


@needs_proc
def test_a_pack_replaced_under_a_held_descriptor_is_read_from_the_new_file(
        tmp_path: Path) -> None:
    objs = _pack(tmp_path, 120, seed=6)
    (p0, loc0), (p1, loc1) = _first_of_each_block(objs)[:2]
    path = PackReader(tmp_path).path_of(loc0.pack)
    good = tmp_path.parent / "good.pack"
    shutil.copyfile(path, good)
    os.truncate(path, loc1.block_off)  # a pack cut short: its second block gone
    reader = PackReader(tmp_path)
    reader.refresh()
    assert reader.read(loc0) == p0  # the cut pack is held open from here
    with pytest.raises(StoreDamaged, match="truncated or a damaged index"):
        reader.read(loc1)
    os.replace(good, path)  # the whole pack put back, by a rename over the name
    assert reader.read(loc1) == p1, "the replaced file's cut bytes were read again"
    assert not [t for t in _open_on(tmp_path) if t.endswith("(deleted)")]


@needs_proc
def test_a_removed_pack_is_not_kept_open(tmp_path: Path) -> None:
    objs = _pack(tmp_path, 120, seed=7)
    (p0, loc0), (_, loc1) = _first_of_each_block(objs)[:2]
    reader = PackReader(tmp_path)
    reader.refresh()
    assert reader.read(loc0) == p0
    pack = reader.path_of(loc0.pack)
    pack.unlink()
    (tmp_path / f"{loc0.pack}.idx").unlink()
    # the next read of it finds its name gone: the descriptor closed, the read not done
    with pytest.raises(FileNotFoundError):
        reader.read(loc1)
    assert _open_on(tmp_path) == []
    # and a refresh that finds the pack gone closes its descriptor unread
    objs = _pack(tmp_path, 40, seed=8, prefix=1000)
    (p2, loc2), = _first_of_each_block(objs)[:1]
    reader.refresh()
    assert reader.read(loc2) == p2
    assert len(_open_on(tmp_path)) == 1
    reader.path_of(loc2.pack).unlink()
    (tmp_path / f"{loc2.pack}.idx").unlink()
    reader.refresh()
    assert _open_on(tmp_path) == []


@needs_proc
def test_the_packs_held_open_are_bounded_and_closed_with_the_reader(tmp_path: Path) -> None:
    read: list[tuple[bytes, Loc]] = []
    for k in range(HELD_MAX + 3):
        objs = _pack(tmp_path, 2, seed=20 + k, prefix=k * 10)
        read += _first_of_each_block(objs)[:1]
    reader = PackReader(tmp_path)
    reader.refresh()
    for payload, loc in read:
        assert reader.read(loc) == payload
    assert len({loc.pack for _, loc in read}) == HELD_MAX + 3
    assert len(_open_on(tmp_path)) == HELD_MAX
    reader.close()
    assert _open_on(tmp_path) == []


@needs_proc
def test_a_descriptor_dropped_while_read_is_closed_by_its_last_reader(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    files = HeldFiles(limit=2)
    held, st = files.take("f", path)
    assert st.st_size == 100
    files.drop({"f"})  # as a refresh that found it gone, while a read uses it
    assert os.pread(held.fd, 4, 0) == b"xxxx", "closed under its reader"
    files.give_back(held)
    assert _open_on(tmp_path) == []
    # evicted by the bound while in use: the same
    a, _ = files.take("a", path)
    b, _ = files.take("b", path)
    c, _ = files.take("c", path)
    assert os.pread(a.fd, 1, 0) == b"x"
    for h in (a, b, c):
        files.give_back(h)
    assert len(_open_on(tmp_path)) == 2
    files.close()
    assert _open_on(tmp_path) == []
