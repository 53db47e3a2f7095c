"""Checkpoints: what is in them (ignores, size cap) and incremental scans."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from turnback import InvalidInput, NotFound, Store
from turnback.objects.trees import DIR, EXEC, FILE, LINK
from turnback.snapshot.ignore import IgnoreRules
from wsutil import age, age_tree, picture, plain_scan, write


def files_of(store: Store, cp_id: str) -> dict[str, str]:
    cp = store.resolve_checkpoint(cp_id)
    return {p: e.mode for p, e in store.trees.walk(cp.tree)}


def test_checkpoint_records_every_file(store: Store, ws: Path) -> None:
    write(ws, "a.txt", "a")
    write(ws, "run.sh", "#!/bin/sh\n", exec_=True)
    write(ws, "deep/er/f.bin", bytes(range(256)))
    os.symlink("a.txt", ws / "link")
    (ws / "empty").mkdir()
    cp = store.checkpoint(label="first")
    assert files_of(store, cp.id) == {"a.txt": FILE, "run.sh": EXEC, "deep/er/f.bin": FILE,
                                      "link": LINK}
    assert (cp.files, cp.bytes) == (4, 1 + 10 + 256 + len("a.txt"))
    assert cp.label == "first" and cp.session_id == "workspace" and cp.event_id
    assert store.read_file(cp.id, "deep/er/f.bin") == bytes(range(256))
    assert store.read_file(cp.id, "link") == b"a.txt"
    assert store.read_file(cp.id, "deep") is None
    # the checkpoint is an event of its session
    ev = store.find_event(cp.event_id or "", "workspace")
    assert ev.kind == "checkpoint" and ev.data["checkpoint"] == cp.id


def test_checkpoint_in_a_session(store: Store, ws: Path) -> None:
    s = store.start_session()
    p = store.append(s.id, "prompt", {"text": "x"})
    cp = store.checkpoint(session_id=s.id)
    ev = store.session(s.id).events[-1]
    assert (ev.id, ev.parent, ev.kind) == (cp.event_id, p.id, "checkpoint")
    assert store.stats(s.id)["checkpoints"] == 1
    assert [c.id for c in store.checkpoints(s.id)] == [cp.id]
    with pytest.raises(NotFound):
        store.checkpoint(session_id="nope")


def test_resolve_checkpoint_refs(store: Store, ws: Path) -> None:
    write(ws, "f", "1")
    a = store.checkpoint()
    write(ws, "f", "2")
    b = store.checkpoint()
    assert store.resolve_checkpoint("latest").id == b.id
    assert store.resolve_checkpoint("latest~1").id == a.id
    assert store.resolve_checkpoint(a.id[:6]).id == a.id
    with pytest.raises(NotFound, match="latest~2"):
        store.resolve_checkpoint("latest~2")
    with pytest.raises(InvalidInput, match="latest~N"):
        store.resolve_checkpoint("latest~x")
    with pytest.raises(NotFound, match="no checkpoint 'zzzzzz'"):
        store.resolve_checkpoint("zzzzzz")
    with pytest.raises(InvalidInput):
        store.resolve_checkpoint("")


# -- ignores -------------------------------------------------------------------------------

def test_ignores_gitignore_nested_negation_turnbackignore(store: Store, ws: Path) -> None:
    write(ws, ".gitignore", "*.log\nbuild/\n!keep.log\n")
    write(ws, ".turnbackignore", "secret*\n")
    write(ws, "a.log", "x")
    write(ws, "keep.log", "kept")
    write(ws, "build/out.o", "o")
    write(ws, "secret.txt", "s")
    write(ws, "src/.gitignore", "gen/\n!important.log\n")
    write(ws, "src/gen/x.c", "g")
    write(ws, "src/important.log", "imp")
    write(ws, "src/other.log", "other")
    write(ws, "src/main.c", "m")
    write(ws, "node_modules/pkg/index.js", "nm")  # not ignored unless a rule says so
    got = set(files_of(store, store.checkpoint().id))
    assert got == {".gitignore", ".turnbackignore", "keep.log", "src/.gitignore",
                   "src/important.log", "src/main.c", "node_modules/pkg/index.js"}


def test_an_ignore_line_git_refuses_matches_nothing_and_the_rest_still_apply(
        store: Store, ws: Path) -> None:
    # a trailing backslash and a reversed range are invalid patterns: git skips them,
    # and so must a checkpoint (an agent may write any bytes to .gitignore)
    write(ws, ".gitignore", "*.log\nodd\\\n[z-a]\n\x17\ufffd\\\nbuild/\n")
    write(ws, "a.log", "x")
    write(ws, "build/out.o", "o")
    write(ws, "odd", "kept")
    write(ws, "main.c", "m")
    assert set(files_of(store, store.checkpoint().id)) == {".gitignore", "odd", "main.c"}
    assert Store.open(ws, config={"ignores": ["x\\", "*.c"]}).scanner.scan(
        write=False).files == 2  # .gitignore and odd: the bad extra skipped, *.c applied


def test_configured_extra_ignores(ws: Path) -> None:
    write(ws, "x.tmp", "t")
    write(ws, "y.txt", "y")
    store = Store.open(ws, config={"ignores": ["*.tmp"]})
    assert set(files_of(store, store.checkpoint().id)) == {"y.txt"}


def test_nested_git_repo_is_a_folder_and_its_git_untouched(store: Store, ws: Path) -> None:
    sub = ws / "vendor" / "lib"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    write(sub, "code.py", "print(1)")
    write(ws, ".git/config", "[core]")
    before = picture(sub / ".git")
    cp = store.checkpoint()
    assert set(files_of(store, cp.id)) == {"vendor/lib/code.py"}
    write(sub, "code.py", "print(2)")
    write(sub, "new.py", "n")
    store.rewind(cp.id)
    assert (sub / "code.py").read_text() == "print(1)" and not (sub / "new.py").exists()
    assert picture(sub / ".git") == before
    assert (ws / ".git" / "config").read_text() == "[core]"


def test_store_dir_excluded_also_when_configured_inside(tmp_path: Path) -> None:
    ws = tmp_path / "w"
    write(ws, "f", "f")
    store = Store.open(ws, store_dir=ws / "history")
    assert set(files_of(store, store.checkpoint().id)) == {"f"}
    with pytest.raises(InvalidInput, match="cannot contain the workspace"):
        Store.open(ws, store_dir=tmp_path)


def test_size_cap_skips_and_reports(ws: Path) -> None:
    write(ws, "small", b"x" * 10)
    write(ws, "huge", b"x" * 5000)
    store = Store.open(ws, config={"size_cap_bytes": 1000})
    cp = store.checkpoint()
    assert set(files_of(store, cp.id)) == {"small"}
    assert cp.skipped == [{"path": "huge", "reason": "larger than the size cap", "size": 5000}]
    again = store.resolve_checkpoint(cp.id)  # the report is kept with the checkpoint
    assert again.skipped == cp.skipped


def test_fifo_skipped_and_reported(store: Store, ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    write(ws, "f", "f")
    cp = store.checkpoint()
    assert set(files_of(store, cp.id)) == {"f"}
    assert [s["path"] for s in cp.skipped] == ["pipe"]


def test_ignore_rules_unit(tmp_path: Path) -> None:
    ws = tmp_path / "w"
    write(ws, ".gitignore", "/root-only\n*.pyc\n")
    write(ws, "a/.turnbackignore", "!keep.pyc\n")
    rules = IgnoreRules(ws, ws / ".turnback", ["extra/"])
    assert rules.is_ignored(".turnback", True)
    assert rules.is_ignored("a/.git", True) and rules.is_ignored(".git", True)
    assert rules.is_ignored("root-only", False)
    assert not rules.is_ignored("a/root-only", False)
    assert rules.is_ignored("a/x.pyc", False)
    assert not rules.is_ignored("a/keep.pyc", False)
    assert rules.is_ignored("extra", True)
    assert rules.is_ignored_path("extra/inside/file", False)
    assert not rules.is_ignored_path("a/b/c", False)


def test_a_chain_of_ignore_rules_is_signed_once_a_walk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders under the same ignore files share their chain's signature: a walk joins
    and hashes each distinct chain once (before: once a folder, ~3 ms of a no-op CLI
    checkpoint's serial walk over 1,001 folders; cold25). The values are the formula's,
    and an ignore file changed (then ``forget``, as a full scan does) changes them."""
    import blake3 as real

    from turnback.snapshot import ignore

    ws = tmp_path / "w"
    write(ws, ".gitignore", "*.log\n")
    write(ws, "a/b/.turnbackignore", "x\n")
    folders = ["", "a", "a/b", *(f"a/b/c{i}" for i in range(30)), *(f"d{i}/e/f" for i in range(30))]
    rules = IgnoreRules(ws, ws / ".turnback", [])
    hashed: list[bytes] = []
    original = real.blake3

    def counted(data: bytes = b"") -> object:
        hashed.append(data)
        return original(data)

    monkeypatch.setattr(ignore.blake3, "blake3", counted)

    def formula(d: str) -> str:
        sigs = rules._sig_chain(d)
        text = ":".join(sigs)
        return text if len(sigs) < 6 else original(text.encode()).hexdigest()[:24]

    got = {d: rules.chain_sig(d) for d in folders}
    assert got == {d: formula(d) for d in folders}
    chains = [b for b in hashed if b.count(b":") >= 5]
    # a/b, a/b/c* and d*/e/f: one each (shorter chains are joined, not hashed)
    assert len(chains) == len(set(chains)) == 3
    write(ws, "a/b/.turnbackignore", "y\n")
    rules.forget()
    assert rules.chain_sig("a/b/c0") != got["a/b/c0"]
    assert rules.chain_sig("d0/e/f") == got["d0/e/f"]


# -- incremental -----------------------------------------------------------------------------

def test_unchanged_files_are_not_read_again(store: Store, ws: Path) -> None:
    for i in range(20):
        write(ws, f"d{i % 3}/f{i}.txt", f"content {i}")
    age_tree(ws)
    first = store.scanner.scan()
    assert first.read == 20
    again = store.scanner.scan()
    assert again.read == 0 and again.tree == first.tree
    age(write(ws, "d1/f1.txt", "changed"))  # (utime moves only this file's ctime)
    third = store.scanner.scan()
    assert third.read == 1 and third.tree != first.tree


def test_folder_records_take_unchanged_folders_whole(store: Store, ws: Path) -> None:
    for i in range(12):
        write(ws, f"d{i % 3}/sub/f{i}.txt", f"content {i}")
    write(ws, ".gitignore", "*.log\nbuild/\n")
    write(ws, "d0/x.log", "ignored")
    write(ws, "d1/build/out.o", "ignored folder")
    age_tree(ws)
    first = store.checkpoint()
    store.checkpoint()  # every file matched its row: each folder gets a record
    cold = Store.open(ws)
    cold.scanner.scan(write=False)
    again = cold.checkpoint()
    assert again.tree == first.tree and (again.files, again.bytes) == (first.files, first.bytes)
    assert set(cold.scanner.statcache.dirrecs) >= {"", "d0", "d1/sub"}
    assert not any("build" in p or p.endswith(".log") for p, _ in cold.trees.walk(again.tree))
    age(write(ws, "d1/sub/f1.txt", "changed!"))  # a file below: the parents rebuild their tree
    write(ws, "d2/new.txt", "new")  # a new file: that folder's record no longer matches
    age_tree(ws)
    (ws / "d0" / "x.log").write_text("still ignored, changed")
    changed = Store.open(ws).checkpoint()
    full = plain_scan(ws)
    assert changed.tree == full.tree and changed.files == first.files + 1
    assert Store.open(ws).checkpoint().tree == changed.tree
    (ws / "d2" / "sub" / "f2.txt").unlink()  # rows of vanished files still go
    again = Store.open(ws)
    again.checkpoint()
    cache = again.scanner.statcache
    assert cache.get("d2/sub/f2.txt") is None
    assert cache.get("d2/sub/f5.txt") is not None and cache.get("d0/sub/f0.txt") is not None


def test_unchanged_files_not_opened(store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch
                                    ) -> None:
    for i in range(5):
        write(ws, f"f{i}", f"{i}")
    age_tree(ws)
    store.checkpoint()
    opened: list[str] = []
    real = store.objects.put_file

    def spy(path: Path | str, size: int) -> str:
        opened.append(Path(path).name)
        return real(path, size)

    monkeypatch.setattr(store.objects, "put_file", spy)
    cp = store.checkpoint()
    assert opened == [] and cp.files == 5
    # a new store object (a cold CLI) trusts the cache file too
    cold = Store.open(ws)
    monkeypatch.setattr(cold.objects, "put_file", spy)
    cold.checkpoint()
    assert opened == []


def test_racily_clean_file_is_read_again(store: Store, ws: Path) -> None:
    """A file written just as it was scanned could change within the same mtime tick."""
    write(ws, "f", "1")
    assert store.scanner.scan().read == 1
    assert store.scanner.scan().read == 1  # too fresh to trust the cache
    age_tree(ws)
    store.scanner.scan()
    assert store.scanner.scan().read == 0


def test_same_size_same_mtime_edit_is_still_seen(store: Store, ws: Path) -> None:
    p = write(ws, "f", "aaaa")
    age_tree(ws)
    a = store.checkpoint()
    st = p.stat()
    p.write_bytes(b"bbbb")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime; ctime moves
    b = store.checkpoint()
    assert store.read_file(b.id, "f") == b"bbbb" and a.tree != b.tree


def test_dirty_incremental_checkpoint(store: Store, ws: Path) -> None:
    write(ws, "a/x", "1")
    write(ws, "b/y", "2")
    age_tree(ws)
    base = store.checkpoint(dirty=set())  # first one is full: no base yet
    write(ws, "a/x", "changed")
    write(ws, "a/new", "n")
    cp = store.checkpoint(dirty={"a/x", "a/new"})
    assert store.read_file(cp.id, "a/x") == b"changed"
    assert store.read_file(cp.id, "a/new") == b"n"
    root_a, root_b = store.trees.get(base.tree), store.trees.get(cp.tree)
    assert root_a["b"] == root_b["b"] and root_b["b"].mode == DIR


def test_nothing_changed_adds_little(store: Store, ws: Path) -> None:
    for i in range(50):
        write(ws, f"d{i % 5}/f{i}", os.urandom(100))
    age_tree(ws)
    store.checkpoint()
    objects_before = sum(1 for _ in store.objects.all_names())
    store.checkpoint()
    assert sum(1 for _ in store.objects.all_names()) == objects_before


def test_progress_callback(store: Store, ws: Path) -> None:
    for i in range(40):
        write(ws, f"f{i}", f"{i}")
    seen: list[tuple[int, int]] = []
    store.checkpoint(progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (40, 40)


# -- a checkpoint that fails half way --------------------------------------------------------

class Crash(BaseException):
    """Stands for the process dying at that point (not an Exception: nothing catches it)."""


def crash_once(monkeypatch: pytest.MonkeyPatch, obj: object, name: str) -> None:
    def boom(*_a: object, **_k: object) -> None:
        monkeypatch.undo()
        raise Crash(name)

    monkeypatch.setattr(obj, name, boom)


@pytest.mark.parametrize("where", ["pack", "log", "commit"])
def test_failed_checkpoint_leaves_no_cache_naming_lost_objects(
        ws: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """The next checkpoint, in this process or another, after gc or not, must be whole.
    Every store is closed here: the stores left open past the crash were not freed when the
    test ended (held in a reference cycle) and kept two descriptors of ``.turnback`` until a
    later test's garbage collection closed them, inside ``tests/fs/test_heldfolder.py``'s
    count of descriptors, which then failed when run after this test (trust25)."""
    from turnback.objects import packs
    write(ws, "f", "v1")
    write(ws, "d/g", "g1")
    with Store.open(ws) as store:
        store.checkpoint()
        write(ws, "f", "v2, never committed")
        write(ws, "d/g", "g2, never committed")
        age_tree(ws)
        if where == "pack":  # a batch too large for a log frame
            monkeypatch.setattr(packs, "LOG_BYTES", 0)
            crash_once(monkeypatch, packs.PackWriter, "finish")
        elif where == "log":
            from turnback.objects import packlog
            crash_once(monkeypatch, packlog.LogFile, "append")
        else:
            crash_once(monkeypatch, store.index, "add")
        with pytest.raises(Crash):
            store.checkpoint()
        with Store.open(ws) as collector:
            collector.gc()  # another process collects what no checkpoint holds
        with Store.open(ws) as another:
            checks = [another.checkpoint()]  # another one starts
        for _ in range(2):
            with Store.open(ws) as fresh:
                assert fresh.fsck().ok
                for cp in checks:
                    assert fresh.read_file(cp.id, "f") == b"v2, never committed"
                    assert fresh.read_file(cp.id, "d/g") == b"g2, never committed"
            checks = [store.checkpoint()]  # and the first one goes on


def test_checkpoint_index_reads_appends_incrementally(tmp_path: Path) -> None:
    from turnback.models import Checkpoint
    from turnback.store.checkpoint_index import CheckpointIndex

    path = tmp_path / "checkpoints.jsonl"
    index = CheckpointIndex(path)

    def cp(cid: str, ts: str) -> Checkpoint:
        return Checkpoint(cid, cid, ts, "0" * 64, "s", f"cp-{cid}", False, False, 1, 1, [], [])

    index.add(cp("b", "2026-01-02"), fsync=False)
    assert [c.id for c in index.all()] == ["b"]
    index.add(cp("a", "2026-01-01"), fsync=False)  # older: sorted in
    with open(path, "ab") as f:
        f.write(b"not json\n{\"id\": \"torn")
    assert [c.id for c in index.all()] == ["a", "b"]
    assert [p.line for p in index.problems] == [3]
    index.add(cp("c", "2026-01-03"), fsync=False)  # repairs the torn tail first
    index.drop(["b"], fsync=False)
    assert [c.id for c in index.all()] == ["a", "c"]
    assert [p.line for p in index.problems] == [3]
    assert index.get("b") is None and index.resolve("latest").id == "c"
    fresh = CheckpointIndex(path)
    assert [c.id for c in fresh.all()] == ["a", "c"] and [p.line for p in fresh.problems] == [3]
    path.write_bytes(path.read_bytes().split(b"\n", 1)[1])  # rewritten shorter: read again
    assert [c.id for c in index.all()] == ["a", "c"] and [p.line for p in index.problems] == [2]


def test_checkpoints_of_one_millisecond_keep_the_order_they_were_taken(tmp_path: Path) -> None:
    """Ids are random: within a millisecond, the order appended (a turn's end, then the
    next turn's start) is the order, read at once or line by line, and after a drop."""
    from turnback.models import Checkpoint
    from turnback.store.checkpoint_index import CheckpointIndex

    path = tmp_path / "checkpoints.jsonl"
    index = CheckpointIndex(path)

    def cp(cid: str) -> Checkpoint:
        return Checkpoint(cid, cid, "2026-01-01T00:00:00.000Z", "0" * 64, "s", f"cp-{cid}",
                          False, False, 1, 1, [], [])

    for cid in ("f", "d", "e"):
        index.add(cp(cid), fsync=False)
        index.all()
    index.add(cp("a"), fsync=False)
    assert [c.id for c in index.all()] == ["f", "d", "e", "a"]
    assert index.resolve("latest").id == "a"
    assert [c.id for c in CheckpointIndex(path).all()] == ["f", "d", "e", "a"]
    index.drop(["d"], fsync=False)
    assert [c.id for c in index.all()] == ["f", "e", "a"]


def test_folder_records_outlive_incremental_checkpoints(store: Store, ws: Path) -> None:
    """A server's checkpoints (dirty paths only) forget the records of the folders they
    rebuilt, and keep the others': the next full scan takes those whole, and builds
    exactly the tree a scan without any cache builds."""
    for i in range(12):
        write(ws, f"d{i % 3}/sub/f{i}.txt", f"content {i}")
    write(ws, "tiny/only.txt", "one")
    age_tree(ws)
    store.checkpoint()
    store.checkpoint()  # every file matched its row: each folder gets a record
    age(write(ws, "d1/sub/f1.txt", "changed"))
    (ws / "tiny" / "only.txt").unlink()  # a folder emptied by a watched change...
    inc = store.checkpoint(dirty={"d1/sub/f1.txt", "tiny/only.txt"})
    store.close()
    cache = Store.open(ws).scanner.statcache
    cache.load()
    assert "d0/sub" in cache.dirrecs and "d2/sub" in cache.dirrecs, "untouched: kept"
    assert not {"", "d1", "d1/sub"} & (set(cache.dirrecs) | set(cache.dirtrees)), "rebuilt: gone"
    cold = Store.open(ws).checkpoint()
    assert cold.tree == inc.tree == plain_scan(ws).tree
    write(ws, "tiny/only.txt", "one")  # ... and filled again unseen: a full scan reads it
    age_tree(ws)
    again = Store.open(ws).checkpoint()
    assert again.tree == plain_scan(ws).tree != cold.tree
    # files of a rebuilt folder removed later, unseen: the full scan finds them gone
    for name in "abc":
        write(ws, f"trio/{name}.txt", name)
    age_tree(ws)
    server = Store.open(ws)
    server.checkpoint()
    server.checkpoint()
    age(write(ws, "trio/a.txt", "A"))
    server.checkpoint(dirty={"trio/a.txt"})
    server.close()
    (ws / "trio" / "b.txt").unlink()  # unseen by any watcher
    (ws / "trio" / "c.txt").unlink()
    last = Store.open(ws).checkpoint()
    assert last.tree == plain_scan(ws).tree


def test_a_folder_above_an_incremental_change_is_looked_at_again(store: Store,
                                                                 ws: Path) -> None:
    """After an incremental checkpoint below it, a folder's file changed unseen (the same
    size, no watcher told) is read by the next full scan."""
    write(ws, "top.txt", "top")
    write(ws, "a/mid.txt", "mid")
    write(ws, "a/b/deep.txt", "deep")
    age_tree(ws)
    store.checkpoint()
    store.checkpoint()  # every folder recorded
    age(write(ws, "a/b/deep.txt", "deep, changed"))
    inc = store.checkpoint(dirty={"a/b/deep.txt"})
    store.close()
    age(write(ws, "a/mid.txt", "MID"))  # the same size, no watcher told
    age(write(ws, "top.txt", "TOP"))
    cold = Store.open(ws).checkpoint()
    assert cold.tree == plain_scan(ws).tree != inc.tree
    assert Store.open(ws).read_file(cold.id, "a/mid.txt") == b"MID"


def test_a_file_an_incremental_checkpoint_could_not_read_is_read_by_the_next_full_scan(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file an incremental checkpoint left out (unreadable then, its stat unchanged) is
    not left out by the next full scan: its folder's record and tree went with that
    checkpoint (keeping the tree it built there made the full scan reuse it, file and all
    missing: tried for issue 16)."""
    write(ws, "a/one.txt", "one")
    write(ws, "a/two.txt", "two")
    age_tree(ws)
    store.checkpoint()
    store.checkpoint()  # every folder recorded
    real = store.scanner._hashed

    def unreadable(item: Any) -> Any:
        return None if item.rel == "a/one.txt" else real(item)

    monkeypatch.setattr(store.scanner, "_hashed", unreadable)
    inc = store.checkpoint(dirty={"a/one.txt"})  # a spurious event: nothing changed
    monkeypatch.undo()
    store.close()
    assert Store.open(ws).read_file(inc.id, "a/one.txt") is None, "left out"
    cache = Store.open(ws).scanner.statcache
    cache.load()
    assert "a" not in cache.dirrecs and "a" not in cache.dirtrees
    cold = Store.open(ws).checkpoint()
    assert cold.tree == plain_scan(ws).tree


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_checkpoints_after_its_parent_did(store: Store, ws: Path) -> None:
    """Threads a checkpoint leaves behind (hashing, fsync) do not exist in a forked child:
    the child's own checkpoint must not wait for them (crash tests and agents' tools fork)."""
    import time
    import warnings

    write(ws, "a.txt", "parent")
    store.checkpoint()  # a new pack, hashed and made durable by this process
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            write(ws, "b.txt", "child")
            Store.open(ws).checkpoint()
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the child's checkpoint hung on its parent's threads")
    assert "b.txt" in files_of(store, store.checkpoints()[-1].id)
