"""The operation log (``oplog.jsonl``): every rewind and undo, so each can be undone.

Like jj's operation log: an undo is itself an operation, so undoing an undo
redoes. A rewind in progress is described by ``journal.json`` until it is done (format 3:
the file stays, emptied, between rewinds).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..errors import Conflict, LinkedInStore, StoreDamaged
from ..fs import instore
from ..fs.atomic import atomic_write, fsync_all
from ..fs.folders import FdFolder, Folder
from ..fs.jsonl import append_lines, dumps, last_line, loads, read_lines
from ..fs.osflags import O_BINARY, O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK
from ..fs.privacy import FILE_MODE
from ..fs.reading import read_fd, read_regular
from . import signing
from .written_journal import WrittenJournal

# a journal names each path a rewind changes (about 200 bytes a path): far more than
# MAX_FILES paths' worth is no journal Turnback wrote
MAX_JOURNAL = 1 << 30
# the journal's mark of a rewind whose files are all in place, whose record is still to write
APPLIED = "applied"


OPS = ("rewind", "undo")


def is_op(value: dict[str, Any]) -> bool:
    """Whether an object of the log names an operation (its id and kind); its other fields
    are checked where they are used (``RewindOps._check_op``)."""
    return isinstance(value.get("id"), str) and value.get("op") in OPS


class OpLog:
    def __init__(self, root: Path) -> None:
        self.path = root / "oplog.jsonl"
        self.journal = root / "journal.json"

    def last(self) -> dict[str, Any] | None:
        """The log's last operation: objects that name none (``{}``) passed over, as the
        full read's users pass them (trust36: ``{}`` as the last line refused every undo
        as damaged, and ``fsck --repair`` found nothing to move)."""
        return last_line(self.path, is_op)

    def all(self) -> list[dict[str, Any]]:
        return [line.value for line in read_lines(self.path)]

    def holds(self, op_id: object) -> bool:
        """Whether any record of the log is the operation ``op_id``: read line by line,
        not kept (the log grows by a line a rewind for as long as the store lives)."""
        return any(line.value.get("id") == op_id for line in read_lines(self.path))

    def add(self, op: dict[str, Any], *, fsync: bool, folder: Folder | None = None) -> None:
        """``folder``: the store's root, open (the caller's: a rewind's held root, so a
        store replaced after its journal gets no line where its path leads, trust35)."""
        append_lines(self.path, [op], fsync=fsync, folder=folder)

    # -- journal of the rewind in progress ------------------------------------------
    def begin(self, record: dict[str, Any], *, fsync: bool, sync_with: Sequence[Path] = (),
              sync_dirs: Sequence[Path] = (),
              meanwhile: Callable[[], None] | None = None,
              folder: Folder | None = None) -> WrittenJournal:
        """Write the journal of a rewind about to start, signed (``signing``), as one line
        into the journal file, which stays in place between rewinds (empty: none pending).

        Written in place, it needs no folder sync once it exists: its content and
        ``sync_with`` (the safety checkpoint's record, appended unsynced just before) are
        synced together, one disk wait where a new file renamed into place took two (the
        folder's sync); ``sync_dirs``, folders whose entries that wait makes durable too
        (a new object log's). A crash before that sync returns leaves a journal that may
        be torn or may outlive the record it names; no workspace file was touched then, and
        ``pending`` and the store's recovery tell both apart from a rewind begun
        (docs/FORMAT.md, "Rewind journal and operation log"). ``meanwhile``: work for
        this thread while the sync is waited for (not done when nothing is synced).
        ``folder``: as ``add``'s.

        Returned open (the caller closes it): a rewind refused before its first file
        retracts it through its descriptor, where it was written (``WrittenJournal``); it
        is synced through that descriptor too, not opened again by path. Retracted here
        when the write or the wait fails.
        """
        line = dumps(signing.sign(record)) + b"\n"
        fd, made = self._open_for_writing(folder)
        journal = WrittenJournal(fd, self.journal, fsync=fsync)
        with contextlib.ExitStack() as on_error:
            on_error.push(journal.__exit__)  # retracted and closed if what follows raises
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)  # past what a check of a left journal read
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            if fsync:
                # a new journal's name synced in the folder it was made in: through
                # ``folder`` when it is held by a descriptor (by path, a --store store
                # replaced meanwhile had the copy's folder synced; trust36, left open)
                held = [folder.fd] if made and isinstance(folder, FdFolder) else []
                dirs = ([*sync_dirs, self.journal.parent] if made and not held
                        else list(sync_dirs))
                fsync_all(sync_with, dirs, meanwhile=meanwhile, fds=[fd], dir_fds=held)
            on_error.pop_all()
        return journal

    def mark_applied(self, record: dict[str, Any], *, fsync: bool,
                     folder: Folder | None = None) -> None:
        """Replace the journal of a rewind whose files are all in place by the same record
        marked ``applied``, signed again: the open that finds it records the rewind and
        applies nothing (the plan applied again would undo what the user did since: a
        refused record is retried for as long as a server lives). Replaced whole, by a
        rename: a kill in between leaves the journal as it was, never an empty one.
        ``folder``: as ``add``'s."""
        atomic_write(self.journal, dumps(signing.sign({**record, APPLIED: True})) + b"\n",
                     fsync=fsync, in_folder=folder)

    def _open_for_writing(self, folder: Folder | None) -> tuple[int, bool]:
        """The journal file opened to be written in place, and whether it was just made
        (its name then needs its folder's sync). Anything else standing at its name (a
        link, a folder, a file with a second name elsewhere, which writing in place would
        change too) is replaced by a new file; a journal still pending is never
        overwritten."""
        flags = os.O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_BINARY | O_CLOEXEC
        try:
            return instore.open_file(self.journal, flags | os.O_CREAT | os.O_EXCL, FILE_MODE,
                                     in_folder=folder), True
        except FileExistsError:
            pass
        try:
            fd = instore.open_file(self.journal, flags, in_folder=folder)
        except OSError:
            fd = -1  # a symlink (ELOOP), a FIFO, a folder: replaced below
        if fd >= 0:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                try:
                    if st.st_size and _parse(self.journal, read_fd(fd, MAX_JOURNAL,
                                                                   self.journal)) is not None:
                        raise Conflict(
                            f"{self.journal} holds a rewind another process left unfinished; "
                            "nothing was changed. Open the store again (any 'turnback' verb) "
                            "to finish it, then rewind")
                except BaseException:
                    os.close(fd)
                    raise
                return fd, False
            os.close(fd)
        try:
            if folder is not None:
                folder.unlink(self.journal.name)
            else:
                instore.unlink(self.journal, missing_ok=False)
        except LinkedInStore:
            raise
        except OSError as exc:
            raise StoreDamaged(
                f"{self.journal} is not a file Turnback wrote ({exc.strerror}); nothing was "
                "changed: move it away and rewind again") from None
        return instore.open_file(self.journal, flags | os.O_CREAT | os.O_EXCL, FILE_MODE,
                                 in_folder=folder), True

    def pending(self) -> dict[str, Any] | None:
        """The journal's record, or None when no rewind is pending (no file, an empty one,
        or one whose write never finished: no workspace file is touched before it is
        synced whole)."""
        try:
            data = read_regular(self.journal, limit=MAX_JOURNAL)
        except FileNotFoundError:
            return None
        return _parse(self.journal, data)

    def holds_journal(self) -> bool:
        """Whether the journal file holds anything (a rewind pending, or what recovery
        refused); cheap enough for ``status``."""
        try:
            return os.stat(self.journal, follow_symlinks=False).st_size > 0
        except OSError:
            return False

    def end(self, folder: Folder | None = None) -> None:
        """Empty the journal (not synced: a crash that undoes this only makes the next
        open finish a rewind already finished, which it notices). Anything other than the
        file ``begin`` writes is unlinked, as every journal was before format 3.
        ``folder``: as ``add``'s."""
        try:
            fd = instore.open_file(self.journal, os.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_BINARY
                                   | O_CLOEXEC, in_folder=folder)
        except FileNotFoundError:
            return
        except OSError:
            fd = -1
        if fd >= 0:
            try:
                st = os.fstat(fd)
                if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                    os.ftruncate(fd, 0)
                    return
            finally:
                os.close(fd)
        try:
            if folder is not None:
                folder.unlink(self.journal.name)
            else:
                instore.unlink(self.journal, missing_ok=False)
        except FileNotFoundError:
            pass


def _parse(path: Path, data: bytes) -> dict[str, Any] | None:
    """The record a journal file's bytes hold (see ``OpLog.pending``)."""
    if not data.strip():
        return None  # no rewind since the last ended
    try:
        value = loads(data)
    except orjson.JSONDecodeError as exc:
        if not data.endswith(b"\n"):
            return None  # torn: its write never finished, so no workspace file was touched
        raise StoreDamaged(
            f"{path} (an interrupted rewind) is unreadable ({exc}); the workspace may "
            "be half rewound: inspect it, then delete that file"
        ) from exc
    if not isinstance(value, dict):
        raise StoreDamaged(f"{path} must hold a JSON object")
    return value
