"""``fsck``: check the whole store, say what is damaged and what can be recovered."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import NotFound, StoreDamaged, Unsafe
from ..fs.jsonl import NoLastObject
from ..fs.junk_tail import Budget, SetAside, set_aside
from ..fs.locks import try_rw_lock
from ..objects.trees import DIR, MAX_DEPTH, MAX_FILES
from ..rewind.oplog import is_op
from .checkpoint_index import is_record
from .gc import forget_caches, stray_temps

if TYPE_CHECKING:
    from .state import StoreState


@dataclass(slots=True)
class FsckReport:
    objects_checked: int = 0
    sessions_checked: int = 0
    checkpoints_checked: int = 0
    damaged: list[dict[str, Any]] = field(default_factory=list)  # {what, id, problem, recoverable}
    stray_temps: int = 0

    @property
    def ok(self) -> bool:
        return not self.damaged

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "objectsChecked": self.objects_checked,
            "sessionsChecked": self.sessions_checked,
            "checkpointsChecked": self.checkpoints_checked,
            "damaged": self.damaged,
            "strayTemps": self.stray_temps,
        }


class _TooMany(Exception):
    """Ends the walk of a checkpoint whose trees name more files than any walk reads."""


def repair(store: StoreState) -> list[SetAside]:
    """Every session file, ``oplog.jsonl`` and ``checkpoints.jsonl`` whose junk tail refuses
    appends, that tail moved to a side file beside it (``fs/junk_tail``): appends,
    checkpoints, ``gc`` and ``undo`` work again and every line is kept. The cut is after
    the last line its head read stops at (``is_op``, ``is_record``). ``Conflict`` for a file
    another process is writing (the files done before it stay done). The side files of
    the whole repair hold at most ``junk_tail.REPAIR_MOST`` bytes (``Budget``): the op log
    and ``checkpoints.jsonl`` first, then the sessions; past it a tail is dropped, said."""
    budget = Budget()
    moved: list[SetAside] = []
    for path, is_one in ((store.oplog.path, is_op), (store.index.path, is_record)):
        done = _passing_damage(_logs_junk, (path, is_one, budget))
        if done is not None:
            moved.append(done)
    return [m for m in (_passing_damage(_session_junk, (store, sid, budget))
                        for sid in store.backend.ids()) if m is not None] + moved


def _session_junk(arg: tuple[StoreState, str, Budget]) -> SetAside | None:
    store, sid, budget = arg
    return store.backend.set_aside_junk(sid, budget)


def _logs_junk(arg: tuple[Path, Callable[[dict[str, Any]], bool], Budget]) -> SetAside | None:
    path, is_one, budget = arg
    return set_aside(path, keep=lambda line: is_one(line.value), head=is_one, budget=budget)


_A = TypeVar("_A")


def _passing_damage(fn: Callable[[_A], SetAside | None], arg: _A) -> SetAside | None:
    """One file's repair; a file it cannot read (a link, a FIFO, a folder at a session's
    name) is left as it is and named by the check that follows: one such name planted in
    ``sessions/`` stopped the whole ``fsck --repair`` before any file was repaired and
    before the report (branch redteam45)."""
    try:
        return fn(arg)
    except StoreDamaged:  # not Conflict (another process writing): said, run again later
        return None


def check(store: StoreState) -> FsckReport:
    rep = FsckReport()
    bad_objects: dict[str, str] = {}
    for name, _size in store.objects.all_names():
        rep.objects_checked += 1
        problem = store.objects.verify(name)
        if problem is not None:
            bad_objects[name] = problem
            rep.damaged.append({"what": "object", "id": name, "problem": problem,
                                "recoverable": "no: delete it; checkpoints using it are listed "
                                               "below"})
    for pack, problem in sorted(store.objects.packs.damaged.items()):
        rep.damaged.append({"what": "pack", "id": pack, "problem": problem,
                            "recoverable": "no: its objects are unreadable (checkpoints using "
                                           "them are listed below); the next checkpoint "
                                           "stores the files still in the workspace again"})
    for log_id, problem in store.objects.check_logs():
        rep.damaged.append({"what": "log", "id": log_id, "problem": problem,
                            "recoverable": "no: objects in that frame may be unreadable "
                                           "(checkpoints using them are listed below); the "
                                           "next checkpoint stores the files still in the "
                                           "workspace again"})
    rep.stray_temps = sum(1 for _ in stray_temps(store))
    if store.journal_problem is not None and store.oplog.holds_journal():
        rep.damaged.append({"what": "rewind journal", "id": str(store.oplog.journal),
                            "problem": store.journal_problem,
                            "recoverable": "delete the file if no rewind was interrupted here "
                                           "(it was not applied); rewinds are refused until "
                                           "then"})
    _check_op_log(store, rep)
    # every record the object logs hold put back first (each log read whole: a line lost
    # from the middle of checkpoints.jsonl while later ones stayed), and said. Under the gc
    # lock exclusive: a writer holds it shared from its log frame to its index line, and a
    # put back between the two took the record for lost, said so, and left the line twice
    # once the writer appended it (redteam37: 15 of 75 fscks beside a writer)
    try:
        held, put_back = _gc_exclusive(store, lambda: store.restore_records_locked(every=True))
    except OSError:
        held, put_back = True, 0  # a read-only store: nothing put back, as before
    if not held:
        rep.damaged.append({
            "what": "checkpoint index", "id": str(store.index.path),
            "problem": f"not checked for lost records: another Turnback process held the "
                       f"store's gc lock for {LOCK_WAIT_S:.0f} s",
            "recoverable": "run 'turnback fsck' again once that process ends (a stopped "
                           "one: resume or end it)"})
    if put_back:
        rep.damaged.append({"what": "checkpoint index", "id": str(store.index.path),
                            "problem": f"{put_back} checkpoint record(s) held by the object "
                                       "logs were missing (lines lost or damaged)",
                            "recoverable": "yes: put back now from those logs"})
    checkpoints = store.index.all()  # reads the index first: its problems are known after
    for p in store.index.problems:
        rep.damaged.append({"what": "checkpoint index", "id": f"{p.file}:{p.line}",
                            "problem": p.message, "recoverable": "the other lines are intact"})
    for cp in checkpoints:
        rep.checkpoints_checked += 1
        missing: list[str] = []
        # bounded as TreeReader.walk is: a damaged tree is reported, never followed forever
        count = [0]

        def walk(tree: str, prefix: str, ancestors: tuple[str, ...],
                 missing: list[str] = missing, count: list[int] = count) -> None:
            if tree in bad_objects:
                missing.append(prefix or ".")
                return
            if tree in ancestors or len(ancestors) >= MAX_DEPTH:
                missing.append(f"{prefix or '.'} (the tree contains itself or nests more than "
                               f"{MAX_DEPTH} folders deep)")
                return
            if count[0] > MAX_FILES:
                raise _TooMany(prefix)
            try:
                entries = store.trees.get(tree)
            except (NotFound, StoreDamaged, Unsafe) as exc:
                missing.append(f"{prefix or '.'} ({exc})")
                return
            count[0] += len(entries)
            for name, e in entries.items():
                path = f"{prefix}{name}"
                if e.mode == DIR:
                    walk(e.hash, path + "/", (*ancestors, tree))
                elif e.hash in bad_objects or not store.objects.exists(e.hash):
                    missing.append(path)

        try:
            walk(cp.tree, "", ())
        except _TooMany as stop:
            missing.append(f"{stop.args[0] or '.'} (the checkpoint holds more than {MAX_FILES} "
                           "files: a damaged or crafted tree)")
        if missing:
            rep.damaged.append({
                "what": "checkpoint", "id": cp.id,
                "problem": f"{len(missing)} path(s) unreadable: {', '.join(missing[:10])}",
                "recoverable": "other files of this checkpoint can still be restored with "
                               "'turnback rewind CP PATH...'",
            })
    for sid in store.backend.ids():
        rep.sessions_checked += 1
        try:
            log = store.backend.load(sid)
        except (StoreDamaged, NotFound) as exc:
            rep.damaged.append({"what": "session", "id": sid, "problem": exc.message,
                                "recoverable": "no header: the events can be read by hand"})
            continue
        for p in log.problems:
            rep.damaged.append({"what": "session", "id": sid, "problem": str(p),
                                "recoverable": "every other line is read"})
        try:  # what an append looks at: a run of junk at the end refuses every one
            store.backend.head(sid)
        except NoLastObject as exc:
            rep.damaged.append({
                "what": "session", "id": sid, "problem": exc.message,
                "recoverable": "its events are all read; appends to it (events, a fork, a "
                               "title, a rewind of its conversation) are refused until "
                               "'turnback fsck --repair' moves the lines after its last "
                               "record into a side file beside it"})
    if any(d["what"] in ("object", "pack", "log", "checkpoint") for d in rep.damaged):
        # the stat cache would keep new checkpoints pointing at the damaged objects:
        # without it the next checkpoint reads the files again and stores what is missing.
        # Under the gc lock, as gc drops it: a checkpoint holds that lock (shared) from its
        # look at the mark to its commit, so none commits a scan built on the cache
        # dropped here (redteam31); fsck waits for a running one, or a gc, to end, for
        # at most ``LOCK_WAIT_S``
        try:
            dropped, _ = _gc_exclusive(store, lambda: forget_caches(store))
        except OSError:
            dropped = True  # a read-only store (nothing dropped there): fsck still reports
        if not dropped:
            rep.damaged.append({
                "what": "stat cache", "id": "cache/stat.bin",
                "problem": f"kept: another Turnback process (a checkpoint, a rewind, an export "
                           f"or gc) held the store's gc lock for {LOCK_WAIT_S:.0f} s, so the "
                           "cache that may name the damaged objects was not dropped",
                "recoverable": "run 'turnback fsck' again once that process ends (a stopped "
                               "one: resume or end it); until then a checkpoint may reuse "
                               "the damaged objects"})
    return rep


def _check_op_log(store: StoreState, rep: FsckReport) -> None:
    """``oplog.jsonl`` looked at as undo looks at it: a junk run past the head read's bound,
    or no file at its name, refuses every undo and every rewind's record. fsck never looked
    at it and said "ok" (redteam48), though the refusal and the repair send the user here."""
    try:
        last = store.oplog.last()
    except NoLastObject as exc:
        rep.damaged.append({
            "what": "operation log", "id": str(store.oplog.path), "problem": exc.message,
            "recoverable": "its operations are all read; undo and a rewind's record are "
                           "refused until 'turnback fsck --repair' moves the lines after its "
                           "last operation into a side file beside it"})
    except StoreDamaged as exc:  # a FIFO, a socket, a folder, a link at its name
        rep.damaged.append({
            "what": "operation log", "id": str(store.oplog.path), "problem": exc.message,
            "recoverable": "no repair of Turnback's: move it away; undo and a rewind's "
                           "record are refused until then"})
    else:
        if last is None:
            return
        from .rewind_ops import check_op  # late: fsck is no rewind's import

        try:
            check_op(last, store.oplog.path)
        except StoreDamaged as exc:  # a line that names an operation, with fields undo refuses
            rep.damaged.append({
                "what": "operation log", "id": str(store.oplog.path), "problem": exc.message,
                "recoverable": "Turnback writes no such line: remove it by hand (undo then "
                               "reverts the operation before it); the lines before it are "
                               "intact, undo is refused until then"})


T = TypeVar("T")

# how long fsck waits for the gc lock before it reports without dropping the stat cache:
# a checkpoint holds it for well under a second, a gc for as long as it runs; a process
# stopped while holding it (Ctrl-Z) did so for ever, and fsck printed nothing (redteam35)
LOCK_WAIT_S = 30.0


def _gc_exclusive(store: StoreState, work: Callable[[], T]) -> tuple[bool, T | None]:
    """``work()`` under the gc lock, exclusive, as gc does its own: (True, its result), or
    (False, None) when the lock stayed busy for ``LOCK_WAIT_S``. Tried, not waited for in
    the kernel, so that the wait has an end (a try-lock every 10 ms, doubling to 0.5 s)."""
    lock = store.root / "locks" / "gc"
    deadline = time.monotonic() + LOCK_WAIT_S
    pause = 0.01
    while True:
        with try_rw_lock(lock, exclusive=True) as held:
            if held:
                return True, work()
        left = deadline - time.monotonic()
        if left <= 0:
            return False, None
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.5)
