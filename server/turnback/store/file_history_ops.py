"""A file's history in the store: every checkpoint that holds it or changed it, its bytes
there and in the workspace now, each change labelled with the turn that made it. Reads only.

Apart from ``turn_ops`` (a session's turns), which it builds on for those labels."""

from __future__ import annotations

from ..errors import TurnbackError, imported_late
from ..fs.folders import open_dir, open_root
from ..fs.paths import normalize
from ..fs.reading import read_regular
from ..models import Checkpoint
from ..objects.objectstore import BLOB
from ..objects.trees import DIR, LINK, Entry
from ..snapshot import changes as changes_mod
from .turn_ops import TurnOps

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..sessions.turns import Turn
    from .turn_views import FileVersion

    # a session's event → turn map, its turns by id, its agent, its rewinds' safety checkpoints
    _TurnLabels = tuple[dict[str, str], dict[str, Turn], str, frozenset[str]]


class FileHistoryOps(TurnOps):
    """A file's states and history across checkpoints (see ``Store``)."""

    def file_states(self, path: str, checkpoints: list[Checkpoint] | None = None
                    ) -> list[tuple[Checkpoint, str | None]]:
        """Every checkpoint (of ``checkpoints``, in their order; default: all, by time) that
        says something of ``path``, with the hash of the file it holds there (None:
        absent, a folder or a link). A partial checkpoint that neither holds the file nor
        knows it absent is passed over, as in ``file_history``. What line attribution
        walks (``turnback.attribution``)."""
        rel = normalize(path, "path")
        if checkpoints is None:
            checkpoints = self.checkpoints()  # by time, ties in the order they were taken
        out: list[tuple[Checkpoint, str | None]] = []
        for cp in checkpoints:
            entry = self.trees.lookup(cp.tree, rel)
            if entry is not None and entry.mode in (DIR, LINK):
                entry = None
            if entry is None and cp.partial and rel not in cp.absent:
                continue
            out.append((cp, entry.hash if entry is not None else None))
        return out

    def read_blob(self, blob: str) -> bytes:
        """A file's bytes by the hash ``file_states`` gave (verified against it)."""
        return self.objects.get(BLOB, blob)

    def working_file(self, path: str) -> bytes | None:
        """The file as it is in the workspace now; None when it is absent or unreadable
        (reached through fs/folders.py, never following a link)."""
        *folders, name = normalize(path, "path").split("/")
        try:
            with open_root(str(self.workspace)) as root:
                folder = open_dir(root, folders, create=False)
            with folder:
                return read_regular(name, folder=folder, limit=self.config.size_cap_bytes)
        except (OSError, TurnbackError):
            return None

    def file_history(self, path: str, offset: int = 0, limit: int = 100
                     ) -> tuple[list[FileVersion], int]:
        """Every checkpoint where ``path`` changed, newest first, and how many in all.

        A partial checkpoint (an importer's) that neither holds the file nor knows it
        absent says nothing about it and is passed over.
        """
        with imported_late("turnback.store.turn_views"):
            from .turn_views import FileVersion

        rel = normalize(path, "path")
        ordered = self.checkpoints()  # by time, ties in the order they were taken
        found: list[tuple[Checkpoint, Checkpoint | None, Entry | None, Entry | None]] = []
        prev_cp: Checkpoint | None = None
        prev_entry: Entry | None = None
        for cp in ordered:
            entry = self.trees.lookup(cp.tree, rel)
            if entry is not None and entry.mode == DIR:
                entry = None
            if entry is None and cp.partial and rel not in cp.absent:
                continue
            same = (entry is None and prev_entry is None) or (
                entry is not None and prev_entry is not None
                and entry.hash == prev_entry.hash and entry.mode == prev_entry.mode)
            if not same:
                found.append((cp, prev_cp, prev_entry, entry))
            prev_cp, prev_entry = cp, entry
        found.reverse()
        page = found[offset : offset + limit]
        turn_cache: dict[str, _TurnLabels] = {}
        out = []
        read = self._reader(False)
        for cp, before, old, new in page:
            change = changes_mod.describe(rel, old, new, read, read)
            v = FileVersion(cp, before, change.status, change.lines_added, change.lines_removed,
                            change.binary)
            self._label_with_turn(v, turn_cache)
            out.append(v)
        return out, len(found)

    def _label_with_turn(self, v: FileVersion, cache: dict[str, _TurnLabels]) -> None:
        sid, eid = v.checkpoint.session_id, v.checkpoint.event_id
        if not sid or not eid or not self.has_session(sid):
            return
        if sid not in cache:
            view = self._view(sid)
            cache[sid] = (view.owner, {t.id: t for t in view.turns},
                          view.log.header.agent, view.marks.safety)
        owner, by_id, agent, safety = cache[sid]
        v.agent = agent
        v.safety = v.checkpoint.id in safety
        tid = owner.get(eid)
        if tid is not None and tid in by_id:
            v.turn_id = tid
            v.turn_prompt = by_id[tid].prompt

