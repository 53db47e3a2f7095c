"""A write of a file among the user's killed between its temporary file and the rename: the
next write of that file removes the leftover, and nothing that is not certainly ours.

Kill trials: a child process installs an agent's hooks (``importers/hooks.py``, the file
``.claude/settings.local.json`` in the workspace) and is killed with SIGKILL once its
temporary file is written, before the rename. On main the leftover stayed for good."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from turnback.fs import leftovers
from turnback.fs.leftovers import remove_leftovers_at
from turnback.fs.tempnames import LEFTOVER_AGE_S, TMP_PREFIX, temp_name
from turnback.importers import hooks
from wsutil import killed_at

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL, a pid probe")

_CHILD = """
import os, sys
from pathlib import Path
from turnback.fs import folders
from turnback.importers import hooks

ready = sys.argv[2]
def stall(self, src, dst):  # the temporary file is written and closed: signal, then wait
    with open(ready, "w") as f:
        f.write(src)
    sys.stdin.read()  # until killed
folders.FdFolder.rename = stall
folders.PathFolder.rename = stall
hooks.install(Path(sys.argv[1]), "claude-code", ["turnback"])
"""

SETTINGS = ".claude/settings.local.json"


def _killed_write(ws: Path, scratch: Path) -> tuple[str, int]:
    """The temporary name a child left, killed between its write and its rename; its pid."""
    return killed_at(_CHILD, ws, scratch, "rename")


def _left(folder: Path) -> set[str]:
    return {n for n in os.listdir(folder) if n.startswith(TMP_PREFIX)}


def _age(path: Path) -> None:
    old = time.time() - LEFTOVER_AGE_S - 5
    os.utime(path, (old, old), follow_symlinks=False)


def _name_of(pid: int, name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``temp_name`` gives ``name`` in a process of ``pid``."""
    with monkeypatch.context() as m:
        m.setattr(os, "getpid", lambda: pid)
        return temp_name(name)


def test_a_killed_hook_write_leaves_a_leftover_the_next_write_removes_and_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    tmp, dead = _killed_write(ws, scratch)
    folder = ws / ".claude"
    assert _left(folder) == {tmp}
    assert tmp.startswith(f"{TMP_PREFIX}settings.local.json.{dead}.")
    assert '"hooks"' in (folder / tmp).read_text()  # the whole new content, never renamed
    assert not (folder / "settings.local.json").exists()

    # look-alikes that are not certainly ours: each must survive every later write
    mine_alive = _name_of(os.getpid(), "settings.local.json", monkeypatch)  # a live pid
    parent_alive = _name_of(os.getppid(), "settings.local.json", monkeypatch)
    wrong_mark = f"{TMP_PREFIX}settings.local.json.{dead}.{tmp[-8:-4]}0000"
    if wrong_mark == tmp:
        wrong_mark = f"{TMP_PREFIX}settings.local.json.{dead}.{tmp[-8:-4]}0001"
    other_file = _name_of(dead, "settings.json", monkeypatch)  # another file's
    users = f"{TMP_PREFIX}settings.local.json.notes"
    as_folder = _name_of(dead, "settings.local.json", monkeypatch)  # a folder, not a file
    kept = {mine_alive, parent_alive, wrong_mark, other_file, users}
    for n in kept:
        (folder / n).write_text("the user's")
        _age(folder / n)
    (folder / as_folder).mkdir()
    _age(folder / as_folder)
    kept.add(as_folder)

    # the next write, at once: the leftover is too young to be certainly a dead write's
    assert hooks.install(ws, "claude-code", ["turnback"])
    assert _left(folder) == {tmp, *kept}

    _age(folder / tmp)
    assert hooks.uninstall(ws, "claude-code")  # the file removed: the next install writes it
    assert hooks.install(ws, "claude-code", ["turnback"])
    assert _left(folder) == kept
    for n in kept - {as_folder}:
        assert (folder / n).read_text() == "the user's"
    assert hooks.status(ws, "claude-code").installed


def test_three_kill_trials_in_a_row_leave_nothing_after_the_next_write(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    left = []
    for i in range(3):
        scratch = tmp_path / f"s{i}"
        scratch.mkdir()
        left.append(_killed_write(ws, scratch)[0])
    folder = ws / ".claude"
    assert _left(folder) == set(left) and len(set(left)) == 3
    for n in left:
        _age(folder / n)
    assert hooks.install(ws, "claude-code", ["turnback"])
    assert _left(folder) == set()
    assert hooks.status(ws, "claude-code").installed


def test_an_export_by_path_removes_an_earlier_exports_leftover_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out" / "session.jsonl"
    target.parent.mkdir()
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(proc.stdout)  # a pid that has ended (reaped by run)
    ours = _name_of(dead, target.name, monkeypatch)
    users = _name_of(dead, "notes.txt", monkeypatch)
    for n in (ours, users):
        (target.parent / n).write_text("x")
        _age(target.parent / n)
    target.write_text("new")
    assert remove_leftovers_at(target) == [ours]
    assert _left(target.parent) == {users}


def test_a_name_that_itself_looks_like_a_temporary_tail_is_recognised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pid and digits are the name's last ones, whatever the name holds."""
    target = tmp_path / "v.123.abcdabcd.json"
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    ours = _name_of(int(proc.stdout), target.name, monkeypatch)
    (tmp_path / ours).write_text("x")
    _age(tmp_path / ours)
    assert remove_leftovers_at(target) == [ours]


@pytest.mark.parametrize("pid", [2**31, 2**32 - 1, 9_999_999_999])
def test_a_marked_name_with_a_pid_no_process_can_have_fails_no_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pid: int) -> None:
    """redteam19: the mark is a CRC anyone can compute, and the tail takes 10 digits. A
    name made for a pid past a C int (a file planted in the workspace, checked out by git)
    made ``os.kill`` raise ``OverflowError``, which the sweep did not catch: every later
    hook install and export ended in a traceback after its write. It is no writer's: left."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    planted = _name_of(pid, "settings.local.json", monkeypatch)
    (ws / ".claude" / planted).write_text("planted")
    _age(ws / ".claude" / planted)
    assert hooks.install(ws, "claude-code", ["turnback"])
    assert hooks.status(ws, "claude-code").installed
    assert _left(ws / ".claude") == {planted}

    target = tmp_path / "out.jsonl"
    exported = _name_of(pid, target.name, monkeypatch)
    (tmp_path / exported).write_text("planted")
    _age(tmp_path / exported)
    target.write_text("new")
    assert remove_leftovers_at(target) == []
    assert (tmp_path / exported).read_text() == "planted"


def test_the_sweep_in_a_workspace_of_any_file_system_removes_only_its_own(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redteam19: the workspace fixture, so that ``scripts/test-portable.sh``'s
    case-insensitive, normalization-insensitive file system runs it too. A look-alike for
    the same file under another case (the same file there) is not a name Turnback gives:
    left."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(proc.stdout)
    folder = ws / ".claude"
    folder.mkdir()
    ours = _name_of(dead, "settings.local.json", monkeypatch)
    other_case = _name_of(dead, "SETTINGS.local.json", monkeypatch)
    for n in (ours, other_case):
        (folder / n).write_text("x")
        _age(folder / n)
    assert hooks.install(ws, "claude-code", ["turnback"])
    assert _left(folder) == {other_case}


def test_a_link_named_like_a_leftover_is_left_and_so_is_its_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redteam19: a symbolic link and a hard link to the user's file, each under a name
    only Turnback gives. The symbolic link is no regular file: left. The hard link is one
    (ours; old, as the file is): its name may go, never the data, which keeps its own name."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(proc.stdout)
    ws = tmp_path / "ws"
    folder = ws / ".claude"
    folder.mkdir(parents=True)
    users = tmp_path / "notes.txt"
    users.write_text("the user's")
    _age(users)
    symlinked = _name_of(dead, "settings.local.json", monkeypatch)
    hardlinked = _name_of(dead + 1, "settings.local.json", monkeypatch)
    os.symlink(users, folder / symlinked)
    os.link(users, folder / hardlinked)
    _age(folder / symlinked)
    assert hooks.install(ws, "claude-code", ["turnback"])
    assert symlinked in _left(folder)
    assert users.read_text() == "the user's" and os.stat(users).st_nlink >= 1


def test_an_exports_folder_swapped_for_a_link_during_the_sweep_removes_nothing_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redteam19: the export's sweep listed, looked at and unlinked by path: a folder on
    the way swapped for a link between the look and the unlink made it remove the
    same-named file in the folder the link points to. Now all three go through the folder
    opened once."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    name = _name_of(int(proc.stdout), "session.jsonl", monkeypatch)
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    for d in (out, elsewhere):
        d.mkdir()
        (d / name).write_text(f"in {d.name}")
        _age(d / name)
    real = leftovers.is_leftover

    def then_swapped(*args: object, **kw: object) -> bool:
        found = real(*args, **kw)  # type: ignore[arg-type]
        out.rename(tmp_path / "moved")
        out.symlink_to(elsewhere)
        return found

    monkeypatch.setattr(leftovers, "is_leftover", then_swapped)
    removed = remove_leftovers_at(out / "session.jsonl")
    assert (elsewhere / name).read_text() == "in elsewhere"
    # by descriptor the leftover went from the folder looked at; with folders reached by
    # path (Windows, TURNBACK_FS_PATHS) the swap is seen and nothing is removed
    assert removed == ([] if (tmp_path / "moved" / name).exists() else [name])


def test_a_file_swapped_in_between_the_look_and_the_removal_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redteam19's open window: the look (``is_leftover``) and the unlink were two calls by
    name, so a file put under the leftover's name between them was deleted (its data lost
    had it no other name). The candidate is now moved to a name of our own and looked at
    there: not the file looked at, it goes back, untouched."""
    target = tmp_path / "out" / "session.jsonl"
    target.parent.mkdir()
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    ours = _name_of(int(proc.stdout), target.name, monkeypatch)
    (target.parent / ours).write_text("a dead write's")
    _age(target.parent / ours)
    real = leftovers.is_leftover
    swapped: list[str] = []

    def swap_after_the_look(name: str, candidate: str, st: os.stat_result) -> bool:
        found = real(name, candidate, st)
        if found and not swapped:  # another file under that name, as old (made before the
            # first is freed: a new file may take a freed inode's number)
            other = target.parent / "elsewhere"
            other.write_text("the user's")
            _age(other)
            other.replace(target.parent / candidate)
            swapped.append(candidate)
        return found

    monkeypatch.setattr(leftovers, "is_leftover", swap_after_the_look)
    assert remove_leftovers_at(target) == []
    assert swapped == [ours]
    assert _left(target.parent) == {ours}, "put back under its name, no other name left"
    assert (target.parent / ours).read_text() == "the user's"
    monkeypatch.setattr(leftovers, "is_leftover", real)
    assert remove_leftovers_at(target) == [ours], "looked at again by the next write: removed"
    assert _left(target.parent) == set()
