"""Store -> git objects: the commits a push sends (layout 2, ``layout.py``).

Every checkpoint of this workspace becomes a commit of a real git tree (so ``git`` reads it
and the remote dedupes it with the code) on the machine's checkpoint chain, every session a
JSONL blob; both pass through ``redact.py`` first. Turnback trees are Merkle trees like
git's: an unchanged folder keeps its hash, and the map kept in ``repo.py`` turns it into the
git tree it became last time without reading it, so the next push converts only the folders
on changed paths, and only the checkpoints made since (``c<id>`` in the map) become commits.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..events import JSON, parse_iso
from ..fs.jsonl import MAX_NESTING, NESTED_TOO_DEEP, dumps
from ..fs.locks import rw_lock
from ..models import Checkpoint
from ..objects.objectstore import BLOB
from ..objects.trees import DIR, LINK, is_executable
from ..store.facade import Store
from .gitobjects import (
    GIT_DIR,
    GIT_EXEC,
    GIT_FILE,
    GIT_LINK,
    ChainWriter,
    GitEntry,
    ObjectWriter,
    parse_commit,
)
from .gitrun import run
from .layout import MANIFEST, SESSIONS, Manifest, checkpoint_message, who
from .redact import Finding, redact_bytes, redact_text
from .repo import CHAIN_REF, LOCAL_REF, SCRATCH_REF, ShareRepo


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
    new_checkpoints: int = 0  # checkpoints this push adds to the chain


def _redact_json(value: Any, found: list[Finding], depth: int = MAX_NESTING) -> Any:
    """Every string in an event's JSON, redacted (keys are the schema's: left alone), and
    bounded as the store writes it (``fs/jsonl.py``): an event of a session written before
    the bound, nested past what orjson writes, made every push of the store fail."""
    if isinstance(value, str):
        try:
            text, f = redact_text(value)
        except UnicodeEncodeError:
            # a lone surrogate: a file name that is not UTF-8 (a rewind's paths, a tool call's
            # input), which the automaton cannot take and failed every push of the store.
            # Looked for with each one as '?'; kept exactly when nothing is found
            text, f = redact_text(value.encode("utf-8", "replace").decode("utf-8"))
            text = text if f else value
        found.extend(f)
        return text
    if isinstance(value, (dict, list)) and depth <= 0:
        return NESTED_TOO_DEEP
    if isinstance(value, dict):
        return {k: _redact_json(v, found, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(v, found, depth - 1) for v in value]
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
        header = summary.header.to_json()
        try:
            text = orjson.dumps(header, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # a name that is not UTF-8 (a workspace's path as its cwd)
            text = json.dumps(header, sort_keys=True).encode()
        digest = hashlib.sha1(text, usedforsecurity=False).hexdigest()[:16]
        key = f"s{sid}:{summary.events}:{summary.head}:{digest}"
        known = self.memo.get(key)
        if known is not None:
            return known
        log = self.store.session(sid)
        found: list[Finding] = []
        # jsonl's dumps: a name that is not UTF-8 is written as the store writes it (\\udcXX)
        lines = [dumps(_redact_json({"type": "session", "format": 1,
                                            **log.header.to_json(), "head": log.head}, found))]
        for ev in log.events:
            lines.append(dumps(_redact_json(ev.to_json(), found)))
        self.redactions += [Redaction(f"session {sid}", f.kind, f.line) for f in found]
        return self._remember(key, self.writer.blob(b"\n".join(lines) + b"\n"))


def _ident(user: str, host: str) -> str:
    """``Name <email>`` as git's fsck accepts it (no angle brackets or newlines inside)."""
    def clean(text: str) -> str:
        return "".join(c for c in text if c not in "<>\n\0") or "unknown"
    return f"{clean(user)} <{clean(user)}@{clean(host)}>"


def _when(cp: Checkpoint) -> int:
    ts = parse_iso(cp.ts)
    return int(ts) if ts is not None and ts > 0 else 0


def _write_objects(store: Store, ex: _Exporter, repo: ShareRepo, machine: str,
                   fresh: bool) -> tuple[str, int, int, str, str, str | None, int]:
    """Every object of the push: the new checkpoint commits, the sessions, the manifest.
    (root tree, sessions, new checkpoints, user, host, chain tip, checkpoints on the chain)"""
    forgotten = repo.forgotten()
    user, host = who()
    tip = None if fresh else repo.ref(CHAIN_REF)
    on_chain = 0 if tip is None else int(ex.memo.get("C" + tip, "0") or 0)
    try:
        cps = [c for c in store.checkpoints()
               if c.origin is None and c.session_id not in forgotten
               and (fresh or tip is None or "c" + c.id not in ex.memo)]
        trees = [ex.tree(c.tree, c.id, "") for c in cps]
        summaries, _total = store.sessions()
        own = [s for s in summaries if s.header.source != "pulled"
               and s.header.id not in forgotten]
        session_entries = [GitEntry(GIT_FILE, f"{s.header.id}.jsonl".encode(),
                                    ex.session(s.header.id)) for s in own]
        ex.writer.flush()  # the trees the commits name exist before fast-import reads them
        chain = ChainWriter(repo.git_dir, SCRATCH_REF, tip)
        ident = _ident(user, host)
        for cp, tree in zip(cps, trees, strict=True):
            record = {k: v for k, v in cp.to_json().items() if k != "tree"}
            chain.add(tree, checkpoint_message(record), ident, _when(cp))
        commits = chain.write(repo.folder / "marks")
        if commits:
            tip = commits[-1]
            on_chain += len(commits)
            repo.set_ref(CHAIN_REF, tip)
            ex.new_memo.update({"c" + cp.id: c for cp, c in zip(cps, commits, strict=True)})
            ex.new_memo["C" + tip] = str(on_chain)
        repo.set_ref(SCRATCH_REF, None)
        manifest = Manifest(machine, user, host, {
            s.header.id: {"title": s.header.title, "agent": s.header.agent,
                          "started": s.header.started, "events": s.events} for s in own},
            [], chain=tip, chained=on_chain)
        root_entries = [GitEntry(GIT_FILE, MANIFEST, ex.writer.blob(manifest.to_bytes())),
                        GitEntry(GIT_DIR, SESSIONS, ex.writer.tree(session_entries))]
        root = ex.writer.tree(root_entries)
        ex.writer.flush()
    except BaseException:
        ex.writer.abort()
        raise
    return root, len(own), len(cps), user, host, tip, on_chain


def build(store: Store, repo: ShareRepo, fresh: bool = False) -> Built:
    """Write this store's history into the sharing repository as one commit on the
    machine's chain (no new commit when nothing changed). Nothing leaves the machine.
    ``fresh``: a new chain, none of the old one's commits (forgetting a session)."""
    repo.ensure()
    machine = repo.machine()
    parent = None if fresh else repo.ref(LOCAL_REF)
    ex = _Exporter(store, repo)
    # under the gc lock (shared): a gc in another process must not remove what is read here
    with rw_lock(store.root / "locks" / "gc", exclusive=False):
        root, sessions, new_cps, user, host, tip, on_chain = _write_objects(
            store, ex, repo, machine, fresh)
    repo.add_map(ex.new_memo)  # only once the objects are written
    built = Built(machine, parent, parent, sessions, on_chain, ex.writer.blobs,
                  ex.writer.blob_bytes, ex.redactions, new_cps)
    if parent is not None:
        last = parse_commit(run(["cat-file", "commit", parent], git_dir=repo.git_dir).stdout,
                            "the last push")
        if last.tree == root:  # (the manifest names the chain's tip)
            return built  # nothing new since the last commit
    env = {"GIT_AUTHOR_NAME": user, "GIT_AUTHOR_EMAIL": f"{user}@{host}",
           "GIT_COMMITTER_NAME": user, "GIT_COMMITTER_EMAIL": f"{user}@{host}"}
    args = ["commit-tree", root, "-m",
            f"turnback: {sessions} sessions, {on_chain} checkpoints from {machine}"]
    for p in (parent, tip):
        if p is not None:
            args += ["-p", p]
    built.commit = run(args, git_dir=repo.git_dir, env=env,
                       what="git commit-tree").stdout.decode().strip()
    repo.set_ref(LOCAL_REF, built.commit)
    return built
