"""Attacks of a red-team pass that broke a promise, each kept as a regression test.

- a 0600 file was restored through a temporary file created 0644: while its bytes were
  copied, any local user could open it (and keep reading after the chmod);
- a roll-back (or the recovery of a journal, even a forged one) deleted every file whose
  name merely began with ``.turnback-tmp-`` in the folders it wrote: a user's file so named,
  captured by the checkpoints, was silently lost;
- a ``config.json`` with a ``compression_level`` of the wrong type or range made every
  checkpoint fail with a traceback (``TypeError``/``ValueError``) instead of naming the file;
- a journal or tree naming ``.GIT/hooks/pre-commit`` passed the ``.git`` check, which was
  case-sensitive: on a case-insensitive file system (macOS) that is the repository's hook.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

import turnback.rewind.apply as rw
from turnback import Checkpoint, Store, StoreDamaged
from turnback.objects.objectstore import BLOB, TREE, ObjectStore
from turnback.rewind import signing
from wsutil import dead_pid, journal_left, picture, rewind_temp, write

from .crashkit import tally


def count(case: str) -> None:
    tally("hostile input").add_case(case, True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    write(d, "a.txt", "a\n")
    write(d, ".git/HEAD", "ref: refs/heads/main\n")
    return d



def _signed_journal(store: Store, cp: Checkpoint, plan: dict[str, object],
                    **fields: object) -> None:
    """A journal of rewind ``op1`` to ``cp`` (its own safety checkpoint) carrying ``plan``,
    signed with this user's key as Turnback signs one: a forged or shipped journal that
    the recovery reads as its own (``fields`` replace the record's)."""
    record = {"id": "op1", "op": "rewind", "ts": "2026-01-01T00:00:00Z", "mode": "files",
              "checkpoint": cp.id, "target": cp.tree, "safety": cp.id, "paths": None,
              "session": cp.session_id, "prevHead": None, "toEvent": None, "undoOf": None,
              "plan": plan, **fields}
    (store.root / "journal.json").write_bytes(orjson.dumps(signing.sign(record)))

def test_a_secret_is_never_readable_through_the_rewinds_temporary_file(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, ".env", "SECRET=1\n")
    os.chmod(ws / ".env", 0o600)
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, ".env", "SECRET=2\n")
    os.chmod(ws / ".env", 0o600)
    modes: list[int] = []
    real, real_write = ObjectStore.copy_blob_to, rw._write_all

    def spy(self: ObjectStore, h: str, fd: int) -> None:
        real(self, h, fd)
        modes.append(os.fstat(fd).st_mode & 0o777)  # the bytes are in: who may read them?

    def spy_write(fd: int, data: bytes) -> None:  # the bytes read ahead (Applier.preload)
        real_write(fd, data)
        modes.append(os.fstat(fd).st_mode & 0o777)

    monkeypatch.setattr(ObjectStore, "copy_blob_to", spy)
    monkeypatch.setattr(rw, "_write_all", spy_write)
    old = os.umask(0o022)
    try:
        store.rewind(cp.id)
    finally:
        os.umask(old)
    assert modes and all(m & 0o077 == 0 for m in modes), [oct(m) for m in modes]
    assert (ws / ".env").read_text() == "SECRET=1\n"
    assert (ws / ".env").stat().st_mode & 0o777 == 0o600
    assert (ws / "a.txt").stat().st_mode & 0o777 == 0o644  # the usual mode still comes back
    count("a 0600 file restored through a temporary file others could read")


def test_a_users_file_named_like_a_temporary_file_survives_a_roll_back(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "d/a.txt", "a1\n")
    write(ws, "d/b.txt", "b1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "d/a.txt", "a2\n")
    write(ws, "d/b.txt", "b2\n")
    write(ws, "d/.turnback-tmp-notes.md", "my notes, only copy\n")
    real = rw.Applier._put
    calls: list[str] = []

    def disk_full_on_second(self: rw.Applier, root: int, path: str, entry: rw.Entry,
                            *folder: object) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(self, root, path, entry, *folder)

    monkeypatch.setattr(rw.Applier, "_put", disk_full_on_second)
    with pytest.raises(OSError):
        store.rewind(cp.id)
    assert (ws / "d/.turnback-tmp-notes.md").read_text() == "my notes, only copy\n"
    assert (ws / "d/a.txt").read_text() == "a2\n"  # rolled back
    count("roll-back deletes a user's file named .turnback-tmp-*")


def test_a_forged_journal_cannot_delete_files_named_like_temporary_files(ws: Path) -> None:
    write(ws, "d/a.txt", "a\n")
    write(ws, "d/.turnback-tmp-keep", "mine\n")
    write(ws, "d/.turnback-tmp-1-0123abcd", "a look-alike of the shape before trust24\n")
    ours = rewind_temp("op1", "d/a.txt", dead_pid(), kept=False)
    store = Store.open(ws)
    cp = store.checkpoint()
    h = store.objects.put(BLOB, b"a\n")
    # a valid plan that changes nothing: it writes what d/a.txt already holds
    _signed_journal(store, cp, {"write": {"d/a.txt": ["f", h, 2]}})
    write(ws, f"d/{ours}", "half a file\n")  # what a killed rewind of op1 leaves
    store.close()
    Store.open(ws)
    assert (ws / "d/.turnback-tmp-keep").read_text() == "mine\n"
    assert (ws / "d/.turnback-tmp-1-0123abcd").exists()  # not op1's: the user's (trust24)
    assert not (ws / f"d/{ours}").exists()
    count("forged journal deletes files named .turnback-tmp-*")


@pytest.mark.parametrize(("key", "value"), [
    ("compression_level", "x"), ("compression_level", 10**6), ("compression_level", True),
    ("auto_checkpoint", "no"), ("size_cap_bytes", True), ("keep_last", True),
    ("background", "no"),
])
def test_a_hostile_config_value_is_named(ws: Path, key: str, value: object) -> None:
    Store.open(ws).close()
    cfg = ws / ".turnback" / "config.json"
    cfg.write_bytes(orjson.dumps({**orjson.loads(cfg.read_bytes()), key: value}))
    with pytest.raises(StoreDamaged) as err:
        Store.open(ws).checkpoint()
    assert str(cfg) in err.value.message and key in err.value.message
    count(f"config.json {key} = {value!r}")


@pytest.mark.parametrize("path", [".GIT/hooks/pre-commit", "sub/.Git/config",
                                  ".TURNBACK/config.json", "git~1/hooks/pre-commit",
                                  ".git./hooks/pre-commit", ".git ./config",
                                  ".g\u200cit/hooks/pre-commit", "\ufeff.Git/config",
                                  ".git::$INDEX_ALLOCATION/config", "TURNBA~1/config.json",
                                  ".turnbac\u212a/config.json"])
def test_a_journal_cannot_write_into_git_or_the_store_in_another_case(ws: Path,
                                                                      path: str) -> None:
    store = Store.open(ws)
    cp = store.checkpoint()
    h = store.objects.put(BLOB, b"#!/bin/sh\necho owned\n")
    _signed_journal(store, cp, {"create": {path: ["x", h, 21]}})
    store.close()
    before = picture(ws, skip=(b".turnback",))
    again = Store.open(ws)
    assert picture(ws, skip=(b".turnback",)) == before
    assert again.journal_problem is not None and "was not applied" in again.journal_problem
    count(f"forged journal writes {path}")


def _deep(ws: Path, levels: int) -> int:
    """Folders nested past PATH_MAX (made through descriptors); returns the deepest's fd."""
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir("d" * 200, dir_fd=fd)
        nfd = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    return fd


def test_a_folder_nested_past_path_max_is_skipped_not_fatal(ws: Path) -> None:
    """A cloned repository (or an agent) nests folders deeper than PATH_MAX (4096 bytes):
    every checkpoint failed with an OSError (ENAMETOOLONG) traceback."""
    fd = _deep(ws, 25)
    try:
        f = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(f, b"v1\n")
        os.close(f)
    finally:
        os.close(fd)
    store = Store.open(ws)
    cp = store.checkpoint()
    assert any("File name too long" in str(s.get("reason")) for s in cp.skipped), cp.skipped
    write(ws, "a.txt", "a2\n")
    store.rewind(cp.id)  # the rest of the workspace still rewinds
    assert (ws / "a.txt").read_text() == "a\n"
    count("folders nested past PATH_MAX")


def test_a_journal_never_empties_a_nested_repositorys_git_folder(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forged journal creates a file where a nested repository stands: clearing the folder
    for it walked into ``sub/.git`` and removed its empty folders (a fresh repository's
    ``objects/``, so git no longer knew it) before meeting a file. The order of a listing is
    the file system's (ext4 hashes names with a per-disk seed): sorted here, objects/ first."""
    write(ws, "sub/.git/refs/heads/main", "0" * 40 + "\n")
    (ws / "sub/.git/objects/pack").mkdir(parents=True)
    (ws / "sub/.git/objects/info").mkdir()
    store = Store.open(ws)
    cp = store.checkpoint()
    h = store.objects.put(BLOB, b"x\n")
    _signed_journal(store, cp, {"create": {"sub": ["f", h, 2]}})
    store.close()
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda p=".": sorted(real(p)))
    Store.open(ws)
    assert (ws / "sub/.git/objects/pack").is_dir() and (ws / "sub/.git/objects/info").is_dir()
    assert (ws / "sub/.git/refs/heads/main").is_file()
    count("forged journal empties a nested repository's .git")


def test_a_folder_named_like_a_temporary_file_does_not_stop_the_store_opening(
        ws: Path) -> None:
    """A cloned repository ships ``d/.turnback-tmp-1-0123abcd/`` (a folder) and a journal
    (or a genuine rewind of ``d/`` was interrupted): the cleanup after the recovery unlinked
    it, and the IsADirectoryError made every open of the store fail, fsck's included."""
    write(ws, "d/a.txt", "a\n")
    write(ws, "d/.turnback-tmp-1-0123abcd/x", "mine\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    h = store.objects.put(BLOB, b"a\n")
    _signed_journal(store, cp, {"write": {"d/a.txt": ["f", h, 2]}})
    store.close()
    again = Store.open(ws)
    assert not journal_left(again.root)
    assert (ws / "d/.turnback-tmp-1-0123abcd/x").read_text() == "mine\n"
    count("a folder named like a temporary file beside a journal's paths")


def test_a_journal_whose_safety_tree_is_unsafe_does_not_stop_the_store_opening(
        ws: Path) -> None:
    """A shipped ``checkpoints.jsonl`` line names a crafted tree with an entry ``..``, and a
    shipped journal names that checkpoint as its safety: reading the tree raised ``Unsafe``,
    which the recovery did not catch, so no verb could open the store (fsck neither)."""
    store = Store.open(ws)
    cp = store.checkpoint()
    h = store.objects.put(BLOB, b"a\n")
    bad = store.objects.put(TREE, f"f {h} 2 ..\0f {h} 2 a.txt\0".encode())
    line = {**cp.to_json(), "id": cp.id[:-4] + "beef", "tree": bad}
    with open(store.root / "checkpoints.jsonl", "ab") as f:
        f.write(orjson.dumps(line) + b"\n")
    _signed_journal(store, cp, {"write": {"a.txt": ["f", h, 2]}}, safety=line["id"])
    store.close()
    again = Store.open(ws)
    assert again.journal_problem is not None and "was not applied" in again.journal_problem
    assert "rewind journal" in [d["what"] for d in again.fsck().damaged]
    count("journal whose safety checkpoint's tree is unsafe")


def _noop_journal(store: Store, **fields: object) -> None:
    h = store.objects.put(BLOB, b"a\n")
    _signed_journal(store, store.checkpoints()[-1], {"write": {"a.txt": ["f", h, 2]}}, **fields)


def test_a_journal_of_a_session_not_in_the_store_does_not_stop_the_store_opening(
        ws: Path) -> None:
    """The session id was checked for its form only: recording the rewind in a session that
    does not exist raised NotFound at every open of the store (fsck's included)."""
    store = Store.open(ws)
    store.checkpoint()
    _noop_journal(store, session="s" + "0" * 25)
    store.close()
    again = Store.open(ws)
    assert again.journal_problem is not None and "is not in this store" in again.journal_problem
    assert "rewind journal" in [d["what"] for d in again.fsck().damaged]
    count("journal naming a session not in the store")


def test_a_journal_beside_a_damaged_session_does_not_stop_the_store_opening(ws: Path) -> None:
    """The session the journal records into has lost its header: the StoreDamaged of
    recording it stopped every open; now the store opens, says so, and fsck names both."""
    store = Store.open(ws)
    cp = store.checkpoint()
    _noop_journal(store)
    assert cp.session_id is not None
    store.backend.path(cp.session_id).write_bytes(b'{"id": 1}\n')
    store.close()
    again = Store.open(ws)
    assert again.journal_problem is not None and "could not be recorded" in again.journal_problem
    assert "rewind journal" in [d["what"] for d in again.fsck().damaged]
    assert (ws / "a.txt").read_text() == "a\n"
    count("journal beside a damaged session")
