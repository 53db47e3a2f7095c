"""A rewind's second names are unlinked where they were made (``Applier.release``), even in a
folder renamed between the rewind's answer and its ``finish_rewind``: looked up again by
path, the release found nothing there and the replaced files stayed in the moved folder
for good, out of reach of recovery, gc and fsck (trust20)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.rewind import apply as rw
from wsutil import keeps_replaced, second_names, write


def _held_in(top: Path) -> int:
    """Descriptors of this process open on a folder of ``top`` (the store's own aside)."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own descriptor, closed since
        held += os.path.dirname(target) == str(top) and not os.path.basename(
            target).startswith(".") and os.path.isdir(target)
    return held


@pytest.fixture
def keeping(ws: Path) -> None:
    if not keeps_replaced(ws):
        pytest.skip("no second names here (no hard links or no folder descriptors)")
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("descriptors are counted in /proc/self/fd")


def _rewound_in(store: Store, ws: Path, folders: list[str]) -> None:
    """Each of ``folders`` holds a file rewound (v2 back to v1), not yet finished."""
    for f in folders:
        write(ws, f"{f}/f", "v1")
    cp = store.checkpoint()
    for f in folders:
        write(ws, f"{f}/f", "v2")
    store.rewind(cp.id, finish_later=True)
    assert all((ws / f / "f").read_text() == "v1" for f in folders)
    assert len(second_names(ws)) == len(folders), "each replaced v2 kept by its second name"


def test_a_folder_renamed_before_the_release_keeps_no_second_name(
        store: Store, ws: Path, keeping: None) -> None:
    _rewound_in(store, ws, ["sub"])
    (ws / "sub").rename(ws / "moved")  # an editor's refactoring, after the answer
    store.finish_rewind()
    assert second_names(ws) == [], "unlinked in the moved folder, where it was made"
    assert (ws / "moved" / "f").read_text() == "v1"


def test_a_folder_moved_out_of_the_workspace_keeps_no_second_name(
        store: Store, ws: Path, tmp_path: Path, keeping: None) -> None:
    _rewound_in(store, ws, ["a/sub"])
    outside = tmp_path / "outside"
    (ws / "a" / "sub").rename(outside)
    store.finish_rewind()
    assert second_names(outside) == [] and second_names(ws) == []
    assert (outside / "f").read_text() == "v1", "nothing else of it touched"


def test_a_second_name_taken_by_another_file_is_left(
        store: Store, ws: Path, keeping: None) -> None:
    _rewound_in(store, ws, ["sub", "other"])
    (ws / "other").rename(ws / "other-moved")
    for kept in second_names(ws):  # each second name now another file (not the inode linked;
        # made before the old one is freed, which could give it the same inode number)
        other = kept.with_name("other-file")
        other.write_text("someone else's")
        other.replace(kept)
    taken = second_names(ws)
    store.finish_rewind()
    assert second_names(ws) == taken, "neither unlinked: not the files the rewind linked"
    assert all(p.read_text() == "someone else's" for p in taken)


def test_folders_past_the_bound_are_released_by_path(
        store: Store, ws: Path, keeping: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rw, "HELD_FOLDERS", 3)
    folders = [f"d{i}" for i in range(6)]
    _rewound_in(store, ws, folders)
    assert _held_in(ws) == 3, "one descriptor a folder, no more than the bound"
    (ws / "d0").rename(ws / "d0-moved")  # held: found where it went
    store.finish_rewind()
    assert second_names(ws) == [], "the held folder's by its descriptor, the rest by path"
    assert _held_in(ws) == 0 and _held_in(ws / "d0-moved") == 0, "every one closed"


def test_no_descriptor_is_left_by_a_rewind_rolled_back(
        store: Store, ws: Path, keeping: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for f in ["a", "b"]:
        write(ws, f"{f}/f", "v1")
    cp = store.checkpoint()
    for f in ["a", "b"]:
        write(ws, f"{f}/f", "v2")
    real_check = rw.Applier._check_replaced

    def saved_meanwhile(dfd: rw.FdFolder, name: str, kept: str, path: str, *rest: object
                        ) -> None:
        if path == "b/f":  # an editor's write landing before the rename, in the file replaced
            fd = os.open(kept, os.O_WRONLY | os.O_APPEND, dir_fd=dfd.fd)
            os.write(fd, b" saved")
            os.close(fd)
        real_check(dfd, name, kept, path, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(rw.Applier, "_check_replaced", staticmethod(saved_meanwhile))
    with pytest.raises(rw.Changed):
        store.rewind(cp.id)
    assert _held_in(ws) == 0, "the descriptors held for the release closed by the roll-back"
    assert second_names(ws) == []
    assert (ws / "a" / "f").read_text() == "v2", "rolled back"
    assert (ws / "b" / "f").read_text() == "v2 saved", "the save kept"


@pytest.mark.parametrize("moved_to", ["d5-moved", "deep/er/d5", "d1/d5"])
def test_a_folder_past_the_bound_renamed_before_the_release_keeps_no_second_name(
        store: Store, ws: Path, keeping: None, monkeypatch: pytest.MonkeyPatch,
        moved_to: str) -> None:
    """trust21 §4 and trust24 left it: a folder past ``HELD_FOLDERS`` renamed between the
    answer and the release kept its second name for good (the journal ends with the
    release). The release now walks the workspace for the names it could not reach,
    only then, and unlinks each that is still the file it linked (trust25; fails before:
    one second name left in the moved folder)."""
    monkeypatch.setattr(rw, "HELD_FOLDERS", 3)
    folders = [f"d{i}" for i in range(6)]
    _rewound_in(store, ws, folders)
    (ws / moved_to).parent.mkdir(parents=True, exist_ok=True)
    (ws / "d5").rename(ws / moved_to)  # past the bound: not held
    store.finish_rewind()
    assert second_names(ws) == [], "found where the folder went, and unlinked"
    assert (ws / moved_to / "f").read_text() == "v1", "nothing else of it touched"
    assert _held_in(ws) == 0


def test_a_moved_second_name_taken_by_another_file_is_left_by_the_walk(
        store: Store, ws: Path, keeping: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rw, "HELD_FOLDERS", 3)
    folders = [f"d{i}" for i in range(6)]
    _rewound_in(store, ws, folders)
    (ws / "d5").rename(ws / "d5-moved")
    (ws / "d5").mkdir()  # a new folder at the old path: the name is not there
    [kept] = second_names(ws / "d5-moved")
    other = kept.with_name("other-file")
    other.write_text("someone else's")
    other.replace(kept)  # the name now another file (made before the linked one is freed)
    store.finish_rewind()
    assert second_names(ws) == [kept], "not the file the rewind linked: left"
    assert kept.read_text() == "someone else's"


def _chain(top: Path, depth: int) -> None:
    """``top/d/d/…/d``, ``depth`` folders, made through descriptors (past PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
            os.close(old)
    finally:
        os.close(fd)


def _unchain(top: Path, depth: int) -> None:
    """Remove ``_chain``'s folders bottom up, without recursion (``shutil.rmtree``'s)."""
    fds = [os.open(top, os.O_RDONLY)]
    try:
        for _ in range(depth - 1):
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        while fds:
            fd = fds.pop()
            os.rmdir("d", dir_fd=fd)
            os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)


def test_a_tree_deeper_than_the_recursion_limit_does_not_fail_the_walk(
        store: Store, ws: Path, tmp_path: Path, keeping: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk went down by recursion, one frame a folder: folders nested past Python's
    limit (1,000), which anyone who can write the workspace makes in a moment, and which
    an ignored folder or one made after the rewind's checkpoint keeps out of every scan,
    raised ``RecursionError`` out of the release: **``finish_rewind`` failed and the
    rewind was never recorded** (its journal left for the next open). Now the walk goes
    no deeper than a checkpoint can hold (``MAX_DEPTH``) (redteam27; fails before)."""
    monkeypatch.setattr(rw, "HELD_FOLDERS", 3)
    folders = [f"d{i}" for i in range(6)]
    _rewound_in(store, ws, folders)
    (ws / "d5").rename(tmp_path / "outside")  # not found: the whole workspace walked
    (ws / "deep").mkdir()
    _chain(ws / "deep", 1100)
    try:
        store.finish_rewind()
        assert store.oplog.pending() is None, "the rewind recorded"
        for f in folders[:5]:
            assert second_names(ws / f) == []
    finally:
        _unchain(ws / "deep", 1100)
