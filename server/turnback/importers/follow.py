"""Follow live: import what agents append to their transcripts, one poll at a time.

``Follower.poll()`` finds this workspace's transcripts of every followable
source (``registry.followable()``; see ``live.py`` for how a source plugs in),
reads only the complete lines appended since the last poll (it remembers each
file's byte offset and its parser's state) and applies them. A source whose
files are whole documents rewritten in place is read again whole when the file
changes (ids dedupe) — or when a file that stands for it changes
(``live.input_files``: a database's ``-wal``, a Cline task's
``ui_messages.json``; a root's ``owner``: an OpenCode session's messages).
The result says which sessions changed, which got a new user prompt — the
moment to take a workspace checkpoint, so every agent turn can be rewound —
and whose turn ended (the source wrote its end-of-turn record,
or the file rested ``idle_flush`` seconds after a prompt).

``poll(changed)`` is the event-driven form: a watcher of the sources' folders
(``roots()``) names the paths that changed, and only those files are read; a
path no source listed yet makes that source look again (``locate``). ``poll()``
alone looks at everything. ``next_flush()`` says when the next idle flush is
due, so a caller needs no timer ticking in between.

Call ``poll`` from one thread. A file's content when the follower first sees
it is imported as history: its prompts are not reported as new
(``report_existing=True`` changes that).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..fs.paths import expand_home
from ..store.facade import Store
from . import registry
from .base import Context, DocumentParser, FileParser
from .inputs import find
from .live import WatchRoot, input_files, input_of
from .result import ImportResult
from .runner import Check, Cursor, Progress, document_records, make_context, read_lines
from .writer import RecordWriter


@dataclass(slots=True)
class _Followed:
    source: str
    parser: FileParser | None  # None: a document source, parsed again whole on change
    cursor: Cursor = field(default_factory=Cursor)
    inode: int = 0
    # inode, size, mtime of each of its input files (documents)
    signature: tuple[tuple[int, int, int], ...] = ()
    last_growth: float = 0.0
    flushed: bool = True  # finish() ran since the last new line
    history: bool = False  # content read now was there before following began
    open_turns: set[str] = field(default_factory=set)  # prompted, no end seen yet


class Follower:
    def __init__(
        self,
        store: Store,
        sources: Iterable[str] | None = None,
        *,
        paths: Iterable[tuple[str, str | os.PathLike[str]]] = (),
        home: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        idle_flush: float = 5.0,
        report_existing: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Follow ``sources`` (every followable one by default) in their usual places,
        plus explicit ``(source, path)`` pairs.

        ``idle_flush``: after this many seconds without growth, what a parser holds
        back for more lines (the token usage of the last answer, the last
        file-history snapshot) is written, and an open turn counts as ended.
        """
        self.store = store
        names = registry.followable() if sources is None else sources
        self.sources = [registry.get(s).name for s in names]
        self.paths = [(registry.get(s).name, expand_home(p).absolute()) for s, p in paths]
        self.ctx = make_context(store, home, env)
        self.idle_flush = idle_flush
        self.report_existing = report_existing
        self.clock = clock
        self.files: dict[Path, _Followed] = {}
        self.polls = 0
        self.refused_seen: set[str] = set()  # links and FIFOs passed over, reported once
        # One writer for all polls: it knows the sessions and the titles' ranks.
        self.writer = RecordWriter(store, ImportResult())
        self.agents: dict[str, str] = {}  # session id → the source whose turns it had
        self.owners: dict[Path, Path] = {}  # a file standing for a followed input → it
        self._roots: list[tuple[str, WatchRoot]] | None = None

    # -- where to look ------------------------------------------------------------------
    def roots(self) -> list[tuple[str, WatchRoot]]:
        """The folders to watch, per source: where their files appear and grow.

        Worked out once (a source may look through the editors' storage for this
        workspace's folder), and again after :meth:`refresh_roots` — when a lookout
        root saw a change.
        """
        if self._roots is None:
            self._roots = watch_roots(self.ctx, self.sources) + [
                (name, WatchRoot(path if path.is_dir() else path.parent, recursive=path.is_dir()))
                for name, path in self.paths]
        return self._roots

    def refresh_roots(self) -> None:
        """Work the roots out again at the next poll (a lookout saw a change)."""
        self._roots = None

    def discover(self, only: set[str] | None = None) -> list[tuple[str, Path]]:
        """The files to follow now: this workspace's transcripts and the given paths."""
        found: list[tuple[str, Path]] = []
        for name in self.sources:
            if only is None or name in only:
                found.extend((name, f) for f in registry.get(name).locate(self.ctx, None))
        for name, path in self.paths:
            if only is None or name in only:
                src = registry.get(name)
                found.extend((name, f) for f in src.locate(self.ctx, path) if _is_input(f))
        return found

    def _candidates(self, changed: Iterable[Path] | None,
                    forced: set[Path]) -> list[tuple[str, Path]]:
        """The inputs to look at; ``forced`` gets those to read again even if their own
        files look unchanged (a file they own changed)."""
        if changed is None or self.polls == 0:
            return self.discover()
        picked: dict[Path, str] = {}
        relook: set[str] = set()
        roots = self.roots()
        for path in changed:
            key = self.owners.get(path, path)
            state = self.files.get(key)
            if state is not None:
                picked[key] = state.source
                continue
            for name, root in roots:
                if not root.holds(path):
                    continue
                if root.lookout:
                    self._roots = None  # where sessions go may have changed
                    relook.add(name)  # ... and its files may already be there
                    continue
                owner = root.owner(path) if root.owner is not None else None
                if owner is not None and owner in self.files:
                    picked[owner] = self.files[owner].source
                    forced.add(owner)
                    continue
                matching = registry.get(name).matching
                if matching is None or path == root.path:
                    # its folder is this workspace's, or the root itself appeared (files
                    # may be anywhere below): look again
                    relook.add(name)
                    continue
                # A folder shared by every project: only this input is asked whether it
                # is ours (another project's session growing costs one small read).
                for candidate in self._inputs_at(path, root, owner):
                    if _is_input(candidate) and matching.belongs(self.ctx, candidate):
                        picked.setdefault(candidate, name)
        if relook:
            for name, path in self.discover(relook):
                picked.setdefault(path, name)
        return [(name, path) for path, name in picked.items()]

    def _inputs_at(self, path: Path, root: WatchRoot, owner: Path | None) -> list[Path]:
        """The inputs a change at ``path`` may concern: the one it stands for; for a
        folder that appeared, also those of the files already in it."""
        if owner is not None:
            return [owner]
        out = [input_of(path)]
        if path.is_dir() and not path.is_symlink():
            out += [input_of(f) for f in find(path, root.pattern, refused=self.ctx.refused)
                    if root.holds(f)]
        return list(dict.fromkeys(out))

    def next_flush(self) -> float | None:
        """The clock time at which the next idle flush is due (None: nothing waits)."""
        due = [s.last_growth + self.idle_flush for s in self.files.values() if not s.flushed]
        return min(due) if due else None

    # -- reading ------------------------------------------------------------------------
    def poll(self, changed: Iterable[Path] | None = None, *,
             progress: Progress | None = None, check: Check | None = None) -> ImportResult:
        """Import what was appended since the last poll (to ``changed`` paths only, if given).

        ``progress(bytes done, bytes in all)`` and ``check`` (raise to stop) serve
        the first poll, which imports the existing sessions.
        """
        result = ImportResult()
        writer = self.writer
        writer.result = result
        forced: set[Path] = set()
        candidates = self._candidates(changed, forced)
        first = self.polls == 0
        self.polls += 1
        now = self.clock()
        total = sum(_size(p) for _, p in candidates) if progress is not None else 0
        done = 0
        seen: set[Path] = set()
        for name, path in candidates:
            if check is not None:
                check()
            seen.add(path)
            size = self._look(name, path, first, now, writer, result, check,
                              path in forced)
            done += size
            if progress is not None:
                progress(done, total)
        for path, state in self.files.items():
            resting = now - state.last_growth >= self.idle_flush
            if path not in seen and not state.flushed and resting:
                self._flush(state, path, writer, result)
        for problem in self.ctx.refused:
            if problem.file not in self.refused_seen:
                self.refused_seen.add(problem.file)
                result.add_problem(problem)
        self.ctx.refused.clear()
        writer.close()
        return result

    def _look(self, name: str, path: Path, first: bool, now: float, writer: RecordWriter,
              result: ImportResult, check: Check | None, forced: bool = False) -> int:
        """Read what is new in one input; the bytes it holds."""
        state = self.files.get(path)
        try:
            st = path.lstat()  # a link is never followed (inputs.py); it is not read
        except OSError:
            return 0
        folder = stat.S_ISDIR(st.st_mode)  # a task folder (Cline): a document
        if not stat.S_ISREG(st.st_mode) and not folder:
            return 0
        if state is not None and state.parser is None:
            signature = _signature(path)
            if signature != state.signature or forced:
                state.signature = signature
                self._read_document(state, path, writer, result, check)
            return st.st_size
        if state is None or st.st_ino != state.inode or st.st_size < state.cursor.offset:
            # new, replaced or truncated: read it again from the start (ids dedupe)
            parser = registry.get(name).parser(path, self.ctx)
            history = first and not self.report_existing
            if isinstance(parser, DocumentParser):
                state = _Followed(name, None, inode=st.st_ino, history=history,
                                  signature=_signature(path))
                self.files[path] = state
                self.owners.update(dict.fromkeys(input_files(path), path))
                self._read_document(state, path, writer, result, check, parser)
                return st.st_size
            if folder:
                return 0  # only a document is read from a folder
            state = _Followed(name, parser, inode=st.st_ino, history=history)
            self.files[path] = state
        if st.st_size > state.cursor.offset:
            self._read(state, path, writer, result, final=False, check=check)
            state.last_growth = now
            state.flushed = False
            state.history = False
        elif not state.flushed and now - state.last_growth >= self.idle_flush:
            self._flush(state, path, writer, result)
        return st.st_size

    def _flush(self, state: _Followed, path: Path, writer: RecordWriter,
               result: ImportResult) -> None:
        self._read(state, path, writer, result, final=True)
        state.flushed = True
        for sid in sorted(state.open_turns):  # the file rests: the turn is over
            result.add_ended(sid)
        state.open_turns.clear()

    def _read(self, state: _Followed, path: Path, writer: RecordWriter, result: ImportResult,
              *, final: bool, check: Check | None = None) -> None:
        assert state.parser is not None
        writer.file = str(path)
        before = list(result.prompted), list(result.ended)
        read_lines(state.parser, path, writer, state.cursor, final=final, check=check)
        writer.flush()
        self._turns(state, result, before)

    def _read_document(self, state: _Followed, path: Path, writer: RecordWriter,
                       result: ImportResult, check: Check | None,
                       parser: DocumentParser | None = None) -> None:
        doc = parser or registry.get(state.source).parser(path, self.ctx)
        if not isinstance(doc, DocumentParser):
            return
        writer.file = str(path)
        before = list(result.prompted), list(result.ended)
        for rec in document_records(doc, path):
            if check is not None:
                check()
            writer.add(rec)
        writer.flush()
        self._turns(state, result, before)
        state.history = False

    def _turns(self, state: _Followed, result: ImportResult,
               before: tuple[list[str], list[str]]) -> None:
        if state.history:  # old prompts and ends are history, not new turns
            result.prompted[:], result.ended[:] = before
            return
        new = [s for s in result.prompted if s not in before[0]]
        new += [s for s in result.ended if s not in before[1]]
        self.agents.update(dict.fromkeys(new, state.source))
        state.open_turns.update(s for s in result.prompted if s not in before[0])
        state.open_turns.difference_update(s for s in result.ended if s not in before[1])

    def agent_of(self, session_id: str) -> str | None:
        """The source of a session that got a turn while followed."""
        return self.agents.get(session_id)

    # -- what is followed ---------------------------------------------------------------
    def followed(self) -> dict[str, int]:
        """Files followed per source (every followed source listed, even with none)."""
        out = dict.fromkeys(self.sources, 0)
        for state in self.files.values():
            out[state.source] = out.get(state.source, 0) + 1
        return out


def watch_roots(ctx: Context, sources: Iterable[str]) -> list[tuple[str, WatchRoot]]:
    """The folders to watch for ``sources``' sessions of ``ctx.workspace``, per source
    (``registry.Source.watch``; the server's follower watches these too)."""
    out: list[tuple[str, WatchRoot]] = []
    for name in sources:
        watch = registry.get(name).watch
        if watch is not None:
            out.extend((name, r) for r in watch(ctx))
    return out


def _is_input(path: Path) -> bool:
    """A regular file or a folder (a Cline task), reached without a link."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def _signature(path: Path) -> tuple[tuple[int, int, int], ...]:
    """Inode, size and mtime of each file standing for the input (0s: absent)."""
    out = []
    for f in input_files(path):
        try:
            st = f.lstat()
        except OSError:
            out.append((0, 0, 0))
            continue
        out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0
