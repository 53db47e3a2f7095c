"""``fsck``: check the whole store, say what is damaged and what can be recovered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, StoreDamaged, Unsafe
from ..fs.locks import rw_lock
from ..objects.trees import DIR, MAX_DEPTH, MAX_FILES
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
    # every record the object logs hold put back first (each log read whole: a line lost
    # from the middle of checkpoints.jsonl while later ones stayed), and said
    put_back = store.restore_records(every=True)
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
    if any(d["what"] in ("object", "pack", "log", "checkpoint") for d in rep.damaged):
        # the stat cache would keep new checkpoints pointing at the damaged objects:
        # without it the next checkpoint reads the files again and stores what is missing.
        # Under the gc lock, as gc drops it: a checkpoint holds that lock (shared) from its
        # look at the mark to its commit, so none commits a scan built on the cache
        # dropped here (redteam31); fsck waits for a running one, or a gc, to end
        try:
            with rw_lock(store.root / "locks" / "gc", exclusive=True):
                forget_caches(store)
        except OSError:
            pass  # a read-only store: fsck still reports
    return rep
