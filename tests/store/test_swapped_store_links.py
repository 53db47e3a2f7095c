"""A link swapped into the store after it was opened, beyond ``objects/`` (that is
test_swapped_links.py): ``sessions/``, ``cache/``, ``index/``, ``locks/``, ``run/``, or
``.turnback`` itself. A server holds a store for hours, and a checkout, an agent's
command or a sync may put a link where a folder was. No store file is created, replaced
or removed through it (fs/instore.py): the write fails with an error naming the link, or
a cache is not saved, and the folder the link names is as it was. Run again with folders
reached by path (scripts/test-fspaths.sh)."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Kind, Store
from turnback.errors import Unsafe
from turnback.fs import sockets
from wsutil import age_tree, write

from .swap_setup import aged_workspace, outside_folder, swap


def _contents(folder: Path) -> dict[str, bytes | str]:
    """Every entry below ``folder`` with its bytes (a socket or other non-file: its kind):
    what a write, a removal or a bind there changes."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirs, files in os.walk(folder):
        for name in files + dirs:
            p = Path(dirpath) / name
            key = str(p.relative_to(folder))
            out[key] = p.read_bytes() if p.is_file() else ("folder" if p.is_dir() else "other")
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return aged_workspace(tmp_path)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """The folder a swapped-in link names (``~/.config`` in the attack), with a file of its
    own."""
    return outside_folder(tmp_path)


@pytest.fixture
def store(ws: Path) -> Iterator[Store]:
    with Store.open(ws) as s:
        s.checkpoint()
        s.start_session(title="t", session_id="s1")
        s.append("s1", Kind.PROMPT, {"text": "x"})
        s.sessions()  # the listing's caches: index/, first page
        yield s


def _edit(ws: Path, tag: str) -> None:
    write(ws, "d0/f0.txt", f"{tag}\n" * 20)
    age_tree(ws)


def _refused(link: str) -> pytest.RaisesExc[Unsafe]:
    return pytest.raises(Unsafe, match=f"'{link}' is a symlink; .*Remove it")


def test_a_session_is_not_created_through_a_linked_sessions_folder(
        store: Store, outside: Path) -> None:
    swap(store.root / "sessions", outside)
    before = _contents(outside)
    with _refused("sessions"):
        store.start_session(title="new", session_id="s2")
    assert _contents(outside) == before


def test_an_event_is_not_appended_through_a_linked_sessions_folder(
        store: Store, outside: Path) -> None:
    swap(store.root / "sessions", outside)
    before = _contents(outside)
    with _refused("sessions"):
        store.append("s1", Kind.PROMPT, {"text": "through the link"})
    assert _contents(outside) == before


def test_no_lock_file_is_made_through_a_linked_locks_folder(
        store: Store, ws: Path, outside: Path) -> None:
    swap(store.root / "locks", outside)
    before = _contents(outside)
    _edit(ws, "locks")
    with _refused("locks"):
        store.checkpoint(dirty={"d0/f0.txt"})
    assert _contents(outside) == before


def test_the_stat_cache_is_not_saved_through_a_linked_cache_folder(
        store: Store, ws: Path, outside: Path) -> None:
    """A cache: the checkpoint is taken, its cache not saved (a re-read costs, nothing is
    lost)."""
    swap(store.root / "cache", outside)
    before = _contents(outside)
    _edit(ws, "cache")
    cp = store.checkpoint()  # a walk: the whole stat cache is written again
    store.save_scan_cache()
    assert cp is not None and store.index.get(cp.id) is not None
    assert _contents(outside) == before


def test_gc_removes_and_writes_nothing_through_a_linked_cache_folder(
        store: Store, ws: Path, outside: Path) -> None:
    for tag in ("one", "two"):  # a checkpoint for gc to drop, with objects of its own
        _edit(ws, tag)
        store.checkpoint(dirty={"d0/f0.txt"})
    swap(store.root / "cache", outside)
    before = _contents(outside)
    assert "stat.bin" in before  # what gc removes (and its mark, which it writes)
    with _refused("cache"):
        store.gc(keep_last=1, keep_days=0)
    assert _contents(outside) == before


def test_the_listing_caches_are_not_saved_through_a_linked_index_folder(
        store: Store, outside: Path) -> None:
    """These caches were written through ``fs/instore.store_folder`` before (links16): kept
    so, and their folders (``index/acc/``) made the same way."""
    swap(store.root / "index", outside)
    before = _contents(outside)
    store.start_session(title="more", session_id="s3")
    store.append("s3", Kind.PROMPT, {"text": "y"})
    assert "s3" in {s.header.id for s in store.sessions()[0]}
    store.save_session_counts({"s1", "s3"})
    store.backend.save_index()  # type: ignore[attr-defined]
    assert _contents(outside) == before


def test_the_handoff_socket_is_not_bound_through_a_linked_run_folder(
        store: Store, outside: Path) -> None:
    """Before, ``run/`` was looked at by ``lstat`` and then bound, unlinked and chmod-ed by
    path: a link there was refused unless swapped in between. Now through the folder."""
    from turnback.server.jobs import handoff

    path = sockets.socket_path(str(store.root))
    if path is None or not sockets.available():
        pytest.skip("no socket address for this store's path")
    (store.root / "run").mkdir(mode=0o700, exist_ok=True)
    swap(store.root / "run", outside)
    outside.chmod(0o700)
    (outside / sockets.SOCKET_NAME).write_text("a file of the user's named like the socket\n")
    before = _contents(outside)
    with _refused("run"):
        sock = handoff._bind(path)
        assert isinstance(sock, socket.socket)
        sock.close()
    assert _contents(outside) == before


@pytest.mark.parametrize("swap", ["link", "folder"])
def test_nothing_is_written_when_the_store_itself_was_replaced(
        store: Store, ws: Path, outside: Path, swap: str) -> None:
    """``.turnback`` moved away and a link (or another folder) put in its place: refused,
    naming the store; neither the link's folder nor the original, wherever it went, is
    written."""
    moved = ws.parent / "moved-store"
    store.root.rename(moved)
    if swap == "link":
        shutil.copytree(moved, outside, dirs_exist_ok=True, symlinks=True)
        os.symlink(outside, store.root)
        there = outside
    else:
        shutil.copytree(moved, store.root, symlinks=True)
        there = store.root
    before, original = _contents(there), _contents(moved)
    _edit(ws, "replaced")
    calls = [
        lambda: store.checkpoint(dirty={"d0/f0.txt"}),
        lambda: store.append("s1", Kind.PROMPT, {"text": "z"}),
        lambda: store.start_session(title="new", session_id="s4"),
        lambda: store.rewind(store.index.all()[0].id),
    ]
    for call in calls:
        with pytest.raises(Unsafe, match=f"the store {store.root} .*(no longer|replaced)"):
            call()
    store.save_scan_cache()
    store.save_session_counts({"s1"})
    assert _contents(there) == before
    assert _contents(moved) == original


def test_the_error_is_an_oserror_too() -> None:
    """A cache's best-effort write (``except OSError``) skips it as it would a full disk;
    a request's write is answered with ``Unsafe``'s code."""
    from turnback.errors import LinkedInStore

    err = LinkedInStore("x")
    assert isinstance(err, OSError) and err.code == Unsafe.code


def test_the_store_put_back_after_a_replacement_is_written_again(
        store: Store, ws: Path, outside: Path) -> None:
    """Refused for as long as another folder stands in its place, not after: the original
    moved back, the next writes go on (no restart, nothing refused for ever)."""
    moved = ws.parent / "moved-store"
    store.root.rename(moved)
    shutil.copytree(moved, store.root, symlinks=True)
    with pytest.raises(Unsafe, match="no longer the folder"):
        store.append("s1", Kind.PROMPT, {"text": "while replaced"})
    shutil.rmtree(store.root)
    moved.rename(store.root)
    store.append("s1", Kind.PROMPT, {"text": "put back"})
    _edit(ws, "back")
    assert store.checkpoint(dirty={"d0/f0.txt"}) is not None
    assert [e.data.get("text") for e in store.backend.load("s1").events][-1] == "put back"
