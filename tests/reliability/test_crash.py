"""SIGKILL a writer at random moments; reopen; nothing acknowledged is lost, nothing torn.

Each trial forks a child that opens the store and runs one operation; the child
dies at a random file-system mutation (torn writes included) or from a timed
``kill -9``. The parent then opens the store (journal recovery runs there) and
checks the promise of that operation. Seeds make every trial reproducible: a
failure names its seed.
"""

from __future__ import annotations

import os
import random
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from shared_data import need_transcripts
from turnback import Store
from turnback.objects import packlog
from wsutil import Picture, journal_left, picture

from .crashkit import Ack, Outcome, run_child, tally
from .wsgen import edit_workspace, ignored, make_workspace, tracked

SOAK = int(os.environ.get("TURNBACK_SOAK_TRIALS", "1000"))


def kill_plan(rng: random.Random, steps: int) -> dict[str, float | int | None]:
    """Mostly a kill at a random mutation (some runs finish), sometimes a timed kill."""
    if rng.random() < 0.8:
        return {"kill_at": rng.randint(1, steps + max(1, steps // 10))}
    return {"kill_after": rng.uniform(0.0, 0.05)}


def calibrate(setup: Callable[[Path, random.Random], Callable[[Ack], None]],
              tmp: Path) -> int:
    fn = setup(tmp / "calibrate", random.Random(0))
    out = run_child(fn)
    assert out.error is None, out.error
    assert out.steps, "the operation mutated nothing"
    return out.steps


def trials(name: str, n: int, tmp: Path,
           setup: Callable[[Path, random.Random], Callable[[Ack], None]],
           check: Callable[[Path, Outcome, random.Random], str],
           per_trial: bool = False, first: int = 0) -> None:
    """``per_trial``: count the mutations of each trial's own operation first (when they
    vary much between trials), rather than once. Trial ``i`` has seed crc32("name:i")."""
    steps = 0 if per_trial else calibrate(setup, tmp)
    for i in range(first, first + n):
        seed = zlib.crc32(f"{name}:{i}".encode())
        if per_trial:
            steps = calibrate(lambda ws, _rng, s=seed: setup(ws, random.Random(s)),
                              tmp / f"c{i}")
        rng = random.Random(seed)
        ws = tmp / f"t{i}" / "ws"
        fn = setup(ws, rng)
        out = run_child(fn, seed=seed, **kill_plan(rng, steps))  # type: ignore[arg-type]
        assert out.error is None, f"{name} seed {seed}: the writer failed:\n{out.error}"
        try:
            outcome = check(ws, out, rng)
        except AssertionError as exc:
            raise AssertionError(f"{name} trial {i} (seed {seed}, killed={out.killed}): "
                                 f"{exc}") from exc
        tally(name).add(out, outcome)


def fsck_clean(store: Store) -> None:
    rep = store.fsck()
    assert rep.ok, f"fsck: {rep.damaged}"


# -- append --------------------------------------------------------------------------------

def setup_append(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    ws.mkdir(parents=True)
    store = Store.open(ws)
    sid = store.start_session(session_id="s").id
    store.append(sid, "prompt", {"text": "start"})
    sizes = [rng.choice([10, 100, 1000, 20_000, 200_000]) for _ in range(30)]

    def run(ack: Ack) -> None:
        st = Store.open(ws)
        for i, size in enumerate(sizes):
            ev = st.append(sid, "note", {"i": i, "pad": "x" * size})
            ack(ev.id)

    return run


def check_append(ws: Path, out: Outcome, rng: random.Random) -> str:
    torn = not (ws / ".turnback" / "sessions" / "s.jsonl").read_bytes().endswith(b"\n")
    store = Store.open(ws)
    log = store.session("s")
    ids = [e.id for e in log.events]
    assert len(ids) == len(set(ids)), "an event is doubled"
    missing = set(out.acks) - set(ids)
    assert not missing, f"acknowledged events lost: {sorted(missing)}"
    assert not log.problems, f"damage reported: {log.problems}"
    notes = [e for e in log.events if e.kind == "note"]
    assert [e.data["i"] for e in notes] == list(range(len(notes))), "events out of order"
    for prev, e in zip(log.events, log.events[1:], strict=False):
        assert e.parent == prev.id, "the chain of parents is broken"
    unacked = len(ids) - 1 - len(out.acks)
    assert unacked in (0, 1), f"{unacked} events appeared without an ack"
    # the next append repairs a torn tail and links to the last whole event
    nxt = store.append("s", "note", {"text": "after the crash"})
    assert nxt.parent == ids[-1]
    again = store.session("s")
    assert not again.problems and again.events[-1].id == nxt.id
    return "torn tail repaired" if torn else "whole lines"


# -- checkpoint ------------------------------------------------------------------------------

def setup_checkpoint(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    make_workspace(ws, rng)
    Store.open(ws).checkpoint(label="base")
    edit_workspace(ws, rng)

    def run(ack: Ack) -> None:
        cp = Store.open(ws).checkpoint(label="crash")
        ack(cp.id)

    return run


def check_checkpoint(ws: Path, out: Outcome, rng: random.Random) -> str:
    store = Store.open(ws)
    fsck_clean(store)
    ids = {c.id for c in store.checkpoints()}
    assert set(out.acks) <= ids, "an acknowledged checkpoint is missing"
    committed = any(c.label == "crash" for c in store.checkpoints())
    if rng.random() < 0.5:
        store.gc()  # garbage of the dead checkpoint goes; nothing referenced may
        fsck_clean(Store.open(ws))
    # the next checkpoint (a new process) is whole and equals the workspace
    nxt = Store.open(ws).checkpoint(label="next")
    fresh = Store.open(ws)
    fsck_clean(fresh)
    assert fresh.changes(nxt.id) == [], "the next checkpoint differs from the workspace"
    want = tracked(picture(ws))
    for rel, item in want.items():
        assert fresh.read_file(nxt.id, os.fsdecode(rel)) == item[1], rel
    return "committed" if committed else "not committed"


# -- checkpoints, then a power cut -----------------------------------------------------------

LOST_FROM: dict[Path, int] = {}


def setup_power_cut(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    """Small checkpoints one after another: each one's objects and record go into one log
    frame, synced; its line in checkpoints.jsonl is not (objects/packlog.py)."""
    make_workspace(ws, rng)
    Store.open(ws).checkpoint(label="base")
    LOST_FROM[ws] = (ws / ".turnback" / "checkpoints.jsonl").stat().st_size
    seeds = [rng.randrange(1 << 30) for _ in range(4)]

    def run(ack: Ack) -> None:
        st = Store.open(ws)
        for i, seed in enumerate(seeds):
            edit_workspace(ws, random.Random(seed))
            cp = st.checkpoint(label=f"cut{i}")
            ack(cp.id)

    return run


def check_power_cut(ws: Path, out: Outcome, rng: random.Random) -> str:
    """The kill, then what a power cut may also do: lose the unsynced tail of
    checkpoints.jsonl (every line the child appended, from any byte on)."""
    index = ws / ".turnback" / "checkpoints.jsonl"
    kept = LOST_FROM.pop(ws)
    size = index.stat().st_size
    cut = rng.randint(kept, size) if size > kept else size
    os.truncate(index, cut)
    store = Store.open(ws)
    fsck_clean(store)
    ids = {c.id for c in store.checkpoints()}
    assert set(out.acks) <= ids, f"answered checkpoints lost: {sorted(set(out.acks) - ids)}"
    # fsck_clean: every checkpoint listed, restored ones too, reaches only objects on disk
    nxt = Store.open(ws).checkpoint(label="next")
    fresh = Store.open(ws)
    fsck_clean(fresh)
    assert fresh.changes(nxt.id) == [], "the next checkpoint differs from the workspace"
    return "restored" if size > cut and out.acks else "whole"


# -- rewind and undo -------------------------------------------------------------------------

def _prepare_rewind(ws: Path, rng: random.Random) -> tuple[Store, str, Picture, Picture]:
    make_workspace(ws, rng)
    store = Store.open(ws)
    a = picture(ws)
    cp = store.checkpoint(label="A")
    edit_workspace(ws, rng)
    b = picture(ws)
    return store, cp.id, a, b


STATES: dict[Path, tuple[Picture, Picture]] = {}


def setup_rewind(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    _, cp, a, b = _prepare_rewind(ws, rng)
    STATES[ws] = (a, b)

    def run(ack: Ack) -> None:
        Store.open(ws).rewind(cp)
        ack("rewound")

    return run


def rewound_or_not(ws: Path, a: Picture, b: Picture) -> str:
    now = picture(ws)
    if now == b:
        return "before"
    assert tracked(now) == tracked(a), (
        "the workspace is neither the target nor the state before the rewind: "
        f"differs at {sorted(set(now.items()) ^ set({**tracked(a), **ignored(b)}.items()))[:6]}")
    assert ignored(now) == ignored(b), "an ignored file was touched"
    return "target"


def check_rewind(ws: Path, out: Outcome, rng: random.Random) -> str:
    a, b = STATES.pop(ws)
    store = Store.open(ws)  # finishes (or rolls back) an interrupted rewind
    assert not journal_left(store.root), "the journal was left behind"
    where = rewound_or_not(ws, a, b)
    if out.acks:
        assert where == "target", "an acknowledged rewind is not in place"
    fsck_clean(store)
    if where == "target":
        store.undo()  # the safety checkpoint brings back the state before the rewind
        assert picture(ws) == b, "undo after a recovered rewind is not byte-exact"
    return where


def setup_undo(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    store, cp, a, b = _prepare_rewind(ws, rng)
    store.rewind(cp)
    STATES[ws] = (a, b)

    def run(ack: Ack) -> None:
        Store.open(ws).undo()
        ack("undone")

    return run


def check_undo(ws: Path, out: Outcome, rng: random.Random) -> str:
    a, b = STATES.pop(ws)
    store = Store.open(ws)
    assert not journal_left(store.root), "the journal was left behind"
    where = rewound_or_not(ws, a, b)  # "before" = undone, "target" = still rewound
    if out.acks:
        assert where == "before", "an acknowledged undo is not in place"
    fsck_clean(store)
    store.undo()  # whichever it is, one more undo flips it
    flipped = picture(ws)
    if where == "before":
        assert tracked(flipped) == tracked(a)
    else:
        assert flipped == b
    return "undone" if where == "before" else "not undone"


# -- gc --------------------------------------------------------------------------------------

CONTENTS: dict[Path, dict[str, dict[str, bytes]]] = {}


def setup_gc(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    make_workspace(ws, rng, files=8)
    store = Store.open(ws)
    cps = [store.checkpoint(label="0")]
    for i in range(1, 5):
        edit_workspace(ws, rng, n=4)
        cps.append(store.checkpoint(label=str(i), auto=True))
    res = store.rewind(cps[1].id)
    assert res.safety_checkpoint
    for _ in range(rng.randint(0, 3)):
        store.objects.put(b"blob", rng.randbytes(rng.choice([100, 600_000])))  # orphans
    CONTENTS[ws] = {c.id: {p: store.objects.get(b"blob", e.hash)
                           for p, e in store.trees.walk(c.tree)}
                    for c in store.checkpoints()}
    keep = rng.choice([None, 1, 2, 3])

    def run(ack: Ack) -> None:
        res = Store.open(ws).gc(keep_last=keep)
        ack(",".join(res.checkpoints_dropped) or "-")

    return run


def check_gc(ws: Path, out: Outcome, rng: random.Random) -> str:
    before = CONTENTS.pop(ws)
    store = Store.open(ws)
    fsck_clean(store)
    remaining = store.checkpoints()
    for cp in remaining:  # every checkpoint still listed is whole, byte for byte
        files = {p: store.objects.get(b"blob", e.hash) for p, e in store.trees.walk(cp.tree)}
        assert files == before[cp.id], f"checkpoint {cp.id} lost content"
    store.undo()  # the last rewind's safety checkpoint is never collected
    again = Store.open(ws).gc()
    assert again is not None
    fsck_clean(Store.open(ws))
    return "dropped" if len(remaining) < len(before) else "kept all"


# -- merging the object logs -----------------------------------------------------------------

MERGED: dict[Path, tuple[dict[str, dict[str, bytes]], int, int]] = {}


def setup_merge(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    """Checkpoints by fresh processes, one log each (a first one's objects in a pack, some
    earlier logs already merged into a small pack), then some of their lines lost from
    checkpoints.jsonl (a power cut): the merge (store/logmerge.py) puts those back, syncs
    the file, writes the pack and removes the logs; killed at any step."""
    make_workspace(ws, rng, files=8)
    Store.open(ws).checkpoint(label="base")
    for i in range(rng.randint(0, 3)):
        edit_workspace(ws, rng, n=3)
        Store.open(ws).checkpoint(label=f"early{i}")
    if rng.random() < 0.5:
        assert Store.open(ws).merge_logs(at_least=0) is not None
    index = ws / ".turnback" / "checkpoints.jsonl"
    kept = index.stat().st_size
    for i in range(rng.randint(2, 5)):
        edit_workspace(ws, rng, n=3)
        Store.open(ws).checkpoint(label=f"hook{i}")
    store = Store.open(ws)
    MERGED[ws] = ({c.id: {p: store.objects.get(b"blob", e.hash)
                          for p, e in store.trees.walk(c.tree)}
                   for c in store.checkpoints()}, kept,
                  len(packlog.log_names(ws / ".turnback" / "objects" / "log")))
    if rng.random() < 0.5:
        size = index.stat().st_size
        os.truncate(index, rng.randint(kept, size))

    def run(ack: Ack) -> None:
        done = Store.open(ws).merge_logs(at_least=0)
        ack(repr(done))

    return run


def check_merge(ws: Path, out: Outcome, rng: random.Random) -> str:
    """Every checkpoint listed before is listed after, byte for byte; with a power cut
    after the kill too: the lines appended since the last sync of checkpoints.jsonl may
    go while no log was removed (the merge syncs the file before its first removal:
    tests/store/test_log_merge.py), and are put back from the logs."""
    before, kept, logs_before = MERGED.pop(ws)
    root = ws / ".turnback"
    logs_left = len(packlog.log_names(root / "objects" / "log"))
    index = root / "checkpoints.jsonl"
    if logs_left == logs_before and rng.random() < 0.5:
        size = index.stat().st_size
        os.truncate(index, rng.randint(kept, size))  # nothing removed: a cut may take lines
    store = Store.open(ws)
    fsck_clean(store)
    got = {c.id: {p: store.objects.get(b"blob", e.hash) for p, e in store.trees.walk(c.tree)}
           for c in store.checkpoints()}
    assert got == before, "a checkpoint was lost or changed by a merge killed midway"
    Store.open(ws).merge_logs(at_least=0)  # the next merge finishes what the kill cut
    assert packlog.log_names(root / "objects" / "log") == []
    fsck_clean(Store.open(ws))
    return "merged" if out.acks else ("killed, logs left" if logs_left else "killed after")


# -- import ----------------------------------------------------------------------------------

SOURCES = [("claude-code", "claude-code/marot+spotter/tool_heavy.jsonl"),
           ("claude-code", "claude-code/kvsankar+agent-history/session-01.jsonl"),
           ("codex", "codex/simonw+claude-code-transcripts/sample_codex_session.jsonl"),
           ("ralph", "ralph/mikeyobrien+rho/history.jsonl")]
IMPORTS: dict[Path, tuple[str, Path]] = {}


def _contents(store: Store) -> dict[str, list[tuple[str, str | None, str]]]:
    return {s.header.id: [(e.id, e.parent, e.kind) for e in store.session(s.header.id).events]
            for s in store.sessions()[0]}


def setup_import(ws: Path, rng: random.Random) -> Callable[[Ack], None]:
    from turnback.importers import import_source

    source, rel = rng.choice(SOURCES)
    path = need_transcripts() / rel
    ws.mkdir(parents=True)
    Store.open(ws)
    IMPORTS[ws] = (source, path)

    def run(ack: Ack) -> None:
        res = import_source(Store.open(ws), source, path)
        ack(f"{len(res.sessions)} {res.events}")

    return run


def check_import(ws: Path, out: Outcome, rng: random.Random) -> str:
    from turnback.importers import import_source

    source, path = IMPORTS.pop(ws)
    store = Store.open(ws)
    fsck_clean(store)
    partial = _contents(store)
    import_source(store, source, path)  # importing again completes what the crash cut
    done = _contents(Store.open(ws))
    clean_ws = ws.parent / "clean"
    clean_ws.mkdir()
    clean = Store.open(clean_ws)
    import_source(clean, source, path)
    assert done == _contents(clean), "a re-import after a crash differs from a clean import"
    for sid, events in partial.items():  # nothing imported before the crash was changed
        assert done[sid][: len(events)] == events
    if out.acks:
        assert partial == done, "an acknowledged import is incomplete"
    return "complete" if partial == done else "partial"


SCENARIOS = {
    "append": (setup_append, check_append, 50, False),
    "checkpoint": (setup_checkpoint, check_checkpoint, 50, False),
    "power cut": (setup_power_cut, check_power_cut, 40, True),
    "rewind": (setup_rewind, check_rewind, 50, True),
    "undo": (setup_undo, check_undo, 30, True),
    "gc": (setup_gc, check_gc, 30, True),
    "merge": (setup_merge, check_merge, 40, True),
    "import": (setup_import, check_import, 20, True),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_crash(name: str, tmp_path: Path) -> None:
    setup, check, n, per_trial = SCENARIOS[name]
    trials(f"crash: {name}", n, tmp_path, setup, check, per_trial)


@pytest.mark.slow
@pytest.mark.timeout(max(600, SOAK * 3))  # beyond the suite's 300 s per test
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_crash_soak(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The long run: ``TURNBACK_SOAK_TRIALS`` trials of each (default 1000)."""
    setup, check, _, per_trial = SCENARIOS[name]
    done = 0
    while done < SOAK:  # fresh folders every 100 trials keep the disk use small
        tmp = tmp_path_factory.mktemp(f"soak-{name}")
        n = min(100, SOAK - done)
        trials(f"soak: {name}", n, tmp, setup, check, per_trial, first=done)
        shutil.rmtree(tmp, ignore_errors=True)
        done += n


def test_a_gc_killed_after_removing_objects_leaves_no_cache_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the soak: a folder holding only ignored files has a tree in the stat cache
    that no checkpoint holds; a gc killed after removing it, before it dropped the cache,
    left every later checkpoint failing on the missing tree."""
    from turnback.objects.objectstore import ObjectStore

    ws = tmp_path / "ws"
    (ws / "logs" / "old").mkdir(parents=True)
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "logs" / "run.log").write_text("ignored\n")
    (ws / "logs" / "old" / "1.log").write_text("ignored\n")
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as store:
        store.checkpoint()
        store.checkpoint()  # the folder records are trusted from the second full scan on
    real = ObjectStore.repack

    def killed(self: ObjectStore, keep: set[str], fsync: bool) -> int:
        real(self, keep, fsync)
        raise KeyboardInterrupt  # stands for the gc process dying right here

    monkeypatch.setattr(ObjectStore, "repack", killed)
    with pytest.raises(KeyboardInterrupt):
        Store.open(ws).gc()
    monkeypatch.undo()
    (ws / "logs" / "old" / "kept.txt").write_text("tracked now\n")  # logs/ itself unchanged
    with Store.open(ws) as store:
        cp = store.checkpoint()
        assert store.read_file(cp.id, "logs/old/kept.txt") == b"tracked now\n"


def test_a_merge_killed_at_each_of_its_last_steps(tmp_path: Path) -> None:
    """The random trials above rarely land between the merge's last sync and its removals
    (the open and the pack are most of its mutations): here a kill at each of its last
    16 mutations (syncs of checkpoints.jsonl, the pack, its index and folder; each log's
    removal), then the same checks, a power cut included while no log is gone."""
    outcomes = set()
    for back in range(16):
        seed = zlib.crc32(f"merge-last:{back}".encode())
        steps = calibrate(lambda ws, _rng, s=seed: setup_merge(ws, random.Random(s)),
                          tmp_path / f"c{back}")
        rng = random.Random(seed)
        ws = tmp_path / f"t{back}" / "ws"
        fn = setup_merge(ws, rng)
        out = run_child(fn, seed=seed, kill_at=max(1, steps - back))
        assert out.error is None, out.error
        try:
            outcomes.add(check_merge(ws, out, rng))
        except AssertionError as exc:
            raise AssertionError(f"killed {back} mutations before the end: {exc}") from exc
    assert "killed after" in outcomes  # some kills did land after the first removal
