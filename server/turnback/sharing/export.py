"""Store -> git objects: the commit a push sends.

Every checkpoint of this workspace becomes a real git tree (so ``git`` reads it and the
remote dedupes it with the code), every session a JSONL blob; both pass through
``redact.py`` first. Turnback trees are Merkle trees like git's: an unchanged folder keeps
its hash, and the map kept in ``repo.py`` turns it into the git tree it became last time
without reading it, so the next push converts only the folders on changed paths.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..events import JSON
from ..fs.locks import rw_lock
from ..models import Checkpoint
from ..objects.objectstore import BLOB
from ..objects.trees import DIR, LINK, is_executable
from ..store.facade import Store
from .gitobjects import GIT_DIR, GIT_EXEC, GIT_FILE, GIT_LINK, GitEntry, ObjectWriter
from .gitrun import run
from .layout import CHECKPOINTS, MANIFEST, SESSIONS, Manifest, who
from .redact import Finding, redact_bytes, redact_text
from .repo import LOCAL_REF, ShareRepo


@dataclass(slots=True)
class Redaction:
    where: str  # "checkpoint <id>: <path>" or "session <id>"
    kind: str
    line: int

    def to_json(self) -> JSON:
        return {"where": self.where, "kind": self.kind, "line": self.line}


@dataclass(slots=True)
class Built:
    machine: str
    commit: str | None  # None: nothing was ever recorded
    parent: str | None
    sessions: int = 0
    checkpoints: int = 0
    new_blobs: int = 0
    new_blob_bytes: int = 0
    redactions: list[Redaction] = field(default_factory=list)


def _redact_json(value: Any, found: list[Finding]) -> Any:
    """Every string in an event's JSON, redacted (keys are the schema's: left alone)."""
    if isinstance(value, str):
        text, f = redact_text(value)
        found.extend(f)
        return text
    if isinstance(value, dict):
        return {k: _redact_json(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(v, found) for v in value]
    return value


class _Exporter:
    def __init__(self, store: Store, repo: ShareRepo) -> None:
        self.store = store
        self.writer = ObjectWriter(repo.git_dir)
        self.memo = repo.load_map()
        self.new_memo: dict[str, str] = {}
        self.redactions: list[Redaction] = []

    def _remember(self, key: str, sha: str) -> str:
        self.memo[key] = sha
        self.new_memo[key] = sha
        return sha

    def tree(self, tb_hash: str, where: str, prefix: str) -> str:
        """The git tree of Turnback tree ``tb_hash`` (converted once, then remembered)."""
        known = self.memo.get("t" + tb_hash)
        if known is not None:
            return known
        entries = []
        for name, e in self.store.trees.get(tb_hash).items():
            raw = os.fsencode(name)
            path = f"{prefix}{name}"
            if e.mode == DIR:
                entries.append(GitEntry(GIT_DIR, raw, self.tree(e.hash, where, path + "/")))
                continue
            mode = GIT_LINK if e.mode == LINK else GIT_EXEC if is_executable(e.mode) \
                else GIT_FILE
            entries.append(GitEntry(mode, raw, self.blob(e.hash, e.mode == LINK, where, path)))
        return self._remember("t" + tb_hash, self.writer.tree(entries))

    def blob(self, tb_hash: str, link: bool, where: str, path: str) -> str:
        key = ("l" if link else "b") + tb_hash
        known = self.memo.get(key)
        if known is not None:
            return known
        data = self.store.objects.get(BLOB, tb_hash)
        if not link:
            data, found = redact_bytes(data)
            self.redactions += [Redaction(f"checkpoint {where}: {path}", f.kind, f.line)
                                for f in found]
        return self._remember(key, self.writer.blob(data))

    def session(self, sid: str) -> str:
        summary = self.store.session_summary(sid)
        digest = hashlib.sha1(orjson.dumps(summary.header.to_json(), option=orjson.OPT_SORT_KEYS),
                              usedforsecurity=False).hexdigest()[:16]
        key = f"s{sid}:{summary.events}:{summary.head}:{digest}"
        known = self.memo.get(key)
        if known is not None:
            return known
        log = self.store.session(sid)
        found: list[Finding] = []
        lines = [orjson.dumps(_redact_json({"type": "session", "format": 1,
                                            **log.header.to_json(), "head": log.head}, found))]
        for ev in log.events:
            lines.append(orjson.dumps(_redact_json(ev.to_json(), found)))
        self.redactions += [Redaction(f"session {sid}", f.kind, f.line) for f in found]
        return self._remember(key, self.writer.blob(b"\n".join(lines) + b"\n"))


def _write_objects(store: Store, ex: _Exporter, machine: str
                   ) -> tuple[str, int, int, str, str]:
    """Every object of the commit's tree; (root tree, sessions, checkpoints, user, host)."""
    try:
        cps: list[Checkpoint] = [c for c in store.checkpoints() if c.origin is None]
        cp_entries = [GitEntry(GIT_DIR, c.id.encode(), ex.tree(c.tree, c.id, ""))
                      for c in cps]
        summaries, _total = store.sessions()
        own = [s for s in summaries if s.header.source != "pulled"]
        session_entries = [GitEntry(GIT_FILE, f"{s.header.id}.jsonl".encode(),
                                    ex.session(s.header.id)) for s in own]
        user, host = who()
        manifest = Manifest(machine, user, host, {
            s.header.id: {"title": s.header.title, "agent": s.header.agent,
                          "started": s.header.started, "events": s.events} for s in own},
            [{k: v for k, v in c.to_json().items() if k != "tree"} for c in cps])
        root_entries = [GitEntry(GIT_FILE, MANIFEST, ex.writer.blob(manifest.to_bytes())),
                        GitEntry(GIT_DIR, SESSIONS, ex.writer.tree(session_entries)),
                        GitEntry(GIT_DIR, CHECKPOINTS, ex.writer.tree(cp_entries))]
        root = ex.writer.tree(root_entries)
        ex.writer.flush()
    except BaseException:
        ex.writer.abort()
        raise
    return root, len(own), len(cps), user, host


def build(store: Store, repo: ShareRepo) -> Built:
    """Write this store's history into the sharing repository as one commit on the
    machine's chain (no new commit when nothing changed). Nothing leaves the machine."""
    repo.ensure()
    machine = repo.machine()
    parent = repo.ref(LOCAL_REF)
    ex = _Exporter(store, repo)
    # under the gc lock (shared): a gc in another process must not remove what is read here
    with rw_lock(store.root / "locks" / "gc", exclusive=False):
        root, sessions, checkpoints, user, host = _write_objects(store, ex, machine)
    repo.add_map(ex.new_memo)  # only once the objects are written
    built = Built(machine, parent, parent, sessions, checkpoints, ex.writer.blobs,
                  ex.writer.blob_bytes, ex.redactions)
    if parent is not None and _tree_of(repo, parent) == root:
        return built  # nothing new since the last commit
    env = {"GIT_AUTHOR_NAME": user, "GIT_AUTHOR_EMAIL": f"{user}@{host}",
           "GIT_COMMITTER_NAME": user, "GIT_COMMITTER_EMAIL": f"{user}@{host}"}
    args = ["commit-tree", root, "-m",
            f"turnback: {sessions} sessions, {checkpoints} checkpoints from {machine}"]
    if parent is not None:
        args += ["-p", parent]
    built.commit = run(args, git_dir=repo.git_dir, env=env,
                       what="git commit-tree").stdout.decode().strip()
    repo.set_ref(LOCAL_REF, built.commit)
    return built


def _tree_of(repo: ShareRepo, commit: str) -> str:
    return run(["rev-parse", commit + "^{tree}"], git_dir=repo.git_dir).stdout.decode().strip()
