"""Follow live: import what agents append to their transcripts, one poll at a time.

``Follower.poll()`` finds this workspace's Claude Code and Codex transcripts
(new ones too), reads only the complete lines appended since the last poll
(it remembers each file's byte offset and its parser's state), and applies
them. The result says which sessions changed and which got a new user
prompt — the moment to take a workspace checkpoint, so every agent turn can
be rewound, shell-command changes included.

Call ``poll`` from one thread (a file watcher's callback or a timer). A file's
content when the follower first sees it is imported as history: its prompts
are not reported as new (``report_existing=True`` changes that).
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
from .apply import Applier
from .base import FileParser
from .result import ImportResult
from .runner import Cursor, make_context, read_lines

DEFAULT_SOURCES = ("claude-code", "codex")


@dataclass(slots=True)
class _Followed:
    source: str
    parser: FileParser
    cursor: Cursor = field(default_factory=Cursor)
    inode: int = 0
    last_growth: float = 0.0
    flushed: bool = True  # finish() ran since the last new line
    history: bool = False  # content read now was there before following began


class Follower:
    def __init__(
        self,
        store: Store,
        sources: Iterable[str] = DEFAULT_SOURCES,
        *,
        paths: Iterable[tuple[str, str | os.PathLike[str]]] = (),
        home: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        idle_flush: float = 5.0,
        report_existing: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Follow ``sources`` in their usual places, plus explicit ``(source, path)`` pairs.

        ``idle_flush``: after this many seconds without growth, what a parser holds
        back for more lines (the token usage of the last answer, the last
        file-history snapshot) is written.
        """
        self.store = store
        self.sources = [registry.get(s).name for s in sources]
        self.paths = [(registry.get(s).name, expand_home(p).absolute()) for s, p in paths]
        self.ctx = make_context(store, home, env)
        self.idle_flush = idle_flush
        self.report_existing = report_existing
        self.clock = clock
        self.files: dict[Path, _Followed] = {}
        self.polls = 0
        self.refused_seen: set[str] = set()  # links and FIFOs passed over, reported once
        # One applier for all polls: it knows the sessions and the titles' ranks.
        self.applier = Applier(store, ImportResult())

    def discover(self) -> list[tuple[str, Path]]:
        """The files to follow now: this workspace's transcripts and the given paths."""
        found: list[tuple[str, Path]] = []
        for name in self.sources:
            src = registry.get(name)
            found.extend((name, f) for f in src.locate(self.ctx, None))
        for name, path in self.paths:
            src = registry.get(name)
            found.extend((name, f) for f in src.locate(self.ctx, path) if _is_regular(f))
        return found

    def poll(self) -> ImportResult:
        """Import what was appended since the last poll."""
        result = ImportResult()
        applier = self.applier
        applier.result = result
        first = self.polls == 0
        self.polls += 1
        now = self.clock()
        for name, path in self.discover():
            state = self.files.get(path)
            try:
                st = path.lstat()  # a link is never followed (inputs.py); it is not read
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if state is None or st.st_ino != state.inode or st.st_size < state.cursor.offset:
                # new, replaced or truncated: read it again from the start (ids dedupe)
                src = registry.get(name)
                parser = src.parser(path, self.ctx)
                if not isinstance(parser, FileParser):
                    continue
                state = _Followed(name, parser, inode=st.st_ino,
                                  history=first and not self.report_existing)
                self.files[path] = state
            if st.st_size > state.cursor.offset:
                self._read(state, path, applier, result, final=False)
                state.last_growth = now
                state.flushed = False
                state.history = False
            elif not state.flushed and now - state.last_growth >= self.idle_flush:
                self._read(state, path, applier, result, final=True)
                state.flushed = True
        for problem in self.ctx.refused:
            if problem.file not in self.refused_seen:
                self.refused_seen.add(problem.file)
                result.add_problem(problem)
        self.ctx.refused.clear()
        applier.close()
        return result

    def _read(self, state: _Followed, path: Path, applier: Applier, result: ImportResult,
              *, final: bool) -> None:
        applier.file = str(path)
        before = list(result.prompted)
        read_lines(state.parser, path, applier, state.cursor, final=final)
        applier.flush()
        if state.history:
            result.prompted[:] = before  # old prompts are history, not new turns


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False
