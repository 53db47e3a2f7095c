"""A red-team pass over the incremental reads, the held stat cache, the redaction gate and
the sharing repository's configuration (docs/RELIABILITY.md, "A red-team pass over the
incremental reads and sharing's repository"). Each test is one attack."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from turnback import Store
from turnback.errors import Unsafe
from turnback.fs.reading import NotRegular
from turnback.objects import packs
from turnback.sessions.files import FileSessions, ReadLog
from turnback.sharing import operations, redact
from wsutil import age, age_tree, plain_scan, write

from .crashkit import tally


def count(case: str) -> None:
    tally("hostile input").add_case(case, True)


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _shared(tmp_path: Path) -> tuple[Store, Path]:
    """A workspace whose origin is a bare repository, one checkpoint pushed to it."""
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", str(remote))
    ws = tmp_path / "ws"
    _git("init", "-q", str(ws))
    _git("remote", "add", "origin", str(remote), cwd=ws)
    (ws / "a.txt").write_text("a\n")
    store = Store.open(ws, create=True)
    store.checkpoint()
    operations.push(store)
    return store, remote


# -- a store's sharing repository configured to run a command -----------------------------
@pytest.mark.parametrize("case", ["insteadOf ext::", "sshCommand", "include.path",
                                  "credential.helper", "commondir"])
@pytest.mark.parametrize("verb", ["push", "pull"])
def test_a_shipped_sharing_repository_config_runs_nothing(tmp_path: Path, case: str,
                                                          verb: str) -> None:
    store, remote = _shared(tmp_path)
    try:
        marker = tmp_path / "ran"
        config = store.root / "share" / "git" / "config"
        command = f"sh -c 'touch {marker}' >&2"
        lines = {
            "insteadOf ext::": [("url.ext::sh -c touch% " + str(marker) + "% >&2.insteadOf",
                                 str(remote)), ("protocol.ext.allow", "always")],
            "sshCommand": [("core.sshCommand", command)],
            "include.path": [("include.path", str(tmp_path / "more"))],
            "credential.helper": [("credential.helper", "!" + command)],
            "commondir": [],
        }[case]
        if case == "include.path":  # the keys in a file the store's config includes
            _git("config", "-f", str(tmp_path / "more"),
                 "url.ext::sh -c touch% " + str(marker) + "% >&2.insteadOf", str(remote))
            _git("config", "-f", str(tmp_path / "more"), "protocol.ext.allow", "always")
        if case == "commondir":  # git then reads another repository's configuration
            other = tmp_path / "other.git"
            _git("init", "-q", "--bare", str(other))
            _git("config", "-f", str(other / "config"),
                 "url.ext::sh -c touch% " + str(marker) + "% >&2.insteadOf", str(remote))
            _git("config", "-f", str(other / "config"), "protocol.ext.allow", "always")
            (config.parent / "commondir").write_text(f"{other}\n")
        for key, value in lines:
            _git("config", "-f", str(config), key, value)
        (store.workspace / "b.txt").write_text("b\n")
        store.checkpoint()
        with pytest.raises(Unsafe, match="never writes there"):
            operations.push(store) if verb == "push" else operations.pull(store)
        assert not marker.exists()
        count(f"sharing repository config: {case} ({verb})")
    finally:
        store.close()


def test_the_sharing_repository_turnback_writes_is_accepted(tmp_path: Path) -> None:
    """Its own keys (machine id, forgotten sessions, history remote) pass the check."""
    store, remote = _shared(tmp_path)
    try:
        operations.remote(store, set_to=str(remote))
        (store.workspace / "b.txt").write_text("b\n")
        store.checkpoint()
        assert operations.push(store)["checkpoints"] >= 2
        operations.pull(store)
    finally:
        store.close()



# -- a session file read from where the last read stopped (FileSessions.load_more) --------
def _session(ws: Path, n: int) -> tuple[Store, FileSessions, Path]:
    store = Store.open(ws, create=True)
    store.start_session(session_id="s1", title="t")
    for i in range(n):
        store.append("s1", "message", {"text": f"event {i}"})
    backend = store.backend
    assert isinstance(backend, FileSessions)
    return store, backend, backend.path("s1")


def _texts(read: ReadLog) -> list[str]:
    return [str((e.data or {}).get("text")) for e in read.log.events]


def test_a_session_file_replaced_by_another_of_the_same_size_is_read_again(ws: Path) -> None:
    store, backend, path = _session(ws, 3)
    try:
        first, _ = backend.load_more("s1", None)
        data = path.read_bytes().replace(b"event 1", b"EVENT 1")
        st = path.stat()
        tmp = path.with_name("x.tmp")
        tmp.write_bytes(data)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))  # even the same time
        os.replace(tmp, path)  # another inode
        again, known = backend.load_more("s1", first)
        assert known == 0 and _texts(again) == ["event 0", "EVENT 1", "event 2"]
        count("session file: replaced, same size and time")
    finally:
        store.close()


def test_a_session_file_written_over_in_place_with_the_same_size_is_read_again(
        ws: Path) -> None:
    store, backend, path = _session(ws, 3)
    try:
        first, _ = backend.load_more("s1", None)
        data = path.read_bytes()
        with open(path, "r+b") as f:  # the same inode and size; the time moves on
            f.write(data.replace(b"event 0", b"EVENT 0"))
        os.utime(path, ns=(first.mtime + 1, first.mtime + 1))
        again, known = backend.load_more("s1", first)
        assert known == 0 and _texts(again)[0] == "EVENT 0"
        count("session file: written over in place, same size")
    finally:
        store.close()


def test_a_session_file_shortened_then_grown_past_the_read_point_is_read_again(
        ws: Path) -> None:
    store, backend, path = _session(ws, 3)
    try:
        first, _ = backend.load_more("s1", None)
        data = path.read_bytes()
        lines = data.splitlines(keepends=True)
        # the last event taken out, another one longer put in its place: the bytes just
        # before where the last read stopped are not the ones read then
        forged = b"".join(lines[:-1]) + lines[-1].replace(b"event 2", b"event 2 again, longer")
        with open(path, "r+b") as f:
            f.write(forged)
        again, known = backend.load_more("s1", first)
        assert known == 0 and _texts(again)[-1] == "event 2 again, longer"
        count("session file: rewritten in place and grown")
    finally:
        store.close()


def test_a_torn_last_line_is_read_once_it_is_complete(ws: Path) -> None:
    store, backend, path = _session(ws, 2)
    try:
        first, _ = backend.load_more("s1", None)
        line = path.read_bytes().splitlines(keepends=True)[-1].replace(b"event 1", b"event 9")
        with open(path, "ab") as f:  # a writer half way through a line
            f.write(line[:10])
        mid, known = backend.load_more("s1", first)
        assert known == 2 and _texts(mid) == ["event 0", "event 1"] and mid.end == first.end
        with open(path, "ab") as f:
            f.write(line[10:])
        done, known = backend.load_more("s1", mid)
        assert known == 2 and _texts(done) == ["event 0", "event 1", "event 9"]
        assert _texts(backend.load_more("s1", None)[0]) == _texts(done)
        count("session file: a torn last line completed later")
    finally:
        store.close()


@pytest.mark.parametrize("swap", ["symlink", "fifo"])
def test_a_session_file_swapped_for_a_link_or_a_fifo_is_refused_without_blocking(
        ws: Path, tmp_path: Path, swap: str) -> None:
    store, backend, path = _session(ws, 2)
    try:
        first, _ = backend.load_more("s1", None)
        outside = tmp_path / "outside.jsonl"
        outside.write_bytes(path.read_bytes() + path.read_bytes().splitlines(True)[-1])
        path.unlink()
        if swap == "symlink":
            path.symlink_to(outside)
        else:
            os.mkfifo(path)
        with pytest.raises(NotRegular):
            backend.load_more("s1", first)
        count(f"session file: swapped for a {swap} between reads")
    finally:
        store.close()


# -- the redaction gate: one automaton must find what a find loop finds ---------------------
_PIECES = ["AKIA", "aws", "AWS", "AwS", "ghp_", "xox", "XOX", "SG.", "eyJ", "://", ".", ":",
           "secret", "SECRET", "Secret", "token", "TOKEN", "api_key", "API_KEY", "passw",
           "-us", "AC", "SK", "PRIVATE KEY", "k_live_", "pypi-", "glpat-", "sq0csp-",
           "é", "😀", "İ", "ß", "\u212a", "ſ", "\n", " ", "=", "\"", "x", "0", "secretoken",
           "tokentoken", "aaws", "xoxox", "AKIAKIA"]


def _find_loop(hay: str | bytes, words: list[str]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for w in words:
        needle: str | bytes = w.encode() if isinstance(hay, bytes) else w
        at = hay.find(needle)  # type: ignore[arg-type]
        while at >= 0:
            found.setdefault(w, []).append(at)
            at = hay.find(needle, at + 1)  # type: ignore[arg-type]
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hs.lists(hs.sampled_from(_PIECES), max_size=40), hs.booleans())
def test_the_gate_automaton_finds_every_literal_a_find_loop_finds(
        pieces: list[str], binary: bool) -> None:
    text: str | bytes = "".join(pieces)
    if binary:
        text = text.encode()
    lowered = text.lower()
    low = lowered if len(lowered) == len(text) else None
    lit = redact._literals()
    got = lit.find(text, low)
    for lower, words in ((False, lit.exact), (True, lit.lower)):
        hay = low if lower else text
        if hay is None:
            continue
        want = _find_loop(hay, words)
        have = {w: sorted(v) for (w, lo), v in got.items() if lo == lower and w in words}
        assert have == want
    count_once("redaction gate: automaton against find loops (str and bytes)")


_COUNTED: set[str] = set()


def count_once(case: str) -> None:
    if case not in _COUNTED:
        _COUNTED.add(case)
        count(case)


# -- the stat cache file, held open between checkpoints -----------------------------------
@pytest.mark.parametrize("how", ["truncated", "zeroed", "an older copy written over it",
                                 "replaced by an older copy", "removed"])
def test_the_held_stat_cache_file_changed_by_another_process_misses_no_change(
        ws: Path, how: str) -> None:
    """A server holds its stat cache file open between checkpoints and reads rows from it
    as it needs them; another process (a sync tool, a copy) changes that file meanwhile:
    the next checkpoint must still see every changed file, and not fail."""
    for i in range(40):
        write(ws, f"d{i % 4}/f{i}.txt", f"v1 {i}")
    age_tree(ws)
    store = Store.open(ws, create=True)
    try:
        store.checkpoint()
        path = store.root / "cache" / "stat.bin"
        older = path.read_bytes()
        for i in range(0, 40, 3):  # more rows, so the next save writes (and holds) the file
            write(ws, f"d{i % 4}/g{i}.txt", f"new {i}")
        age_tree(ws, 20)
        store.checkpoint()
        held = path.read_bytes()
        if how == "truncated":
            os.truncate(path, len(held) // 2)
        elif how == "zeroed":
            with open(path, "r+b") as f:
                f.write(b"\0" * len(held))
        elif how == "an older copy written over it":
            with open(path, "r+b") as f:
                f.write(older)
        elif how == "replaced by an older copy":
            tmp = path.with_name("stat.bin.x")
            tmp.write_bytes(older)
            os.replace(tmp, path)
        else:
            path.unlink()
        for i in range(0, 40, 2):  # changed, the same sizes, and old enough to be trusted
            write(ws, f"d{i % 4}/f{i}.txt", f"v2 {i}")
        age_tree(ws, 5)
        cp = store.checkpoint()
        for i in range(40):
            want = f"v2 {i}" if i % 2 == 0 else f"v1 {i}"
            assert store.read_file(cp.id, f"d{i % 4}/f{i}.txt") == want.encode()
        again = store.checkpoint()  # and the one after it, from whatever was saved
        assert again.tree == cp.tree
        assert again.tree == plain_scan(ws).tree
        count(f"held stat cache file: {how}")
    finally:
        store.close()


# -- a pack's index sorted a bucket at a time ---------------------------------------------
@settings(max_examples=200, deadline=None)
@given(hs.lists(hs.binary(min_size=packs._ENTRY.size, max_size=packs._ENTRY.size),
                max_size=300))
def test_a_pack_index_sorted_by_buckets_is_the_plain_sort(rows: list[bytes]) -> None:
    """Rows equal in their first bytes, rows differing only in their last, duplicates:
    the bucketed sort must be the sort of the whole (a misplaced row is an object a
    binary search never finds). Both ways: a small index is sorted at once, a large one by
    buckets (forced here by a threshold of 0)."""
    from unittest import mock

    for small in (packs.SORTED_MIN, 0):
        out = bytearray()
        with mock.patch.object(packs, "SORTED_MIN", small):
            packs._sort_rows(bytearray(b"".join(rows)), out)
        assert bytes(out) == b"".join(sorted(rows))
    count_once("pack index: bucketed sort against the plain sort")


# -- incremental checkpoints (only changed names in a folder's node) between rewinds and undos
@pytest.mark.parametrize("seed", range(6))
def test_incremental_checkpoints_between_rewinds_and_undos_miss_nothing(
        tmp_path: Path, seed: int) -> None:
    """A watching server's checkpoints (``dirty``: the changed paths) interleaved with
    rewinds to random earlier checkpoints and undos, with same-size edits aged past the
    racy margin: every checkpoint is the full scan's tree, every rewind writes its target's
    tree, every undo gives back what the rewind replaced."""
    import random

    rng = random.Random(seed)
    ws = tmp_path / "ws"
    for i in range(24):
        write(ws, f"d{i % 3}/s{i % 2}/f{i}.txt", f"{i:04d}")
    age_tree(ws, 30)
    store = Store.open(ws, create=True)
    try:
        cps = [store.checkpoint(dirty=set())]
        for step in range(10):
            dirty: set[str] = set()
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(30)
                rel = f"d{i % 3}/s{i % 2}/f{i}.txt"
                if rng.random() < 0.15 and (ws / rel).exists():
                    (ws / rel).unlink()
                else:
                    write(ws, rel, f"{rng.randrange(10_000):04d}")  # the same size
                    age(ws / rel, rng.choice([0.0, 5.0, 30.0]))
                dirty.add(rel)
            cp = store.checkpoint(dirty=dirty)
            assert cp.tree == plain_scan(ws).tree, f"seed {seed} step {step}"
            cps.append(cp)
            if rng.random() < 0.5:
                before = plain_scan(ws).tree
                target = rng.choice(cps)
                store.rewind(target.id)
                assert plain_scan(ws).tree == target.tree
                after = store.checkpoint(dirty=set())  # the rewind's own changes, unseen
                assert after.tree == target.tree
                if rng.random() < 0.5:
                    store.undo()
                    assert plain_scan(ws).tree == before
                    assert store.checkpoint(dirty=set()).tree == before
        count_once("incremental checkpoints between rewinds and undos")
    finally:
        store.close()


# -- the sharing repository's own files, planted as links or FIFOs --------------------------
@pytest.mark.parametrize("name", ["redactions", "objmap"])
@pytest.mark.parametrize("plant", ["symlink", "fifo"])
def test_a_planted_link_or_fifo_in_share_is_never_followed_nor_waited_on(
        tmp_path: Path, name: str, plant: str) -> None:
    """``share/redactions`` (one line per redaction a conversion made) and ``share/objmap``
    (what became what) are appended to and read by every push; a copied store may hold
    either as a link to a file of the user's, or as a FIFO."""
    store, _remote = _shared(tmp_path)
    try:
        victim = tmp_path / "bashrc"
        victim.write_bytes(b"# the user's own file\n")
        path = store.root / "share" / name
        path.unlink(missing_ok=True)
        if plant == "symlink":
            path.symlink_to(victim)
        else:
            os.mkfifo(path)
        # content with a secret, so the push converts (and redacts) something new
        (store.workspace / "k.env").write_text('API_TOKEN="abcdefgh12345678"\n')
        store.checkpoint()
        with pytest.raises(NotRegular):
            operations.push(store)
        assert victim.read_bytes() == b"# the user's own file\n"
        count(f"share/{name} planted as a {plant}")
    finally:
        store.close()


@pytest.mark.parametrize("inside", ["objects", "objects/pack", "refs", "config"])
def test_a_link_inside_the_sharing_repository_is_refused(tmp_path: Path, inside: str) -> None:
    """``share/git/objects`` (or a folder below, or its config) linked elsewhere: git would
    write the workspace's contents (or read its configuration) there."""
    store, _remote = _shared(tmp_path)
    try:
        path = store.root / "share" / "git" / inside
        elsewhere = tmp_path / "elsewhere"
        os.rename(path, elsewhere)
        path.symlink_to(elsewhere)
        before = sorted(p.name for p in elsewhere.rglob("*")) if elsewhere.is_dir() else []
        (store.workspace / "c.txt").write_text("c\n")
        store.checkpoint()
        with pytest.raises(Unsafe, match="symbolic link"):
            operations.push(store)
        after = sorted(p.name for p in elsewhere.rglob("*")) if elsewhere.is_dir() else []
        assert after == before
        count(f"share/git/{inside} linked elsewhere")
    finally:
        store.close()


def test_a_torn_tail_repaired_by_the_next_append_to_the_same_size_is_not_missed(
        ws: Path) -> None:
    """A writer killed half way leaves a torn last line; the next append truncates it and
    writes its own line (``append_lines``). When that line has the torn one's length and
    the modification time does not move (the same tick of a coarse clock), the file looks
    unchanged to a reader that stopped before the torn line: its event was missed."""
    store, backend, path = _session(ws, 2)
    try:
        whole = path.read_bytes()
        line = whole.splitlines(keepends=True)[-1].replace(b"event 1", b"event 7")
        torn = line[:-1] + b" "  # as long as the line, without its newline
        with open(path, "ab") as f:
            f.write(torn)
        first, _ = backend.load_more("s1", None)
        assert _texts(first) == ["event 0", "event 1"]
        with open(path, "r+b") as f:  # the next append's repair, then its line
            f.truncate(first.end)
            f.seek(first.end)
            f.write(line)
        os.utime(path, ns=(first.mtime, first.mtime))  # the same tick
        assert path.stat().st_size == first.size
        again, _ = backend.load_more("s1", first)
        assert _texts(again) == ["event 0", "event 1", "event 7"]
        count("session file: a torn tail repaired to the same size in the same tick")
    finally:
        store.close()
