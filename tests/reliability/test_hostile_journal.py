"""A store's own files are input: a journal, an operation-log line or a checkpoint line
written by anyone (a cloned repository that ships a ``.turnback/``, a synced folder) is
checked before anything acts on it, and never writes outside the workspace or into .git.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest

from turnback import Store, StoreDamaged
from turnback.objects.objectstore import BLOB
from turnback.rewind import signing
from wsutil import journal_left, picture, run_cli, write

from .crashkit import tally


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    write(d, "victim", "keep me\n")
    return d


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    write(d, "a.txt", "a\n")
    write(d, ".git/HEAD", "ref: refs/heads/main\n")
    return d


def count(case: str) -> None:
    tally("hostile input").add_case(case, True)


def _journal(store: Store, plan: dict[str, object], signed: bool = False,
             **fields: object) -> None:
    """A journal written by hand, as a cloned repository could ship one (``signed``: as
    Turnback writes one, with this user's key)."""
    cp = store.checkpoints()[-1]
    record = {"id": "op1", "op": "rewind", "ts": "2026-01-01T00:00:00Z", "mode": "files",
              "checkpoint": cp.id, "target": cp.tree, "safety": cp.id, "paths": None,
              "session": cp.session_id, "prevHead": None, "toEvent": None, "undoOf": None,
              "plan": plan, **fields}
    (store.root / "journal.json").write_bytes(orjson.dumps(signing.sign(record) if signed
                                                            else record))


def _payload(store: Store) -> list[object]:
    h = store.objects.put(BLOB, b"#!/bin/sh\necho owned > /tmp/owned\n")
    return ["x", h, 30]


ATTACKS = {
    "create ../outside/x": lambda p: {"create": {"../outside/x": p}},
    "remove ../outside/victim": lambda p: {"remove": ["../outside/victim"]},
    "write .git/hooks/pre-commit": lambda p: {"create": {".git/hooks/pre-commit": p}},
    "write sub/.git/config": lambda p: {"create": {"sub/.git/config": p}},
    "write into the store": lambda p: {"create": {".turnback/config.json": p}},
    "absolute path": lambda p: {"create": {"/tmp/abs-x": p}},
    "unnormalised path": lambda p: {"create": {"a/./../../outside/x": p}},
    "backslash path": lambda p: {"create": {"..\\outside\\x": p}},
    "NUL in path": lambda p: {"create": {"a\u0000b": p}},
    "entry not a list": lambda p: {"create": {"b.txt": "x"}},
    "object id not hex": lambda p: {"create": {"b.txt": ["f", "../../../etc/passwd", 1]}},
    "folder mode": lambda p: {"create": {"b.txt": ["d", p[1], 1]}},
    "remove is not a list": lambda p: {"remove": "a.txt"},
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_forged_journal_is_not_applied(ws: Path, outside: Path, name: str) -> None:
    store = Store.open(ws)
    store.checkpoint()
    _journal(store, ATTACKS[name](_payload(store)))
    store.close()
    before, out_before = picture(ws, skip=(b".turnback",)), picture(outside)
    again = Store.open(ws)  # the server and every CLI verb open the store like this
    assert picture(ws, skip=(b".turnback",)) == before
    assert picture(outside) == out_before
    assert not Path("/tmp/abs-x").exists()
    assert again.journal_problem is not None and "was not applied" in again.journal_problem
    with pytest.raises(StoreDamaged, match="rewinds are refused"):
        again.rewind(again.checkpoints()[-1].id)
    assert [d["what"] for d in again.fsck().damaged] == ["rewind journal"]
    count(f"forged journal: {name}")


@pytest.mark.parametrize(("field", "value"), [
    ("session", "../../outside/victim"), ("safety", "no-such-checkpoint"),
    ("paths", ["../outside"]), ("op", "rm -rf"), ("prevHead", "../x"), ("mode", 3),
])
def test_a_journal_with_a_bad_field_is_not_applied(ws: Path, outside: Path, field: str,
                                                   value: object) -> None:
    store = Store.open(ws)
    store.checkpoint()
    write(ws, "a.txt", "mine\n")
    _journal(store, {"remove": ["a.txt"]}, **{field: value})
    store.close()
    again = Store.open(ws)
    assert (ws / "a.txt").read_text() == "mine\n"
    assert picture(outside) == {b"victim": ("f", b"keep me\n", 0o644)}
    assert again.journal_problem is not None
    count(f"journal with a bad {field}")


def test_the_cli_says_what_is_wrong_and_fsck_reports_it(ws: Path, outside: Path) -> None:
    store = Store.open(ws)
    store.checkpoint()
    _journal(store, {"create": {".git/hooks/pre-commit": _payload(store)}})
    store.close()
    assert not (ws / ".git" / "hooks").exists()
    proc = run_cli(ws, "rewind", "latest", check=None)
    assert proc.returncode == 1 and b"rewinds are refused" in proc.stderr, proc.stderr
    assert b".git folder" in proc.stderr and b"Traceback" not in proc.stderr
    proc = run_cli(ws, "fsck", check=None)
    assert proc.returncode == 1 and b"rewind journal" in proc.stdout + proc.stderr
    assert not (ws / ".git" / "hooks").exists()
    count("forged journal through the CLI")


def test_a_journal_never_overwrites_what_its_safety_checkpoint_did_not_hold(
    ws: Path,
) -> None:
    """Valid paths, but the file holds neither what the rewind captured nor its target:
    the journal does not describe this workspace, and the file is kept."""
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "my unsaved work\n")
    write(ws, "b.txt", "b\n")
    evil = store.objects.put(BLOB, b"evil\n")
    _journal(store, {"write": {"a.txt": ["f", evil, 5]}, "remove": ["b.txt"]}, signed=True)
    store.close()
    again = Store.open(ws)
    assert again.journal_problem is None
    assert (ws / "a.txt").read_text() == "my unsaved work\n"  # kept
    assert (ws / "b.txt").read_text() == "b\n"  # not in the safety checkpoint: kept
    # a.txt holds what the safety checkpoint did not see: a sign the rewind may have run
    # (redteam51), so it is finished and recorded with both paths kept, never emptied
    rewinds = [e for e in again.session(cp.session_id or "").events if e.kind == "rewind"]
    assert sorted(rewinds[-1].data["kept"]) == ["a.txt", "b.txt"]
    assert again.oplog.pending() is None
    count("journal of another workspace: changed files kept")


def test_an_oplog_line_with_escaping_paths_is_refused_by_undo(ws: Path, outside: Path) -> None:
    store = Store.open(ws)
    cp = store.checkpoint()
    with open(store.root / "oplog.jsonl", "ab") as f:
        f.write(orjson.dumps({"id": "op9", "op": "rewind", "mode": "files",
                              "checkpoint": cp.id, "safety": cp.id, "session": cp.session_id,
                              "paths": ["../outside"], "prevHead": None}) + b"\n")
    with pytest.raises(StoreDamaged, match="plain relative paths"):
        store.undo()
    with open(store.root / "oplog.jsonl", "ab") as f:
        f.write(orjson.dumps({"id": "op10", "op": "rewind", "mode": "conversation",
                              "session": "../../outside/victim", "prevHead": "x"}) + b"\n")
    with pytest.raises(StoreDamaged, match="session"):
        store.undo()
    assert picture(outside) == {b"victim": ("f", b"keep me\n", 0o644)}
    count("oplog line with escaping paths or session")


def test_a_genuine_interrupted_rewind_is_still_finished(ws: Path) -> None:
    """The checks refuse forgeries, not real journals: a rewind killed after half its files
    is finished on the next open."""
    import turnback.rewind.apply as rw

    write(ws, "b.txt", "b1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "a2\n")
    write(ws, "b.txt", "b2\n")
    write(ws, "c.txt", "c2\n")
    real = rw.Applier._put
    calls = []

    def die_after_one(self: rw.Applier, root: int, path: str, entry: rw.Entry,
                      *folder: object) -> None:
        if calls:
            raise KeyboardInterrupt  # stands for the process dying here
        calls.append(path)
        real(self, root, path, entry, *folder)

    rw.Applier._put = die_after_one  # type: ignore[method-assign]
    try:
        with pytest.raises(KeyboardInterrupt):
            store.rewind(cp.id)
    finally:
        rw.Applier._put = real  # type: ignore[method-assign]
    assert journal_left(store.root)
    again = Store.open(ws)
    assert again.journal_problem is None
    assert (ws / "a.txt").read_text() == "a\n" and (ws / "b.txt").read_text() == "b1\n"
    assert not (ws / "c.txt").exists()
    again.undo()
    assert (ws / "c.txt").read_text() == "c2\n" and (ws / "b.txt").read_text() == "b2\n"


def test_symlinked_git_hooks_folder_is_not_written_through(ws: Path, outside: Path) -> None:
    """Even a plain rewind never writes into .git: the check is on every plan."""
    store = Store.open(ws)
    store.checkpoint()
    assert stat.S_ISDIR(os.lstat(ws / ".git").st_mode)
    assert ".git" not in {p.split("/")[0] for p in store.changes(store.checkpoints()[-1].id)}


def test_a_valid_journal_not_signed_by_this_user_writes_nothing(ws: Path) -> None:
    """A cloned repository's `.turnback/` with a journal that checks out in every field and
    whose paths hold nothing yet: it would create files (world-writable, where `git status`
    may not show them) the moment any verb opened the store. Unsigned or signed with another
    key, it is not applied."""
    store = Store.open(ws)
    store.checkpoint()
    tool = store.objects.put(BLOB, b"#!/bin/sh\necho owned\n")
    plan = {"create": {"node_modules/.bin/eslint": ["p777", tool, 20]}}
    _journal(store, plan)
    store.close()
    again = Store.open(ws)
    assert not (ws / "node_modules").exists()
    assert again.journal_problem is not None and "not signed" in again.journal_problem
    again.close()
    record = orjson.loads((ws / ".turnback" / "journal.json").read_bytes())
    signing.sign({})  # this user's key exists (made by a first rewind)
    record["signature"] = "0" * 64  # signed with some other key
    (ws / ".turnback" / "journal.json").write_bytes(orjson.dumps(record))
    again = Store.open(ws)
    assert not (ws / "node_modules").exists()
    assert again.journal_problem is not None and "does not match" in again.journal_problem
    count("valid journal from elsewhere (unsigned, or another user's key)")
