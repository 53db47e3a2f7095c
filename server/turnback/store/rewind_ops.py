"""The store's rewind operations: rewind files and/or the conversation to a checkpoint after a
safety checkpoint, undo any rewind or undo, and finish one a crash interrupted (the
journal, checked like any input). The plan and its application are in ``turnback.rewind``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import (
    Conflict,
    InvalidInput,
    NotFound,
    StoreDamaged,
    TurnbackError,
    Unsafe,
    imported_late,
)
from ..events import (
    JSON,
    Kind,
    check_id,
    new_id,
    now_iso,
)
from ..fs import instore
from ..fs.atomic import fsync_all, syncfs
from ..fs.folders import Folder, open_root
from ..fs.heldfolder import HeldFolder
from ..fs.jsonl import NoLastObject, dumps
from ..fs.locks import file_lock, rw_lock
from ..fs.namefold import NameRules, Site, collisions, probe_site, probe_store
from ..fs.paths import display, normalize, quote
from ..fs.reading import NotRegular
from ..models import Checkpoint
from ..objects.trees import DIR, LINK, Entry
from ..rewind import signing
from ..rewind.oplog import APPLIED
from ..snapshot import prescan
from . import dropped_rewind
from .checkpoint_ops import CheckpointOps, folder_gone
from .record_folders import RecordFolders, open_record_folders
from .safety_names import safety_label
from .session_ops import HEAD, _Head
from .state import replaced_before_rewind

# ``rewind.apply``, ``rewind.plan`` and ``fs.winnames`` are imported where a plan is made,
# applied or checked: the checkpoints (the CLI's, a server's first) that open the store most
# often need none of them (``rewind.plan`` builds a dataclass and ``winnames`` compiles its
# patterns: 4.4 M instructions of a fresh no-op's imports, bench/RESULTS.md, cold27), each
# in ``imported_late``: a failure there (an upgrade while a server ran) is named as such
TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..results import RewindResult  # imported where one is made (cold28)
    from ..rewind.plan import Plan

MODES = ("files", "conversation", "both")


def _normal(path: str) -> str | None:
    """``path`` normalised, or None when it is no plain relative path."""
    try:
        return normalize(path)
    except TurnbackError:
        return None


def _skipped_paths(skipped: list[JSON]) -> list[str]:
    """The paths a checkpoint skipped (unreadable, too large, not a file), normalised."""
    out = []
    for item in skipped:
        p = item.get("path") if isinstance(item, dict) else None
        if isinstance(p, str):
            if p == ".":
                return [""]  # the whole workspace could not be listed
            n = _normal(p)
            if n is not None:
                out.append(n)
    return out


def _plan_from_json(obj: object, what: str) -> Plan:
    """``Plan.from_json``, its module imported here (see above)."""
    with imported_late("turnback.rewind.plan"):
        from ..rewind.plan import Plan
    return Plan.from_json(obj, what)


def _selected_by(path: str, prefixes: list[str]) -> bool:
    return any(p == "" or path == p or path.startswith(p + "/") for p in prefixes)


class RewindOps(CheckpointOps):
    """Rewinds of the store (see ``Store``)."""

    # this process's probe of the workspace's name rules, and where it was made
    # (``_confirm_names``)
    _names_probed: tuple[Site, NameRules] | None = None

    def _check_objects(self, plan: Plan) -> None:
        """Every blob the plan needs must be there before the workspace is touched."""
        for path, entry in {**plan.write, **plan.create}.items():
            if not self.objects.exists(entry.hash):
                raise StoreDamaged(
                    f"cannot rewind: the stored content of '{path}' (object {entry.hash[:12]}) is "
                    "missing; the workspace was not changed. Run 'turnback fsck'"
                )

    def rewind(
        self,
        checkpoint: str,
        paths: list[str] | None = None,
        mode: str = "files",
        dry_run: bool = False,
        dirty: Iterable[str] | None = None,
        finish_later: bool = False,
    ) -> RewindResult:
        """Make the workspace (and/or the conversation) what it was at ``checkpoint``.

        ``dirty`` (a watcher's changed paths) lets the safety checkpoint read only those.
        ``finish_later``: return once the files are in place, and leave recording the
        rewind to ``finish_rewind()`` (see there).
        """
        if mode not in MODES:
            raise InvalidInput(f"mode {mode!r} must be one of {', '.join(MODES)}")
        cp = self.resolve_checkpoint(checkpoint)
        sel = sorted({normalize(p) for p in paths}) if paths else None
        pulled = cp.origin is not None  # a teammate's (sharing/): its session is read-only
        if pulled and mode != "files":
            raise InvalidInput(f"checkpoint {cp.id} was pulled from {cp.origin}: its "
                               "conversation is theirs; rewind its files (mode 'files')")
        if mode == "conversation":
            return self._rewind_conversation(cp, dry_run)
        return self._rewind_files(cp.id, cp.tree, sel, mode, dry_run, cp.partial, cp.absent,
                                  unknown=_skipped_paths(cp.skipped),
                                  session_id=None if pulled else cp.session_id,
                                  to_event=None if pulled else cp.event_id, op="rewind",
                                  dirty=dirty, finish_later=finish_later)

    def _rewind_conversation(self, cp: Checkpoint, dry_run: bool) -> RewindResult:
        from ..results import RewindResult

        if not cp.session_id or not cp.event_id:
            raise Conflict(f"checkpoint {cp.id} belongs to no session event: nothing to rewind")
        if dry_run:
            return RewindResult([], [], [], None, True, "conversation", cp.id, cp.event_id)
        prev = self.backend.head(cp.session_id)
        ev = self.append(cp.session_id, Kind.REWIND,
                         {"checkpoint": cp.id, "mode": "conversation", "previousHead": prev},
                         parent=cp.event_id, fsync=self.config.fsync_commits)
        self.oplog.add({"id": new_id(), "op": "rewind", "ts": now_iso(), "mode": "conversation",
                        "checkpoint": cp.id, "session": cp.session_id, "prevHead": prev,
                        "newHead": ev.id}, fsync=self.config.fsync_commits)
        return RewindResult([], [], [], None, False, "conversation", cp.id, ev.id)

    def _rewind_files(
        self, label_id: str, target_tree: str, sel: list[str] | None, mode: str, dry_run: bool,
        partial: bool, absent: list[str], *, unknown: list[str], session_id: str | None,
        to_event: str | None, op: str, undo_of: str | None = None,
        dirty: Iterable[str] | None = None, finish_later: bool = False,
    ) -> RewindResult:
        """``unknown``: paths the target checkpoint skipped (unreadable, too large): what
        they held then is not known, so the rewind leaves them as they are."""
        from ..results import RewindResult

        self.finish_rewind()
        self._refuse_if_journal_bad()
        with file_lock(self.root / "locks" / "rewind"), self._mutex:
            if dry_run:
                plan = self._plan(self._working_tree(), target_tree, sel, partial, absent,
                                  unknown, label_id)
                return RewindResult(sorted(plan.write), sorted(plan.create), plan.remove, None,
                                    True, mode, label_id)
            sid = session_id if session_id and self.backend.exists(session_id) else None
            with rw_lock(self.root / "locks" / "gc", exclusive=False), \
                    contextlib.ExitStack() as keep:
                # the safety checkpoint is committed only once the rewind is known to go
                # ahead: a refused rewind leaves nothing behind (and `latest~1` stays put)
                res, skipped = self._snapshot(dirty, None)
                try:
                    plan = self._plan(res.tree, target_tree, sel, partial, absent, unknown,
                                      label_id)
                    self._check_objects(plan)
                    with imported_late("turnback.rewind.apply"):
                        from ..rewind.apply import check_conflicts
                    check_conflicts(str(self.workspace), plan, {
                        str(k.get("path")): str(k.get("reason")) for k in skipped},
                        self.names.key)
                except BaseException:
                    # refused: the scan stays the base of the next one, like a prepare()
                    # (its objects written now, without a record: objects/packlog.py)
                    self.objects.flush_held()
                    self._prepared_skipped = skipped
                    raise
                try:
                    # its record, event and listing in one dup of the held root and the
                    # session's folder opened there first, as a checkpoint's (``_record``)
                    folders = keep.enter_context(open_record_folders(
                        self._root_held, self.backend, sid or self._workspace_session()))
                    safety, frame = self._commit_safety(
                        res.tree, (op, label_id), sid, res.files, res.bytes, skipped,
                        folders)
                except BaseException as exc:
                    self._statcache.discard()  # as in checkpoint()
                    self._scan_base = None
                    if (isinstance(exc, (OSError, TurnbackError))
                            and self._root_held.replaced()):
                        # what the event met at the path (folders by path: no session)
                        # is not what happened; looked at on a failure only (redteam40)
                        raise replaced_before_rewind(self.root, None,
                                                     self._root_held.unreadable) from exc
                    raise
                sid = safety.session_id
                assert sid is not None
                replaced = False
                try:
                    # the root looked at again before the journal and the head's read, by
                    # path: a store replaced since the scan's look gets no journal (nor
                    # the rewind's later writes), and the workspace is not touched
                    replaced = self._root_held.replaced()
                    if replaced:
                        raise replaced_before_rewind(self.root, safety.id,
                                                     self._root_held.unreadable)
                    prev_head = self.backend.head(sid)
                    op_id = new_id()
                    record = {
                        "id": op_id, "op": op, "ts": now_iso(), "mode": mode,
                        "checkpoint": label_id, "target": target_tree, "safety": safety.id,
                        "paths": sel, "session": sid, "prevHead": prev_head,
                        "toEvent": to_event if mode == "both" else None, "undoOf": undo_of,
                        "plan": plan.to_json(),
                    }
                    with imported_late("turnback.rewind.apply"):
                        from ..rewind.apply import Applier
                    applier = Applier(str(self.workspace), self.objects, False, op_id)
                    # one wait for the journal and the safety checkpoint: its log frame
                    # (which holds its record), or its record in checkpoints.jsonl when it
                    # went to a pack (its objects synced before); no file changes before
                    # it returns, and the files' contents are read meanwhile. Held open
                    # to the end of this block: a refusal before the files (the listing's
                    # below, by path) retracts it where it was written, never applied later
                    keep.enter_context(self.oplog.begin(
                        record, fsync=self.config.fsync_commits,
                        sync_with=frame[0] if frame is not None else [self.index.path],
                        sync_dirs=frame[1] if frame is not None else [],
                        meanwhile=functools.partial(applier.preload, plan),
                        folder=folders.root))
                except BaseException:
                    # kept, as a checkpoint is: synced, then listed; not where its frame's
                    # path leads elsewhere (left in the frame, put back at the store's
                    # next open if the frame reached the disk)
                    if frame is not None and not replaced:
                        fsync_all(*frame)
                        self.index.add(safety, fsync=False, folder=folders.root)
                    self._cache_unsaved = True
                    raise
                dropped_rewind.clear(self.root)  # the user asked again (or anew)
                if frame is not None:
                    # listed only now: a power cut never keeps this line and loses the
                    # frame (two files synced together may land one without the other);
                    # a cut that takes the line is made whole from the frame at the next
                    # open, before the journal is recovered
                    self.index.add(safety, fsync=False, folder=folders.root)
                if finish_later:
                    self._cache_unsaved = True  # saved by finish_rewind, after the answer
                elif self._root_held.replaced():
                    # the safety checkpoint went into the store looked at; its stat cache,
                    # saved by path, would go into what is at the path now (as a
                    # checkpoint's, ``_checkpoint_held``)
                    self._statcache.discard()
                else:
                    # after the wait: the stat cache names objects of the frame
                    self.scanner.save_cache()
            try:
                applier.apply(plan)
            except BaseException as exc:
                # its second names held what the plan expected (looked at): freed, so that
                # the roll-back's own take those names (``_roll_back``); on any way out (a
                # MemoryError, a KeyboardInterrupt: no roll-back, the journal's recovery
                # finishes the rewind at the next open), and the held descriptors closed
                applier.release_failed()
                if isinstance(exc, (TurnbackError, OSError)):
                    self._roll_back(record, plan.reverse(applier.done), exc)
                raise
            finally:
                # the next incremental checkpoint looks again at what the rewind changed
                self._own_dirty.update(plan.paths())
            if finish_later:
                self._unfinished = (record, applier)
                head: str | None = f"rw-{op_id}"  # the id _finish gives the event
            else:
                applier.release()  # before the journal ends: a crash leaves them to recovery
                if self.config.fsync_commits:
                    syncfs(self.workspace)  # the files are down before the rewind is recorded
                head = self._finish_or_retry(record)
            return RewindResult(sorted(plan.write), sorted(plan.create), plan.remove, safety.id,
                                False, mode, label_id, head)

    def _commit_safety(
        self, tree: str, safety_of: tuple[str, str], session_id: str | None, files: int,
        nbytes: int, skipped: list[JSON], folders: RecordFolders,
    ) -> tuple[Checkpoint, tuple[list[Path], list[Path]] | None]:
        """A rewind's safety checkpoint, not yet durable: its held objects and record
        written as one log frame, unsynced, and its session event; with the files and
        folders whose sync makes the frame durable, to be synced with the journal and only
        then listed in ``checkpoints.jsonl`` (the caller). None for those when there was
        no frame (nothing new held, or a pack: its objects were synced here): the record
        is then appended now, unsynced, and synced with the journal. Record and event in
        ``folders`` (the caller's, open: it lists the record there after the journal);
        ``safety_of``: (operation, the id it goes to)."""
        cp = self._new_checkpoint(tree, safety_label(*safety_of), session_id, True, files,
                                  nbytes, skipped)
        cp.safety_of = safety_of  # what it protects, stored (the label kept for old readers)
        frame = self.objects.commit_unsynced(dumps(cp.to_json()),
                                             fsync=self.config.fsync_commits)
        if frame is None:
            self.index.add(cp, fsync=False, folder=folders.root)
        self._checkpoint_event(cp, HEAD, folders.sessions)
        return cp, frame

    def finish_rewind(self, wait: float = 30.0, *, closing: bool = False) -> None:
        """Record the rewind that ``rewind(..., finish_later=True)`` left: sync the files it
        wrote, then its event, its op-log entry and the end of its journal.

        The journal, written and synced before any file was touched, is what makes the
        rewind durable: if the process dies first, the next open finishes it (``recover``).
        So a server may answer as soon as the files are in place and do this right after,
        still holding the folder's write lock; every write method of this object calls it
        first, so nothing is recorded out of order. A stat cache left unsaved
        (``save_scan_cache``) is saved first. ``wait``: seconds the rewind lock is waited
        for (a close's are fewer, ``closing.CLOSE_WAIT``). A recovery the open left
        waiting (``_recover_late``) is tried first, but not by a close (``closing``).
        """
        if self._recovery_waits is not None and not closing:
            self._recover_late()
        self.save_scan_cache()
        if self._refused_record is not None:
            self._record_refused(wait)
        if self._unfinished is None:
            return
        with file_lock(self.root / "locks" / "rewind", wait), self._mutex:
            unfinished, self._unfinished = self._unfinished, None
            if unfinished is None:
                return
            record, applier = unfinished
            pending = self.oplog.pending()
            if pending is None or pending.get("id") != record["id"]:
                # another process opened the store and finished it (recover): released
                # still (a name unlinked only if it is yet the very file linked), so that
                # the descriptors held are closed: each such rewind left up to 64 open
                applier.release()
                return
            applier.release()  # before the sync, which then commits the frees as well
            if self.config.fsync_commits:
                syncfs(self.workspace)
            self._finish_or_retry(record)

    def _recover_late(self) -> None:
        """The open's recovery, left waiting for the op log (a FIFO or a socket at its name:
        ``recover``), tried again: done once the log is readable; else the write is refused
        with the open's words (``StoreDamaged``), nothing written."""
        waits, self._recovery_waits = self._recovery_waits, None  # its own event is a write
        try:
            self.recover()
        except BaseException:
            # still waiting: cleared, the writes after a try that failed otherwise (a
            # lock not taken) went ahead with the journal pending (redteam48)
            if self._recovery_waits is None:
                self._recovery_waits = waits
            raise
        if self._recovery_waits is not None:
            raise StoreDamaged(self._recovery_waits)

    def leave_unfinished(self) -> None:
        """A rewind left to finish that a close could not finish (its lock held longer than
        ``CLOSE_WAIT``): its files are in place and its journal pending, so the next open's
        ``recover`` records it (the files hold what it writes: nothing applied again), as
        after a crash. Its kept second names are freed and its descriptors closed now. A
        record refused earlier (``_refused_record``) is left the same way: its journal is
        pending, marked applied or as it was (redteam47)."""
        self._refused_record = None
        unfinished, self._unfinished = self._unfinished, None
        if unfinished is not None:
            unfinished[1].release()

    def _finish_or_retry(self, record: JSON) -> str | None:
        """``_finish``; if refused, retried before the next write (``_record_refused``).
        Both in one ``dup`` of the held root (``_finish``'s)."""
        with _held_root(self._root_held) as root:
            try:
                return self._finish(record, root)
            except BaseException as exc:
                self._refused_record = record
                try:  # the files are in place: an open after this process must not apply again
                    self.oplog.mark_applied(record, fsync=self.config.fsync_commits,
                                            folder=root)
                except (TurnbackError, OSError):
                    pass  # the journal as it was: the next open applies it (any crash's case)
                replaced = self._replaced() if isinstance(exc, OSError) else None
                if replaced is not None:
                    # by path, the journal's end in a root replaced is the folder's bare
                    # OSError ("[Errno 40] was replaced"), answered -32603 (redteam47)
                    raise replaced from None
                raise

    def _record_refused(self, wait: float = 30.0) -> None:
        """Record this open's rewind whose files are in place but whose record was refused,
        as the next open's ``recover`` would, without applying its plan again (a file set
        back since is left as it is). Refused again: kept for the next write, which goes on
        (rewinds are refused meanwhile: the journal stays, ``journal_problem`` says why)."""
        with file_lock(self.root / "locks" / "rewind", wait), self._mutex:
            record, self._refused_record = self._refused_record, None
            if record is None:
                return
            pending = self.oplog.pending()
            if pending is None or pending.get("id") != record["id"]:
                return  # another process opened the store and recorded it (recover)
            try:
                self._record_applied(record)
            except (TurnbackError, OSError) as exc:
                self._refused_record = record
                self.journal_problem = (
                    f"{self.oplog.journal} (a rewind of this session): its files are in "
                    f"place but it could not be recorded: {getattr(exc, 'message', exc)}. "
                    "It is tried again at the next write; undo reverts it once recorded")

    def _logged_or_waiting(self, op_id: object) -> bool | None:
        """Whether the op log records ``op_id``; None when that log is no regular file:
        whether it was recorded is unknown, so nothing is applied or written; reads go on,
        writes wait for it (``finish_rewind``)."""
        try:
            return self._logged(op_id)
        except NotRegular as exc:
            self._recovery_waits = self.journal_problem = (
                f"{exc.message}. A rewind interrupted here ({self.oplog.journal}) waits "
                "for it: whether it was recorded is in that log, so nothing was applied "
                "and every write is refused until it is moved away; reads work. The "
                "next write (or open) after that finishes the rewind")
            return None

    def _drop_journal(self, record: JSON) -> None:
        """End the journal of a rewind that is not to be made (no file touched, or its
        safety record lost), kept first in ``cache/rewind-dropped`` so that the user is told
        it did not happen, not left to find out (trust38)."""
        dropped_rewind.note(self.root, record, fsync=self.config.fsync_commits)
        self.rewind_dropped = True
        self.oplog.end()

    def _record_applied(self, record: JSON) -> None:
        """Record a rewind whose files are in place, whatever part of its record a failed
        try (or a crash) already wrote: op log, then its event, then the journal's end."""
        with _held_root(self._root_held) as root:
            logged = self._logged_or_waiting(record["id"])
            if logged is None:
                return None
            if logged:
                # already recorded; only the journal was left: ended in the held root, as
                # ``_finish`` ends it (by path, a copy put at the store's path had its
                # journal emptied and the store opened kept its own; redteam47)
                self.oplog.end(root)
                return
            log = self.backend.load(record["session"])
            event_id = f"rw-{record['id']}"
            if any(e.id == event_id for e in log.events):
                op = {k: v for k, v in record.items() if k != "plan"}
                op["newHead"] = event_id  # as ``_finish`` writes it
                self.oplog.add(op, fsync=True, folder=root)
                self.oplog.end(root)
            else:
                self._finish(record, root)

    def _logged(self, op_id: object) -> bool:
        """Whether the op log holds the operation ``op_id`` anywhere, not only last: a
        journal put back after its rewind was recorded and others followed (a backup, a
        sync tool, a hand) was recorded again after them, and 'undo' then reverted it, not
        the user's last. Read whole only while a journal is pending (rare, and one line a
        rewind). A run of junk past the last line's bound (``NoLastObject``) is read
        through by that whole read: refused, it failed ``Store.open`` (redteam42)."""
        try:
            last = self.oplog.last()
        except NoLastObject:
            last = None
        if last is not None and last.get("id") == op_id:
            return True
        return self.oplog.holds(op_id)

    def _plan(self, current: str, target: str, sel: list[str] | None, partial: bool,
              absent: list[str], unknown: list[str], label: str) -> Plan:
        """What a rewind from tree ``current`` to ``target`` writes, creates and removes."""
        if partial:
            # a partial checkpoint knows few files: look each one up
            want = self._flatten_selected(target, sel)
            now = {p: e for p in [*want, *absent]
                   if (e := self.trees.lookup(current, p)) is not None and e.mode != DIR}
            with imported_late("turnback.rewind.plan"):
                from ..rewind.plan import make_plan
            plan = make_plan(self.trees, now, want, sel, absent, partial)
        else:
            with imported_late("turnback.rewind.plan"):
                from ..rewind.plan import diff_plan
            plan = diff_plan(self.trees, current, target, sel)
        if unknown:
            # absent from the target only because it could not read them: not removed
            plan.remove = [p for p in plan.remove if not _selected_by(p, unknown)]
        self._refuse_reserved(plan.paths(), "the checkpoint's path")
        self._confirm_names()
        if self.names.folds:
            self._refuse_clashes(current, plan, label)
        if self.windows:
            self._refuse_unportable(plan, label)
        return plan

    def _confirm_names(self) -> None:
        """Probe the file system before a rewind writes: the rules recorded in
        ``config.json`` are a store file anyone who can write the workspace can plant, and
        one claiming exact names on a folding file system would let the rewind write
        ``A.txt`` over ``a.txt``. The probe costs one small file made and removed (~6
        system calls, ~0.1 ms of an at-once rewind's CPU), so this process's own answer is
        kept and used again while the workspace and the store are the same folders on the
        same file systems (``probe_site``, two ``stat`` calls); ``config.json`` is never
        read for it, so planting one changes nothing."""
        site = self._probe_site()
        if self._names_probed is not None and self._names_probed[0] == site:
            self.names = self._names_probed[1]
            return
        fresh = probe_store(self.workspace, self.root)
        if fresh is not None:
            self.names = fresh
            # taken again: the probe's own file, made and removed in the workspace's
            # root when the store is elsewhere, moved its ctime
            self._names_probed = (self._probe_site(), fresh)

    def _probe_site(self) -> Site:
        """``probe_site``; the workspace folder gone (moved or removed while a server ran,
        the store kept elsewhere) refused by name: its bare FileNotFoundError was a
        traceback for the CLI and an internal error for the server."""
        try:
            return probe_site(self.workspace, self.root)
        except FileNotFoundError as exc:
            what = "workspace" if exc.filename == str(self.workspace) else "store"
            raise folder_gone(what, exc.filename, "nothing was rewound") from None

    def _refuse_unportable(self, plan: Plan, label: str) -> None:
        """On Windows: refuse, naming the file, a plan writing a name Windows cannot hold
        (``winnames.py``) or a symlink where this user may not make one (Windows asks for
        Developer Mode or an administrator), before anything changes."""
        with imported_late("turnback.fs.winnames"):
            from ..fs.winnames import problem
        targets = {**plan.write, **plan.create}
        for path in sorted(targets):
            why = problem(path, str(self.workspace))
            if why is None and targets[path].mode == LINK and not self._can_symlink():
                why = ("it is a symbolic link, and Windows lets only Developer Mode or an "
                       "administrator make one")
            if why is not None:
                raise Unsafe(
                    f"cannot restore '{display(path)}' on this system: {why}. Nothing was "
                    f"changed; get its content with 'turnback show {label} {quote(path)}', "
                    f"or rewind the other paths")

    def _can_symlink(self) -> bool:
        if self._symlinks is None:
            probe = self.root / "cache" / f"symlink-probe-{os.getpid()}"
            try:  # in cache/ opened without following a link (fs/instore.py)
                with instore.folder_of(probe, create=True) or open_root(
                        str(probe.parent)) as folder:
                    # a killed process's of the same pid (or a planted one) made the
                    # symlink fail "exists", and every rewind of a link was refused
                    with contextlib.suppress(FileNotFoundError):
                        folder.unlink(probe.name)
                    folder.symlink("target", probe.name)
                    folder.unlink(probe.name)
                self._symlinks = True
            except OSError:
                self._symlinks = False
        return self._symlinks

    def _refuse_clashes(self, current: str, plan: Plan, label: str) -> None:
        """On a case-insensitive or normalizing file system, refuse a plan whose result holds
        two names that are one file there (``a.txt`` and ``A.txt``): the second write would
        land on the first file. Case-only renames pass (the old name is removed first)."""
        result = set(self.trees.flatten(current))
        result.difference_update(plan.remove)
        result.update(plan.write, plan.create)
        clashes = collisions(self.names, result, [*plan.write, *plan.create])
        if not clashes:
            return
        first = clashes[0]
        listed = "; ".join(" and ".join(f"'{display(p)}'" for p in g) for g in clashes[:5])
        more = f" (and {len(clashes) - 5} more)" if len(clashes) > 5 else ""
        raise Conflict(
            f"checkpoint {label} holds {listed}{more}: names that are one file on this "
            f"workspace's file system ({self.names.describe()}), so the rewind could not make "
            f"the workspace that checkpoint; nothing was changed. Get each one by itself: "
            f"'turnback show {label} {quote(first[0])}' prints its content, or rewind one "
            f"path: 'turnback rewind {label} {quote(first[0])}'")

    def _roll_back(self, record: JSON, back: Plan, exc: BaseException) -> None:
        """Put back the workspace as it was before a rewind that failed part-way (a symlink
        swapped in, a name the file system refuses, a full disk, a file saved meanwhile),
        and end its journal: replaying the journal would only fail again at every open.

        ``back`` reverses just the paths the rewind changed; a path changed again since
        the rewind wrote it is kept, never overwritten (and named in the error)."""
        with imported_late("turnback.rewind.apply"):
            from ..rewind.apply import Applier
        # second names derived from the op id, as the rewind's: a kill in the middle leaves
        # a write that landed before a rename where the next open looks (``restore_late``)
        applier = Applier(str(self.workspace), self.objects, self.config.fsync_commits,
                          str(record["id"]))
        try:
            try:
                kept = applier.apply(back, strict=False)
            finally:
                applier.release()  # failed part-way too: its held descriptors closed
            applier.remove_temps(_plan_from_json(record["plan"], "the rewind's plan"))
        except (TurnbackError, OSError) as again:
            raise StoreDamaged(
                f"a rewind failed part-way ({exc}) and putting the workspace back failed too "
                f"({again}); it is retried when the store is next opened, and safety "
                f"checkpoint {record.get('safety')} holds the files as they were"
            ) from again
        with _held_root(self._root_held) as root:
            # where it was written, as a finished rewind's (``_finish``): by path, a copy
            # put at the store's path had its journal ended, and the store the rewind
            # wrote it in applied the rewind told as failed at its next open (redteam48)
            self.oplog.end(root)
        if kept:
            raise Conflict(
                f"a rewind failed part-way ({exc}); the workspace was put back, except "
                f"{', '.join(repr(p) for p in kept[:5])}, changed again meanwhile and kept as "
                f"it is now; safety checkpoint {record.get('safety')} holds what was there "
                "before the rewind") from exc

    def _flatten_selected(self, tree: str, sel: list[str] | None) -> dict[str, Entry]:
        """The files of ``tree`` under the selected paths, reading only the trees on the way
        (so the intact parts of a damaged checkpoint can still be restored)."""
        if sel is None:
            return self.trees.flatten(tree)
        out: dict[str, Entry] = {}
        for p in sel:
            entry = self.trees.lookup(tree, p)
            if entry is None:
                continue
            if entry.mode == DIR:
                out.update(self.trees.walk(entry.hash, p + "/"))
            else:
                out[p] = entry
        return out

    def _finish(self, record: JSON, root: Folder | None) -> str | None:
        """Record a rewind whose files are in place: event, op log, end of journal, in
        ``root`` (the held root's ``dup``; None: by path, Windows) and the session's folder
        opened there. By path they went into what the store's path led to: a store replaced
        after the journal (a copy at its path) got the rewind's event and op-log line, and
        the store looked at kept its journal pending, applied again at its next open
        (trust35). Folders by path: refused there (``Conflict``), the journal left to the
        store's next open."""
        sid = record["session"]
        plan = _plan_from_json(record["plan"], "the rewind's plan")
        data = {"checkpoint": record["checkpoint"], "mode": record["mode"],
                "safetyCheckpoint": record["safety"], "paths": record["paths"],
                "written": len(plan.write) + len(plan.create), "removed": len(plan.remove),
                "previousHead": record["prevHead"]}
        if record.get("kept"):
            data["kept"] = record["kept"]  # changed meanwhile: left as they were (recover)
        if record.get("undoOf"):
            data["undo"] = record["undoOf"]
        parent: str | _Head | None = record["toEvent"] if record.get("toEvent") else HEAD
        sessions = self.backend.sessions_in(root, sid) if root is not None else None
        try:
            ev = self.append(sid, Kind.REWIND, data, parent=parent,
                             event_id=f"rw-{record['id']}", fsync=self.config.fsync_commits,
                             sessions=sessions)
        finally:
            if sessions is not None:
                sessions.close()
        op = {k: v for k, v in record.items() if k != "plan"}
        op["newHead"] = ev.id
        self.oplog.add(op, fsync=self.config.fsync_commits, folder=root)
        self.oplog.end(root)
        return ev.id

    def recover(self) -> str | None:
        """Finish a rewind that a crash interrupted (idempotent); return its op id.

        The journal is input like any other file (a cloned repository may ship a
        ``.turnback/``): it is applied only if every field checks out, and then only to
        paths that still hold what its safety checkpoint captured or already what it
        writes. Anything else is kept. A journal that does not check out is not applied
        at all: rewinds are refused (``journal_problem``) and ``fsck`` reports it.
        """
        self.journal_problem = None
        try:
            record = self.oplog.pending()
        except StoreDamaged as exc:
            self.journal_problem = f"{exc.message}; it was not applied"
            return None
        if record is None and not self.oplog.holds_journal():
            return None
        # the CLI's early check of folders saw the workspace before this rewind's end
        prescan.drop_early()
        with file_lock(self.root / "locks" / "rewind"):
            try:
                record = self.oplog.pending()
                if record is None:
                    self.oplog.end()  # torn, or emptied meanwhile: nothing was begun
                    return None
                if self._never_begun(record):
                    # a power cut lost its safety record: told, as one emptied below
                    self._drop_journal(record)
                    return None
                plan = self._journal_plan(record)
                record.pop(signing.FIELD, None)  # checked: the records that follow need it not
                # signed: a rewind whose files were all in place, its record refused
                applied = record.pop(APPLIED, None) is True
            except TurnbackError as exc:  # damaged, missing, or unsafe (a crafted tree)
                self.journal_problem = (
                    f"{self.oplog.journal} (an interrupted rewind) was not applied: "
                    f"{exc.message}. Nothing was changed. If no rewind was interrupted here, "
                    "delete that file; 'turnback fsck' reports it until then")
                return None
            logged = self._logged_or_waiting(record["id"])
            if logged is None:
                return None
            if logged:
                # recorded already: a crash before the journal's end, or a journal kept and
                # put back since; its plan applied again would undo what came after it
                self.oplog.end()
                return str(record["id"])
            with imported_late("turnback.rewind.apply"):
                from ..rewind.apply import Applier, untouched
            if not applied and untouched(str(self.workspace), plan, str(record["id"]),
                                         since_before=True):
                # no file touched: killed before its first file, which is also where a
                # refusal after the journal is decided and its retraction not yet made
                # (trust37): applied now, a rewind the user was told, or was about to be
                # told, was refused would go ahead. Emptied, it is as if never begun.
                # Every path as its safety checkpoint saw it (since_before): a rewind
                # whose files were edited after it was answered is finished (redteam51).
                self._drop_journal(record)
                return None
            applier = Applier(str(self.workspace), self.objects, True, str(record["id"]))
            try:
                # first, a write that landed before a replacement the crash left unchecked:
                # a recovery rolled back removes the names that hold it
                late = applier.restore_late(plan)
                # applied already: again would undo what the user did since (set a file
                # back, deleted one it made), for a record retried as long as a server lived
                kept = [] if applied else applier.apply(plan, strict=False)
                kept += [p for p in late if p not in kept]
            except BaseException as exc:
                applier.release_failed()  # as in _rewind_files
                if not isinstance(exc, (TurnbackError, OSError)):
                    raise  # the journal stays: the next open recovers it again
                try:
                    self._roll_back(record, plan.reverse(), exc)
                except Conflict:
                    pass  # rolled back but for paths changed since, which are kept
                except StoreDamaged as again:
                    self.journal_problem = again.message
                return None
            applier.release()
            applier.remove_temps(plan)
            if kept:
                record["kept"] = kept  # changed since the rewind began: left as they are
            try:
                self._record_applied(record)
            except TurnbackError as exc:  # its session damaged: the store still opens
                try:  # its files are in place: the open that records it applies nothing
                    self.oplog.mark_applied(record, fsync=True)
                except (TurnbackError, OSError):
                    pass
                self.journal_problem = (
                    f"{self.oplog.journal} (an interrupted rewind): its files are in place but "
                    f"it could not be recorded: {exc.message}. Run 'turnback fsck'; once the "
                    "session is repaired the next open records it")
                return None
            return str(record["id"])

    def _never_begun(self, record: JSON) -> bool:
        """Whether ``record`` is a journal of this user's whose rewind never touched the
        workspace, though the safety checkpoint it names is not on disk.

        The journal is written in place and synced together with that checkpoint's record
        (``OpLog.begin``); a power cut before both syncs return can keep the journal and
        lose the record, and no file was touched then. So a signed journal (never a
        planted one) whose safety checkpoint is missing, and none of whose paths holds
        what the rewind writes nor lacks what it removes, is a rewind that never began:
        it is emptied, as a crash before the journal would have left the store. Anything
        else is left to ``_journal_plan``, which refuses it and names the missing
        checkpoint.
        """
        safety_id = record.get("safety")
        if not isinstance(safety_id, str) or self.index.get(safety_id) is not None:
            return False
        if signing.check(record) is not None:
            return False
        try:
            plan = _plan_from_json(record.get("plan"), "its plan")
            self._refuse_reserved(plan.paths(), "path")
        except TurnbackError:
            return False
        with imported_late("turnback.rewind.apply"):
            from ..rewind.apply import untouched
        return untouched(str(self.workspace), plan, str(record.get("id")))

    def _journal_plan(self, record: JSON) -> Plan:
        """The plan of a journal record, every field checked (``StoreDamaged`` names the
        first fault), with what each path held before read from its safety checkpoint."""
        def bad(what: str) -> StoreDamaged:
            return StoreDamaged(what)

        for key in ("id", "session"):
            try:
                check_id(record.get(key), key)
            except InvalidInput as exc:
                raise bad(exc.message) from None
        for key in ("prevHead", "toEvent", "undoOf"):
            value = record.get(key)
            if value is not None:
                try:
                    check_id(value, key)
                except InvalidInput as exc:
                    raise bad(exc.message) from None
        if record.get("op") not in ("rewind", "undo"):
            raise bad(f"op {str(record.get('op'))[:40]!r} is not rewind or undo")
        if record.get("mode") not in ("files", "both"):
            raise bad(f"mode {str(record.get('mode'))[:40]!r} is not files or both")
        if not isinstance(record.get("checkpoint"), str):
            raise bad("checkpoint is not a string")
        sel = record.get("paths")
        if sel is not None:
            if not isinstance(sel, list):
                raise bad("paths is not a list")
            for p in sel:
                if not isinstance(p, str) or _normal(p) != p:
                    raise bad(f"path {str(p)[:80]!r} is not a plain relative path")
        if not self.backend.exists(str(record["session"])):
            raise bad(f"its session {str(record['session'])[:40]!r} is not in this store")
        safety_id = record.get("safety")
        safety = self.index.get(safety_id) if isinstance(safety_id, str) else None
        if safety is None:
            raise bad(f"its safety checkpoint {str(safety_id)[:40]!r} is not in this store")
        plan = _plan_from_json(record.get("plan"), "its plan")
        try:
            self._refuse_reserved(plan.paths(), "path")
        except Unsafe as exc:
            raise bad(exc.message) from None
        for p in plan.paths():
            entry = self.trees.lookup(safety.tree, p)
            plan.before[p] = None if entry is None or entry.mode == DIR else entry
        untrusted = signing.check(record)
        if untrusted is not None:
            raise bad(untrusted)
        return plan

    def _refuse_if_journal_bad(self) -> None:
        if self.journal_problem is not None:
            if not self.oplog.holds_journal():
                self.journal_problem = None  # resolved: the file was removed or emptied
                return
            raise StoreDamaged(f"rewinds are refused: {self.journal_problem}")

    def undo(self, dry_run: bool = False, dirty: Iterable[str] | None = None,
             finish_later: bool = False) -> RewindResult:
        """Revert the last rewind or undo (so undo twice is redo); ``finish_later`` as in
        ``rewind``."""
        from ..results import RewindResult

        self.finish_rewind()
        last = self.oplog.last()
        if last is None:
            raise Conflict("nothing to undo: no rewind has been made in this store")
        self._check_op(last)
        if last.get("mode") == "conversation":
            sid, prev = last.get("session"), last.get("prevHead")
            assert isinstance(sid, str)
            if dry_run:
                return RewindResult([], [], [], None, True, "conversation", None, prev)
            cur = self.backend.head(sid)
            if isinstance(prev, str):
                self.backend.set_head(sid, prev)
            self.oplog.add({"id": new_id(), "op": "undo", "ts": now_iso(), "mode": "conversation",
                            "session": sid, "prevHead": cur, "newHead": prev,
                            "undoOf": last.get("id")}, fsync=self.config.fsync_commits)
            return RewindResult([], [], [], None, False, "conversation", None, prev)
        safety = self.index.get(str(last.get("safety")))
        if safety is None:
            raise NotFound(
                f"cannot undo: the safety checkpoint {last.get('safety')!r} of the last rewind is "
                "gone (dropped by retention)")
        # Undo of a `both` rewind is itself `both`: its event follows the head the rewind
        # found, so the conversation goes back too, and undoing that comes forward again.
        prev = last.get("prevHead")
        both = last.get("mode") == "both" and isinstance(prev, str)
        return self._rewind_files(
            safety.id, safety.tree, last.get("paths"), "both" if both else "files", dry_run,
            False, [], unknown=_skipped_paths(safety.skipped), session_id=last.get("session"),
            to_event=prev if both else None, op="undo", undo_of=last.get("id"), dirty=dirty,
            finish_later=finish_later)

    def _check_op(self, op: JSON) -> None:
        check_op(op, self.oplog.path)


def check_op(op: JSON, path: Path) -> None:
    """An operation-log line is input: its ids and paths are checked before use
    (``StoreDamaged`` names the first fault). ``path``: the log, for the words; fsck
    checks the last line so too."""
    where = f"the last line of {path}"
    try:
        check_id(op.get("session"), "its session")
        for key in ("id", "prevHead", "newHead"):
            if op.get(key) is not None:
                check_id(op.get(key), key)
    except InvalidInput as exc:
        raise StoreDamaged(f"{where}: {exc.message}; run 'turnback fsck'") from None
    if op.get("mode") not in MODES:
        raise StoreDamaged(f"{where}: mode {str(op.get('mode'))[:40]!r} is unknown")
    sel = op.get("paths")
    if sel is not None and (not isinstance(sel, list) or not all(
            isinstance(p, str) and _normal(p) == p for p in sel)):
        raise StoreDamaged(f"{where}: its paths are not plain relative paths; "
                           "run 'turnback fsck'")


@contextlib.contextmanager
def _held_root(held: HeldFolder) -> Iterator[Folder | None]:
    """One ``dup`` of the held root (None where none is held: by path), closed after."""
    root = held.folder()
    try:
        yield root
    finally:
        if root is not None:
            root.close()
