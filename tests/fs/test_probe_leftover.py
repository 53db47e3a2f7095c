"""The name probe's file (``fs/namefold.probe``), made and removed in the workspace's root
(or the store's): a process killed between its create and its unlink left it in the
user's workspace for good, and every checkpoint took it in (trust21). Now it is a
temporary name of ``fs/tempnames.py``'s (``.tmp-.turnback-probe-éa.<pid>.<8 hex>``), a
later probe removes it when it is certainly ours (``fs/leftovers.py``: the name down to
its mark, the pid gone, our uid, a minute old; renamed, looked at, then unlinked), and
the scan leaves it out. A file that merely looks like one is never removed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.namefold import PROBE_NAME, is_probe, probe
from turnback.fs.tempnames import LEFTOVER_AGE_S, TMP_PREFIX, temp_name
from wsutil import killed_at

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL, a pid probe")

_CHILD = """
import os, sys
from pathlib import Path
from turnback.fs import namefold

ready = sys.argv[2]
def stall(path):  # the probe's file is made and looked up: signal, then wait to be killed
    with open(ready, "w") as f:
        f.write(os.path.basename(path))
    sys.stdin.read()
namefold.os.unlink = stall
namefold.probe(Path(sys.argv[1]))
"""


def _killed_probe(folder: Path, scratch: Path) -> tuple[str, int]:
    """The probe file a child left, killed between its create and its unlink; its pid."""
    return killed_at(_CHILD, folder, scratch, "unlink")


def _age(path: Path) -> None:
    old = time.time() - LEFTOVER_AGE_S - 5
    os.utime(path, (old, old), follow_symlinks=False)


def _name_of(pid: int, monkeypatch: pytest.MonkeyPatch) -> str:
    """The probe file's name in a process of ``pid``."""
    with monkeypatch.context() as m:
        m.setattr(os, "getpid", lambda: pid)
        return temp_name(PROBE_NAME)


def _probes(folder: Path) -> set[str]:
    return {n for n in os.listdir(folder) if n.startswith(TMP_PREFIX)}


def test_a_killed_probe_leaves_a_file_the_next_probe_removes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("the user's")
    left, _pid = _killed_probe(ws, tmp_path)
    assert _probes(ws) == {left} and is_probe(left), "the kill left the probe's file"
    assert probe(ws) is not None
    assert _probes(ws) == {left}, "a minute old first: a live writer in another pid " \
        "namespace may still be about to unlink it"
    _age(ws / left)
    assert probe(ws) is not None
    assert _probes(ws) == set(), "removed by the next probe"
    assert sorted(os.listdir(ws)) == ["keep.txt"]


def test_three_killed_probes_in_a_row_leave_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for _ in range(3):
        left, _pid = _killed_probe(ws, tmp_path)
        (tmp_path / "ready").unlink()
        _age(ws / left)
    assert len(_probes(ws)) == 3
    probe(ws)
    assert os.listdir(ws) == []


def test_what_merely_looks_like_a_probe_is_never_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(gone.stdout)  # a pid no process has now (reused: left, which is the point)
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    try:
        ours = _name_of(dead, monkeypatch)
        planted = {
            "mark": ours[:-4] + ("0000" if not ours.endswith("0000") else "1111"),
            "live": _name_of(live.pid, monkeypatch),
            "fresh": _name_of(dead, monkeypatch),
            "other-user": _name_of(dead, monkeypatch),
            "link": _name_of(dead, monkeypatch),
            "folder": _name_of(dead, monkeypatch),
            "notes": PROBE_NAME + ".notes",
            "bare": TMP_PREFIX + PROBE_NAME,
        }
        assert len(set(planted.values())) == len(planted)
        for what, name in planted.items():
            path = ws / name
            if what == "link":
                path.symlink_to("keep.txt")
            elif what == "folder":
                path.mkdir()
            else:
                path.write_text(what)
            if what == "other-user":
                if os.geteuid() != 0:
                    path.unlink()
                    continue  # another user's file needs root to make here
                os.chown(path, 65534, 65534)
            if what != "fresh":
                _age(path)
        there = set(os.listdir(ws))
        probe(ws)
        assert set(os.listdir(ws)) == there, "each left: none is certainly a dead probe's"
        assert not is_probe(planted["mark"]) and not is_probe(planted["notes"])
        assert is_probe(planted["live"]), "named right: only its live writer spares it"
    finally:
        live.kill()
        live.wait()
        assert live.stdin is not None
        live.stdin.close()


def test_the_scan_leaves_the_probe_out_of_every_checkpoint(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe's file in the workspace's root (live: another process probing; or a killed
    one's) is never the user's: left out. A look-alike with a wrong mark, or one below
    the root (where no probe is made), is the user's file: taken."""
    empty = store.checkpoint()
    (ws / "a.txt").write_text("a")
    (ws / "sub").mkdir()
    ours = temp_name(PROBE_NAME)
    wrong = ours[:-4] + ("0000" if not ours.endswith("0000") else "1111")
    for rel in [ours, wrong, f"sub/{ours}"]:
        (ws / rel).write_text("")
    full = store.checkpoint()
    files = {c.path for c in store.changes(empty.id, full.id)}
    assert ours not in files
    assert {"a.txt", wrong, f"sub/{ours}"} <= files
    (ws / ours).unlink()
    (ws / _name_of(os.getpid() + 1, monkeypatch)).write_text("")  # an incremental scan's
    store.checkpoint(dirty=[_name_of(os.getpid() + 1, monkeypatch)])
    assert not [c for c in store.changes(full.id, None) if is_probe(c.path)]


def test_a_folder_by_a_probe_name_is_the_users_and_taken(store: Store, ws: Path) -> None:
    """The probe only ever makes a file: a folder by its name (planted, or an agent's
    checkout) holds the user's files, and leaving it out hid its whole tree from every
    checkpoint (redteam23)."""
    empty = store.checkpoint()
    tree = ws / temp_name(PROBE_NAME)
    (tree / "deep").mkdir(parents=True)
    (tree / "deep" / "work.txt").write_text("the user's work\n")
    full = store.checkpoint()
    files = {c.path for c in store.changes(empty.id, full.id)}
    assert f"{tree.name}/deep/work.txt" in files
    assert store.file_content(full.id, f"{tree.name}/deep/work.txt").text == "the user's work\n"


@pytest.fixture
def other_device(ws: Path) -> Iterator[Path]:
    """A store folder on another file system than the workspace: the probe is then made
    in the workspace's root (``probe_store``)."""
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == ws.stat().st_dev:
        pytest.skip("needs /dev/shm on another file system than the workspace")
    folder = Path(tempfile.mkdtemp(prefix="turnback-probe-", dir="/dev/shm"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_a_store_elsewhere_removes_a_killed_probes_file_from_the_workspace(
        ws: Path, tmp_path: Path, other_device: Path) -> None:
    (ws / "a.txt").write_text("a")
    left, _pid = _killed_probe(ws, tmp_path)
    _age(ws / left)
    store = Store.open(ws, store_dir=str(other_device / "store"), create=True)
    try:
        assert _probes(ws) == set(), "the open's probe, in the workspace, swept it"
        cp = store.checkpoint()
        (ws / "a.txt").unlink()
        assert [(c.path, c.status) for c in store.changes(cp.id)] == [("a.txt", "deleted")]
    finally:
        store.close()


def test_a_killed_probe_in_the_store_is_left_to_gc(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the store on the workspace's file system the probe is made in the store's root,
    which no probe sweeps (a listing a rewind would pay): gc removes it, as any ``.tmp-``
    file an hour old, and the workspace never holds it."""
    from turnback.fs.namefold import probe_store
    from turnback.store.gc import STRAY_AGE_S

    left, _pid = _killed_probe(store.root, tmp_path)
    old = time.time() - STRAY_AGE_S - 5
    os.utime(store.root / left, (old, old))
    probe_store(store.workspace, store.root)
    assert left in os.listdir(store.root), "not swept by the probe: left to gc"
    store.gc()
    assert left not in os.listdir(store.root)
