"""Changes and diffs between checkpoints and the working tree; a file at a checkpoint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import NotFound, Store, Unsafe
from wsutil import write


def by_path(changes: list) -> dict[str, tuple[str, bool, int, int]]:  # type: ignore[type-arg]
    return {c.path: (c.status, c.binary, c.lines_added, c.lines_removed) for c in changes}


def test_changes_between_checkpoints_and_working_tree(store: Store, ws: Path) -> None:
    write(ws, "keep.txt", "same\n")
    write(ws, "edit.txt", "a\nb\nc\n")
    write(ws, "gone.txt", "x\ny\n")
    write(ws, "img.bin", b"\x00\x01\x02")
    a = store.checkpoint()
    write(ws, "edit.txt", "a\nB\nc\nd\n")
    os.unlink(ws / "gone.txt")
    write(ws, "new/file.txt", "1\n2\n3\n")
    write(ws, "img.bin", b"\x00\x01\x03")
    expect = {"edit.txt": ("modified", False, 2, 1), "gone.txt": ("deleted", False, 0, 2),
              "new/file.txt": ("added", False, 3, 0), "img.bin": ("modified", True, 0, 0)}
    assert by_path(store.changes(a.id)) == expect  # against the working tree
    b = store.checkpoint()
    assert by_path(store.changes(a.id, b.id)) == expect
    assert [c.path for c in store.changes(a.id, b.id)] == sorted(expect)
    assert by_path(store.changes(a.id, b.id, paths=["new"])) == {
        "new/file.txt": ("added", False, 3, 0)}
    assert store.changes(b.id) == []
    assert store.changes(b.id, b.id) == []
    back = by_path(store.changes(b.id, a.id))
    assert back["gone.txt"] == ("added", False, 2, 0)


def test_mode_and_symlink_changes(store: Store, ws: Path) -> None:
    write(ws, "run.sh", "#!/bin/sh\n")
    os.symlink("run.sh", ws / "ln")
    a = store.checkpoint()
    os.chmod(ws / "run.sh", 0o755)
    os.unlink(ws / "ln")
    os.symlink("elsewhere", ws / "ln")
    ch = {c.path: c for c in store.changes(a.id)}
    assert ch["run.sh"].status == "modified" and ch["run.sh"].mode_changed
    assert (ch["run.sh"].lines_added, ch["run.sh"].lines_removed) == (0, 0)
    assert ch["ln"].kind == "symlink" and ch["ln"].status == "modified"


def test_file_folder_swap_in_changes(store: Store, ws: Path) -> None:
    write(ws, "x", "file\n")
    a = store.checkpoint()
    os.unlink(ws / "x")
    write(ws, "x/inner", "in\n")
    assert by_path(store.changes(a.id)) == {"x": ("deleted", False, 0, 1),
                                            "x/inner": ("added", False, 1, 0)}


def test_unified_diff(store: Store, ws: Path) -> None:
    write(ws, "f.txt", "one\ntwo\n")
    write(ws, "b.bin", b"\x00")
    a = store.checkpoint()
    write(ws, "f.txt", "one\n2\nthree")
    write(ws, "b.bin", b"\x00\x01")
    text = store.diff(a.id)
    assert f"--- {a.id}/f.txt\n+++ working/f.txt\n" in text
    assert "-two\n+2\n+three\n\\ No newline at end of file\n" in text
    assert f"Binary files {a.id}/b.bin and working/b.bin differ\n" in text
    only = store.diff(a.id, path="f.txt")
    assert "b.bin" not in only and "f.txt" in only
    write(ws, "added.txt", "new\n")
    assert "--- /dev/null\n+++ working/added.txt" in store.diff(a.id, path="added.txt")


def test_file_content(store: Store, ws: Path) -> None:
    write(ws, "t.txt", "héllo\n")
    write(ws, "b.bin", b"\xff\x00\xfe")
    write(ws, "x.sh", "#!/bin/sh\n", exec_=True)
    os.symlink("t.txt", ws / "ln")
    cp = store.checkpoint()
    t = store.file_content(cp.id, "t.txt")
    assert (t.exists, t.binary, t.size, t.text, t.kind) == (True, False, 7, "héllo\n", "file")
    b = store.file_content(cp.id, "b.bin")
    assert (b.binary, b.text, b.size) == (True, None, 3)
    assert store.file_content(cp.id, "x.sh").kind == "executable"
    assert store.file_content(cp.id, "ln").kind == "symlink"
    assert store.file_content(cp.id, "missing").exists is False
    assert store.file_content(cp.id, "./t.txt").path == "t.txt"
    with pytest.raises(Unsafe):
        store.file_content(cp.id, "../t.txt")
    with pytest.raises(NotFound):
        store.file_content("nope1234", "t.txt")
