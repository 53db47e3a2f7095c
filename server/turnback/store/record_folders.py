"""The folders a checkpoint's record and its session event are written in: one ``dup`` of
the store root held since the open (``HeldFolder.folder``) and the session's folder
opened in it, both opened before anything of the checkpoint is written.

Opened first, ``sessions/`` removed or swapped for a link after the checkpoint's look at
its session is refused before the record (it was refused after: a checkpoint without its
event), at no extra system call: the same ``openat`` the event made after the record. A
server's at-once checkpoint opens them before its scan, for its look at the session's
lock, keeps the root to its record and opens ``sessions/`` again there before the record
(``reopen_sessions``: one renamed aside during the scan got the event, redteam43).
"""

from __future__ import annotations

from types import TracebackType

from ..fs.folders import Folder
from ..fs.heldfolder import HeldFolder
from ..sessions.backend import SessionBackend


class RecordFolders:
    """``root``: the held root's ``dup`` (None where none is held, Windows: by path);
    ``sessions``: the session's folder opened there (None: by path, also for a link the
    user put in a store they named, ``FileSessions.sessions_in``). Closed together."""

    __slots__ = ("root", "sessions")

    def __init__(self, root: Folder | None, sessions: Folder | None) -> None:
        self.root = root
        self.sessions = sessions

    def reopen_sessions(self, backend: SessionBackend, session_id: str) -> None:
        """``sessions`` opened again in ``root``, for a caller that held it across a scan
        (``checkpoint_now``): a ``sessions/`` renamed aside meanwhile got the event in the
        folder renamed aside while the record was listed. Refused as
        ``open_record_folders`` is, before anything of the checkpoint is written."""
        if self.root is None:
            return
        if self.sessions is not None:
            was, self.sessions = self.sessions, None
            was.close()
        self.sessions = backend.sessions_in(self.root, session_id)

    def close(self) -> None:
        try:
            if self.sessions is not None:
                self.sessions.close()
        finally:
            if self.root is not None:
                self.root.close()

    def __enter__(self) -> RecordFolders:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def open_record_folders(held: HeldFolder, backend: SessionBackend,
                        session_id: str) -> RecordFolders:
    """The held root and ``session_id``'s folder in it; the caller closes them. Refused as
    ``backend.sessions_in`` refuses (``NotFound``, ``LinkedInStore``, ``Conflict``)."""
    root = held.folder()
    if root is None:
        return RecordFolders(None, None)
    try:
        return RecordFolders(root, backend.sessions_in(root, session_id))
    except BaseException:
        root.close()
        raise
