"""Git objects -> store: one machine's history, checked whole before anything is written.

What a remote holds was written by someone else's machine, so it is read as hostile input
(docs/RELIABILITY.md): the manifest, every session line and every tree entry are checked —
ids as the store checks them, names as one path component (no ``..``, no ``/``, no NUL),
no ``.git`` folder in any case, no submodules, sizes bounded before anything is read, depth
and file counts bounded as the store's trees are. Only then are objects, checkpoint
records and sessions written, through the store's API (which checks the trees once more).
Nothing is written into the workspace: a pulled checkpoint is rewound to like any other,
through the safety checkpoint and undo.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import orjson

from ..errors import InvalidInput, StoreDamaged, TurnbackError
from ..events import JSON, Event, SessionHeader, is_id
from ..fs.jsonl import loads
from ..fs.paths import is_protected_name, normalize, refuse_protected_path
from ..models import Checkpoint
from ..objects.objectstore import BLOB, is_hash
from ..objects.trees import DIR, EXEC, FILE, LINK, MAX_DEPTH, MAX_FILES, Entry, Tree, check_name
from ..store.facade import Store
from .gitobjects import (
    GIT_DIR,
    GIT_EXEC,
    GIT_FILE,
    GIT_LINK,
    GitEntry,
    ObjectReader,
    decode_tree,
    object_sizes,
    parse_commit,
)
from .layout import (
    CHECKPOINTS,
    MANIFEST,
    MAX_CHECKPOINTS,
    MAX_COMMIT,
    MAX_MANIFEST,
    MAX_SESSION,
    SESSIONS,
    Manifest,
    parse_checkpoint_message,
    pulled_session_id,
)
from .repo import IMPORTED, ShareRepo

MAX_TREE = 64 * 1024 * 1024  # one git tree object
MAX_LINK = 4096  # a symlink's target
_MODES = {GIT_FILE: FILE, GIT_EXEC: EXEC, GIT_LINK: LINK, GIT_DIR: DIR}


@dataclass(slots=True)
class Pulled:
    machine: str
    user: str = ""
    host: str = ""
    commit: str = ""
    sessions: int = 0  # sessions that gained events
    events: int = 0
    checkpoints: int = 0
    refused: str | None = None  # why nothing of this machine was taken

    def to_json(self) -> JSON:
        return {"machine": self.machine, "user": self.user, "host": self.host,
                "commit": self.commit, "sessions": self.sessions, "events": self.events,
                "checkpoints": self.checkpoints, "refused": self.refused}


@dataclass(slots=True)
class _Plan:
    """What was checked and will be written."""
    manifest: Manifest
    sessions: list[tuple[SessionHeader, str, int]] = field(default_factory=list)  # git blob, size
    session_blobs: list[str] = field(default_factory=list)
    checkpoints: list[tuple[Checkpoint, str]] = field(default_factory=list)  # record, git tree
    trees: dict[str, list[GitEntry]] = field(default_factory=dict)  # new git trees, children 1st
    chain_commits: list[str] = field(default_factory=list)  # layout 2: commits taken
    blobs: dict[str, int] = field(default_factory=dict)  # git blob -> size
    links: set[str] = field(default_factory=set)  # git blobs that are symlinks' targets


class _Checker:
    def __init__(self, store: Store, repo: ShareRepo, machine: str, reader: ObjectReader
                 ) -> None:
        self.store = store
        self.repo = repo
        self.machine = machine
        self.reader = reader
        self.memo = repo.load_map()
        self.cap = store.config.size_cap_bytes
        rel = store.ignore.store_rel
        self.store_rel = rel.lower() if rel is not None else None
        self.store_fold = rel.casefold() if rel is not None else None
        self.files = 0

    def read(self, rev: str, kind: str, bound: int, where: str) -> bytes:
        got, data = self.reader.read(rev, bound, where)
        if got != kind:
            raise InvalidInput(f"{where} is a git {got}, not a {kind}")
        return data

    def plan(self, commit: str) -> _Plan:
        where = f"history of {self.machine}"
        root = {e.name: e for e in decode_tree(
            self.read(commit + "^{tree}", "tree", MAX_TREE, where), where)}
        if MANIFEST not in root:
            raise InvalidInput(f"{where} has no manifest.json")
        manifest = Manifest.parse(self.read(root[MANIFEST].sha, "blob", MAX_MANIFEST, where),
                                  where)
        if manifest.machine != self.machine:
            raise InvalidInput(f"{where}: its manifest names machine {manifest.machine!r}")
        plan = _Plan(manifest)
        if SESSIONS in root:
            self._sessions(plan, root[SESSIONS].sha, where)
        if manifest.layout == 1:
            self._checkpoints_v1(plan, root, manifest, where)
        else:
            self._checkpoints_v2(plan, commit, manifest, where)
        sizes = object_sizes(self.repo.git_dir, list(plan.blobs))
        for sha in plan.blobs:
            got = sizes.get(sha)
            if got is None or got[0] != "blob":
                raise InvalidInput(f"{where}: file object {sha} is missing or not a blob")
            if got[1] > self.cap:
                raise InvalidInput(f"{where}: a file of {got[1]:,} bytes is over this store's "
                                   f"size cap ({self.cap:,}); nothing of it was pulled")
            plan.blobs[sha] = got[1]
        for sha in sorted(plan.links):
            # a target no file system takes (empty, a NUL byte) would make a rewind to the
            # checkpoint fail half way; read now, before anything is written (4 KiB each)
            if plan.blobs[sha] > MAX_LINK:
                raise InvalidInput(f"{where}: a symlink's target of {plan.blobs[sha]:,} bytes")
            target = self.read(sha, "blob", MAX_LINK, f"{where} symlink target {sha}")
            if not target or b"\0" in target:
                raise InvalidInput(f"{where}: a symlink's target is empty or holds a NUL byte "
                                   f"(git object {sha})")
        return plan

    def _checkpoints_v1(self, plan: _Plan, root: dict[bytes, GitEntry], manifest: Manifest,
                        where: str) -> None:
        """Layout 1: every checkpoint a folder ``checkpoints/<id>/`` of the push's tree."""
        cps = {}
        if CHECKPOINTS in root:
            listing = self.read(root[CHECKPOINTS].sha, "tree", MAX_TREE, where + " checkpoints")
            cps = {e.name.decode("utf-8", "replace"): e
                   for e in decode_tree(listing, where + " checkpoints")}
        for rec in manifest.checkpoints:
            cid = str(rec["id"])
            entry = cps.get(cid)
            if entry is None or entry.mode != GIT_DIR:
                raise InvalidInput(f"{where}: checkpoint {cid} has no tree")
            if self.store.index.get(cid) is not None:
                continue  # pulled before (or one of ours: never replaced)
            plan.checkpoints.append((self._record(rec, where), entry.sha))
            self._tree(plan, entry.sha, f"{where} checkpoint {cid}", "", 0)

    def _checkpoints_v2(self, plan: _Plan, commit: str, manifest: Manifest, where: str
                        ) -> None:
        """Layout 2: the checkpoint chain, from its tip (a parent of the push) back to the
        first commit an earlier pull took, each commit's record and tree checked."""
        if manifest.chain is None:
            return
        push = parse_commit(self.read(commit, "commit", MAX_COMMIT, where), where)
        if manifest.chain not in push.parents:
            raise InvalidInput(f"{where}: its manifest names a checkpoint chain that is not "
                               "a parent of the push")
        todo: list[tuple[str, str, JSON]] = []
        sha: str | None = manifest.chain
        while sha is not None and f"k{sha}" not in self.memo:
            if len(todo) >= MAX_CHECKPOINTS:
                raise InvalidInput(f"{where}: more than {MAX_CHECKPOINTS:,} checkpoints")
            at = f"{where} checkpoint commit {sha}"
            c = parse_commit(self.read(sha, "commit", MAX_COMMIT, at), at)
            todo.append((sha, c.tree, parse_checkpoint_message(c.message, at)))
            sha = c.parents[0] if c.parents else None
        planned: set[str] = set()
        for sha, tree, rec in reversed(todo):  # oldest first, as they were made
            plan.chain_commits.append(sha)
            cid = str(rec["id"])
            if cid in planned or self.store.index.get(cid) is not None:
                continue  # pulled before, one of ours, or on the chain twice (a retried push)
            planned.add(cid)
            plan.checkpoints.append((self._record(rec, where), tree))
            self._tree(plan, tree, f"{where} checkpoint {cid}", "", 0)

    def _record(self, rec: JSON, where: str) -> Checkpoint:
        try:
            cp = Checkpoint.from_json({**rec, "tree": "0" * 64})
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"{where}: checkpoint record {str(rec)[:120]} is malformed: {exc}"
                               ) from None
        cp.session_id = (pulled_session_id(cp.session_id, self.machine)
                         if isinstance(cp.session_id, str) and is_id(cp.session_id) else None)
        if cp.event_id is not None and not is_id(cp.event_id):
            raise InvalidInput(f"{where}: checkpoint {cp.id} has a bad event id")
        cp.absent = [normalize(p, "absent path") for p in cp.absent]
        cp.skipped = [s for s in cp.skipped if isinstance(s, dict)]
        cp.origin = self.machine
        return cp

    def _tree(self, plan: _Plan, sha: str, where: str, prefix: str, depth: int) -> None:
        if sha in plan.trees:
            return
        known = _converted_tree(self.memo.get(f"g{sha}"))
        if known is not None and self.store.objects.exists(known[0]):
            return  # converted by an earlier pull (and not collected since)
        self.memo.pop(f"g{sha}", None)
        if depth > MAX_DEPTH:
            raise InvalidInput(f"{where}: folders nest deeper than {MAX_DEPTH}")
        entries = decode_tree(self.read(sha, "tree", MAX_TREE, where), where)
        for e in entries:
            name = os.fsdecode(e.name)
            path = prefix + name
            check_name(name, f"{where} ({prefix or '/'})")
            # .git and the store in every spelling a file system takes for them (GIT~1,
            # '.git.', HFS+ ignorables): the same check every rewind and restore makes. The
            # folders above passed it on the way down, so only this name, a backslash (a
            # separator on Windows) or a path in the store's place can fail it now: the
            # whole path is checked then (and named), not each of its folders again
            if ("\\" in name or is_protected_name(name)
                    or (self.store_fold is not None and path.casefold().startswith(
                        self.store_fold))):
                refuse_protected_path(path, where, self.store_rel)
            if e.mode not in _MODES:
                raise InvalidInput(f"{where}: '{path}' has git mode {e.mode} (submodules and "
                                   "other modes are not pulled)")
            if e.mode == GIT_DIR:
                self._tree(plan, e.sha, where, path + "/", depth + 1)
            else:
                self.files += 1
                if self.files > MAX_FILES:
                    raise InvalidInput(f"{where}: more than {MAX_FILES:,} files")
                plan.blobs.setdefault(e.sha, 0)
                if e.mode == GIT_LINK:
                    plan.links.add(e.sha)
        plan.trees[sha] = entries

    def _sessions(self, plan: _Plan, sha: str, where: str) -> None:
        for e in decode_tree(self.read(sha, "tree", MAX_TREE, where + " sessions"), where):
            name = e.name.decode("utf-8", "replace")
            sid = name[:-6] if name.endswith(".jsonl") else ""
            if e.mode != GIT_FILE or not is_id(sid):
                raise InvalidInput(f"{where}: sessions/{name[:80]} is not <id>.jsonl")
            if f"p{e.sha}" in self.memo:
                continue  # this very content was pulled before
            data = self.read(e.sha, "blob", MAX_SESSION, f"{where} session {sid}")
            # checked now, its events dropped: they are read again, a batch at a time, when
            # written (a 256 MiB session of tiny events is gigabytes as Python objects, and
            # git compresses it to a few MB: holding every session's would let a push
            # exhaust the puller's memory)
            header = None
            for item in _session_items(sid, self.machine, data, f"{where} session {sid}"):
                if isinstance(item, SessionHeader):
                    header = item
            assert header is not None
            plan.sessions.append((header, e.sha, len(data)))
            plan.session_blobs.append(e.sha)


def _converted_tree(value: str | None) -> tuple[str, int, int] | None:
    """A ``g`` line's value of the object map: (Turnback tree, bytes, files), or None when
    it is no such value. The map is a store file (a copied store's may say anything):
    ``<hash>,x,1`` was taken for a tree already converted, then stopped every later pull
    with a ValueError traceback."""
    parts = value.split(",") if value is not None else []
    if len(parts) != 3 or not is_hash(parts[0]) or not all(
            p.isascii() and p.isdigit() for p in parts[1:]):
        return None
    return parts[0], int(parts[1]), int(parts[2])


EVENT_BATCH = 50_000  # events of a pulled session appended at once


def _session_items(sid: str, machine: str, data: bytes, where: str
                   ) -> Iterator[SessionHeader | Event]:
    """A pulled session's header, then its events, each checked as it is read."""
    local = pulled_session_id(sid, machine)
    n = 0
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line, start = data[start:end], end + 1
        n += 1
        try:
            obj = loads(line)  # as the store reads a line: \\udcXX (a name not UTF-8) too
        except orjson.JSONDecodeError:
            raise InvalidInput(f"{where}:{n}: not JSON") from None
        if n == 1:
            if not isinstance(obj, dict) or obj.get("type") != "session":
                raise InvalidInput(f"{where}: the first line is not a session header")
            head = SessionHeader.from_json(obj)
            if head.id != sid:
                raise InvalidInput(f"{where}: its header names session {head.id[:80]!r}")
            origin = {"machine": machine, "session": sid}
            yield SessionHeader(local, head.title, head.agent, head.model, head.started,
                                head.cwd, "pulled", head.ended, {"origin": origin})
            continue
        if not isinstance(obj, dict):
            raise InvalidInput(f"{where}:{n}: not an event")
        ev = Event.from_json(obj)
        if not is_id(ev.id) or (ev.parent is not None and not is_id(ev.parent)) \
                or len(ev.kind) > 64:
            raise InvalidInput(f"{where}:{n}: bad event id, parent or kind")
        ev.session = local
        yield ev
    if n == 0:
        raise InvalidInput(f"{where}: the first line is not a session header")


def pull_machine(store: Store, repo: ShareRepo, machine: str, commit: str) -> Pulled:
    """Take one machine's pulled history into the store, all of it or (refused) none."""
    result = Pulled(machine, commit=commit)
    if repo.refs(IMPORTED).get(machine) == commit:
        return result  # nothing new from it
    reader = ObjectReader(repo.git_dir)
    try:
        checker = _Checker(store, repo, machine, reader)
        try:
            plan = checker.plan(commit)
        except (TurnbackError, UnicodeError) as exc:
            result.refused = exc.message if isinstance(exc, TurnbackError) else str(exc)
            return result
        result.user, result.host = plan.manifest.user, plan.manifest.host
        for header, _blob, _size in plan.sessions:
            header.extra["origin"].update(user=result.user, host=result.host)
        _write(store, repo, plan, reader, checker.memo, result)
    finally:
        reader.close()
    repo.set_ref(IMPORTED + machine, commit)
    return result


def _write(store: Store, repo: ShareRepo, plan: _Plan, reader: ObjectReader,
           memo: dict[str, str], result: Pulled) -> None:
    new_memo: dict[str, str] = {}

    def build() -> list[Checkpoint]:
        blobs: dict[str, str] = {}
        for sha, size in plan.blobs.items():
            # a folder on a changed path names every file in it, most of them taken by an
            # earlier pull: those are not read again (50 turns of 10 files: 29,917 objects
            # read before, 500 after)
            known = memo.get(f"f{sha}")
            if known is not None and is_hash(known) and store.objects.exists(known):
                blobs[sha] = known
                continue
            _kind, data = reader.read(sha, size, f"file object {sha}")
            blobs[sha] = store.objects.put(BLOB, data)
            memo[f"f{sha}"] = new_memo[f"f{sha}"] = blobs[sha]
        for sha, entries in plan.trees.items():  # children before parents
            tree: Tree = {}
            nbytes = nfiles = 0
            for e in entries:
                name = os.fsdecode(e.name)
                if e.mode == GIT_DIR:
                    got = _converted_tree(memo[f"g{e.sha}"])
                    if got is None:  # _tree converted it again unless its line was whole
                        raise StoreDamaged(f"share/objmap: git tree {e.sha} has no Turnback "
                                           "tree; delete that file and pull again")
                    h, b, f = got
                    tree[name] = Entry(DIR, h, b)
                    nbytes, nfiles = nbytes + b, nfiles + f
                else:
                    size = plan.blobs[e.sha]
                    if e.mode == GIT_LINK and size > MAX_LINK:
                        raise InvalidInput(f"a symlink's target of {size:,} bytes")
                    tree[name] = Entry(_MODES[e.mode], blobs[e.sha], size)
                    nbytes, nfiles = nbytes + size, nfiles + 1
            value = f"{store.trees.put(tree)},{nbytes},{nfiles}"
            memo[f"g{sha}"] = new_memo[f"g{sha}"] = value
        out = []
        for cp, git_tree in plan.checkpoints:
            cp.tree = memo[f"g{git_tree}"].split(",")[0]
            out.append(cp)
        return out

    added = store.adopt_checkpoints(build)
    result.checkpoints = len(added)
    for header, blob, size in plan.sessions:
        store.ensure_session(header)
        _kind, data = reader.read(blob, size, f"session {header.id}")
        n = 0
        batch: list[Event] = []
        for item in _session_items(header.extra["origin"]["session"], result.machine, data,
                                   f"session {header.id}"):
            if isinstance(item, Event):
                batch.append(item)
                if len(batch) >= EVENT_BATCH:
                    n += store.append_events(header.id, batch)
                    batch = []
        n += store.append_events(header.id, batch)
        result.events += n
        result.sessions += 1 if n else 0
    new_memo.update({f"p{b}": "1" for b in plan.session_blobs})
    new_memo.update({f"k{c}": "1" for c in plan.chain_commits})
    repo.add_map(new_memo)
