"""Answering a CLI's hand-off: the store's socket, served while the server has the store open.

A fresh ``turnback checkpoint`` (an agent hook's) finds ``<store>/run/cli.sock`` and hands
its request here (``cli/handoff.py``; the framing and the checks are ``fs/sockets.py``).
The request runs like the JSON-RPC features': on the folder's write queue, a checkpoint
reading only the paths the watcher saw change; what comes back is what the CLI would
print (``interchange/cli_text.py``) and its exit code. The adapter calls the same
``Store`` methods as the CLI's commands, with the same arguments (the checkpoint ref
as given, the session as given), so errors read the same too.

The server declines (the CLI then does the work itself) a request for another workspace
or store, and every request while the editor's settings change what the store holds
(ignores, size cap, retention): a hook's checkpoint must not depend on whether an editor
is open. Each connection must come from this user (``SO_PEERCRED``); a peer that sends
nothing, or too much, is dropped. The socket is made in the store's private ``run/``
folder, 0600; a stale one (its server gone) is replaced, a live one (another server on
the same store) is left alone.

The server starts one listener per folder whose store is open; the listener needs of the
server only its writes and reads (``Host``), so this module does not import the server's
class (``core.py`` imports this one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from ...errors import InvalidInput
from ...fs import instore, privacy, sockets
from ...fs.folders import FdFolder, open_root
from ...fs.osflags import O_CLOEXEC, O_NOFOLLOW
from ...interchange import cli_text
from ...models import RewindResult
from ...store import background_lock
from ...store.facade import WORKSPACE_SESSION, Store
from ..workspace.folders import Folder, rewind_with_dirty, with_dirty

log = logging.getLogger("turnback.server")

T = TypeVar("T")

KEEPALIVE_S = 1.0  # below the client's IDLE_TIMEOUT_S
REQUEST_TIMEOUT_S = 5.0  # a connected client sends its request at once
MAX_CLIENTS = 32  # at once; more are closed unanswered (they do the work themselves)
_PIECE = 1 << 20  # of an answer, each taken within IDLE_TIMEOUT_S (~100 KB/s) or given up


class Host(Protocol):
    """What a listener uses of the server (:class:`~turnback.server.core.TurnbackServer`)."""

    async def write(
        self,
        folder: Folder,
        fn: Callable[[Store], T],
        *,
        create: bool = ...,
        sessions: set[str] | None = ...,
        checkpoints: bool = ...,
        after: Callable[[Store], None] | None = ...,
    ) -> T: ...

    async def read(self, folder: Folder, fn: Callable[[Store], T]) -> T: ...


class Declined(Exception):
    """Not for this server: the client does the work itself."""


class HandoffListener:
    """The socket of one folder's store, served on the event loop."""

    def __init__(self, ls: Host, folder: Folder, loop: asyncio.AbstractEventLoop) -> None:
        self._ls = ls
        self._folder = folder
        self._loop = loop
        self._server: asyncio.AbstractServer | None = None
        self._bound: tuple[str, int, int] | None = None  # path, st_dev, st_ino
        self._clients = 0
        self._tasks: set[asyncio.Task[bytes]] = set()
        self.last_request = time.monotonic()  # the background server's idle clock
        # set by a background server (``background.py``): asked to leave, it calls this;
        # None (an editor's server): a ``leave`` request is declined
        self.on_leave: Callable[[], None] | None = None

    async def start(self, root: Path, *, take_over: bool = True) -> bool:
        """Listen on ``root``'s socket; False (logged) when it cannot or must not.

        A live socket is left to its server, unless ``take_over`` (an editor's server) and
        that server is a background one, which is asked to leave (the ``leave`` verb) and
        then does: the editor's server is the one that should serve the folder."""
        if not sockets.available():
            return False
        path = sockets.socket_path(str(root))
        if path is None:
            log.info("%s: no CLI hand-off: the store's path is too long for a socket",
                     self._folder.path)
            return False
        try:
            sock = _bind(path)
        except OSError as exc:
            log.warning("%s: no CLI hand-off (%s)", self._folder.path, exc)
            return False
        if sock is None and take_over and await asyncio.to_thread(
                _ask_to_leave, path, str(self._folder.path), str(root)):
            log.info("%s: the background server of %s left; serving the CLI here",
                     self._folder.path, root)
            try:
                sock = _bind(path)
            except OSError as exc:
                log.warning("%s: no CLI hand-off (%s)", self._folder.path, exc)
                return False
        if sock is None:
            log.info("%s: another server serves the CLI for %s", self._folder.path, root)
            return False
        st = os.lstat(path)
        self._bound = (path, st.st_dev, st.st_ino)
        self._server = await asyncio.start_unix_server(self._serve, sock=sock)
        log.info("%s: serving the CLI on %s", self._folder.path, path)
        return True

    @property
    def path(self) -> str | None:
        return self._bound[0] if self._bound else None

    def still_bound(self) -> bool:
        """Whether the socket this listener made is still at its path (not removed, not
        replaced by another server's)."""
        bound = self._bound
        if bound is None:
            return False
        try:
            st = os.lstat(bound[0])
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == bound[1:]

    def stop(self) -> None:
        """Stop listening and remove the socket if it is still ours. Thread-safe."""
        bound, self._bound = self._bound, None
        if bound is not None:
            path, dev, ino = bound
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if (st.st_dev, st.st_ino) == (dev, ino):
                    instore.unlink(path)  # through no link swapped in for run/
        server, self._server = self._server, None
        if server is not None:
            try:
                self._loop.call_soon_threadsafe(server.close)
            except RuntimeError:
                server.close()  # the loop is closed (the server is ending)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if self._clients >= MAX_CLIENTS or sock is None or not sockets.peer_is_same_user(sock):
            writer.close()
            return
        self._clients += 1
        try:
            writer.write(sockets.GREETING)
            fields = await asyncio.wait_for(_read_request(reader), REQUEST_TIMEOUT_S)
            if fields is None:
                return
            self.last_request = time.monotonic()
            # the work goes on if the client goes away: the request was made
            task = self._loop.create_task(self._answer(fields))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            done = False
            while not done:
                done = bool((await asyncio.wait({task}, timeout=KEEPALIVE_S))[0])
                if not done:
                    await _send(writer, sockets.KEEPALIVE)
            await _send(writer, task.result())
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            pass  # the client went away or sent nothing; it does the work itself
        finally:
            self._clients -= 1
            writer.close()

    async def _answer(self, fields: list[str]) -> bytes:
        log.debug("%s: CLI hand-off: %s", self._folder.path, fields[1:2])
        try:
            (out, err), told = await self._run(fields)
            code = 0
        except Declined as exc:
            log.debug("%s: CLI hand-off declined: %s", self._folder.path, exc)
            return sockets.encode_answer(sockets.DECLINED, b"", b"")
        except Exception as exc:
            failed = cli_text.error(exc)
            if failed is None:
                log.exception("%s: CLI hand-off failed", self._folder.path)
                return sockets.encode_answer(sockets.DECLINED, b"", b"")
            code, (out, err), told = failed[0], ("", failed[1]), ""
        return sockets.encode_answer(code, out.encode(), (told + err).encode())

    def _told(self, store: Store) -> str:
        """What the CLI's own open says first (``cli/direct.tell_notices``): the causes
        the store set aside that the CLI's channel has not told yet, once for each,
        whichever path tells it. Handed off, a command said none (trust21), and a
        background server's ``window/showMessage`` reaches no one. Asked by the command's
        own job once it succeeded, so one pool trip answers both (a second trip to the
        read pool did before, loop24); a failed command tells none: a hook's hand-off
        refused (a session the store lacks) does the work itself, whose own open tells
        them (``cli/hook_cmd._handed_off``). Never fails the answer."""
        try:
            found = store.untold_notices("cli")
        except Exception:
            log.exception("%s: the store's notices for a CLI hand-off", self._folder.path)
            return ""
        return "".join(f"turnback: {n.message}\n" for n in found)

    async def _run(self, fields: list[str]) -> tuple[cli_text.Printed, str]:
        """What the command prints, and the store's notices to tell before it (``_told``);
        raises what fails it."""
        req = _Request.parse(fields)
        folder = self._folder
        store = folder.store
        if store is None or Path(req.workspace) != folder.path:
            raise Declined("another workspace")
        if os.path.realpath(req.store) != os.path.realpath(store.root):
            raise Declined("another store")
        overrides = folder.settings.store_overrides()
        overrides.pop("auto_checkpoint", None)  # the follower's, not a checkpoint's
        if overrides:
            raise Declined("the editor's settings change what the store holds")
        if req.verb == "leave":
            return self._leave(), ""
        if req.verb == "checkpoint":
            return await self._checkpoint(req)
        if req.verb in ("rewind", "undo"):
            return await self._rewind(req)
        if req.verb == "status":
            st, told = await self._ls.read(folder, lambda s: (s.status(), self._told(s)))
            watcher = folder.watcher  # as turnback/status and the CLI alone say it
            limit = watcher.limit if watcher is not None else None
            st["watchLimit"] = limit.to_json() if limit is not None else None
            st["background"] = background_lock.status(Path(store.root))
            return cli_text.status(st, req.as_json), told
        raise Declined(f"unknown verb {req.verb!r}")

    def _leave(self) -> cli_text.Printed:
        """A background server asked to leave (by an editor's server taking the folder, or
        ``turnback serve --stop``): the socket is gone before the answer is sent, so the
        asker may bind its own at once; the server then ends (``on_leave``)."""
        if self.on_leave is None:
            raise Declined("an editor's server does not leave")
        log.info("%s: asked to leave", self._folder.path)
        self.stop()
        self.on_leave()
        return "", ""

    async def _checkpoint(self, req: _Request) -> tuple[cli_text.Printed, str]:
        folder = self._folder
        label, sid = req.options.get("label"), req.options.get("session")
        auto = "auto" in req.options

        def job(store: Store) -> tuple[cli_text.Printed, str]:
            cp = with_dirty(folder, lambda dirty: store.checkpoint(
                label=label, session_id=sid, auto=auto, dirty=dirty, save_later=True))[0]
            return cli_text.checkpoint(cp.to_json(), req.as_json), self._told(store)

        return await self._ls.write(folder, job, sessions={sid or WORKSPACE_SESSION},
                                    checkpoints=True, after=Store.save_scan_cache)

    async def _rewind(self, req: _Request) -> tuple[cli_text.Printed, str]:
        folder = self._folder
        dry_run = "dryRun" in req.options

        def job(store: Store) -> tuple[RewindResult, str]:
            return rewind(store), self._told(store)

        def rewind(store: Store) -> RewindResult:
            if req.verb == "undo":
                if dry_run:
                    return store.undo(dry_run=True)
                return rewind_with_dirty(folder, lambda dirty: store.undo(
                    dirty=dirty, finish_later=True))
            ref, paths = req.args[0], req.args[1:] or None
            mode = req.options.get("mode", "files")

            def go(dirty: frozenset[str] | None) -> RewindResult:
                return store.rewind(ref, paths, mode, dry_run, dirty=dirty, finish_later=True)

            if dry_run or mode == "conversation":
                return go(None)
            return rewind_with_dirty(folder, go)

        res, told = await self._ls.write(folder, job, checkpoints=not dry_run,
                                         after=Store.finish_rewind)
        verb = "dry run" if dry_run else req.verb
        return cli_text.rewind(res.to_json(), verb, req.as_json), told


class _Request:
    """A request as ``cli/handoff.py`` frames it: version, verb, workspace, store,
    ``--json``, then name/value pairs (``arg`` for each positional argument)."""

    def __init__(self, verb: str, workspace: str, store: str, as_json: bool,
                 options: dict[str, str], args: list[str]) -> None:
        self.verb, self.workspace, self.store = verb, workspace, store
        self.as_json, self.options, self.args = as_json, options, args

    @classmethod
    def parse(cls, fields: list[str]) -> _Request:
        if len(fields) < 5 or fields[0] != str(sockets.VERSION) or len(fields) % 2 == 0:
            raise Declined("not a request of this version")
        options: dict[str, str] = {}
        args: list[str] = []
        for i in range(5, len(fields), 2):
            name, value = fields[i], fields[i + 1]
            if name == "arg":
                args.append(value)
            elif name in ("label", "session", "mode", "auto", "dryRun"):
                options[name] = value
            else:
                raise Declined(f"unknown field {name!r}")
        verb = fields[1]
        if verb == "rewind" and not args:
            raise InvalidInput("rewind: which checkpoint?")
        if options.get("mode", "files") not in ("files", "conversation", "both"):
            raise Declined("unknown mode")
        return cls(verb, fields[2], fields[3], fields[4] == "1", options, args)


async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data``, giving up (``TimeoutError``) on a client that takes none of a piece
    for its own ``IDLE_TIMEOUT_S``: one that sent its request and stopped reading held its
    slot, one of ``MAX_CLIENTS``, for as long as it stayed connected."""
    for start in range(0, max(len(data), 1), _PIECE):
        writer.write(data[start:start + _PIECE])
        await asyncio.wait_for(writer.drain(), sockets.IDLE_TIMEOUT_S)


async def _read_request(reader: asyncio.StreamReader) -> list[str] | None:
    n = int.from_bytes(await reader.readexactly(4), "big")
    if n > sockets.MAX_REQUEST:
        return None
    return sockets.decode_request(await reader.readexactly(n))


def _bind(path: str) -> socket.socket | None:
    """A listening socket at ``path``, or None when a live server already has it.

    ``run/`` is made private; whatever sits at ``path`` that is not a live server's
    socket (a stale socket, a planted file or link) is removed first. All of it through
    ``run/`` opened from the store's root without following a link (``fs/instore.py``):
    a link swapped in for ``run/`` gets no socket, removal or mode change where it points.
    """
    run, name = os.path.split(path)
    privacy.make_dir(Path(run))
    with instore.folder_of(path, create=False) or open_root(run) as folder:
        st = folder.stat_self()
        if not stat.S_ISDIR(st.st_mode) or not sockets.private_owned(st, stat.S_IFDIR):
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
                folder.chmod_self(privacy.DIR_MODE)  # ours, too open: tightened
            else:
                raise OSError(f"{run} is not a private folder of yours; remove it")
        try:
            old = folder.lstat(name)
        except FileNotFoundError:
            old = None
        if old is not None:
            if stat.S_ISSOCK(old.st_mode) and _alive(path):
                return None
            folder.unlink(name)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            # made under the process umask, in a folder only we can enter
            if isinstance(folder, FdFolder) and os.path.isdir(_PROC_FD):
                # the folder held, by a name the kernel resolves to it: no link on the way
                sock.bind(f"{_PROC_FD}/{folder.fd}/{name}")
                _make_private(path, folder.fd, name)
            else:
                sock.bind(path)
                _make_private(path, None, path)
            sock.listen(MAX_CLIENTS)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        return sock


_PROC_FD = "/proc/self/fd"


def _make_private(path: str, dir_fd: int | None, name: str) -> None:
    """Set the socket just bound at ``path`` to 0600. Where descriptors reach it, through
    one opened without following a link (``O_PATH``), its kind checked, then set through
    ``/proc``: a link swapped in after the bind keeps its target's mode (a ``chmod`` by
    name set ``~/bin/tool`` 0755 to 0600). Elsewhere a look, then the ``chmod`` by name:
    a swap between the two is not caught."""
    o_path = getattr(os, "O_PATH", 0)
    if dir_fd is None or not o_path:
        if not stat.S_ISSOCK(os.lstat(name).st_mode):
            raise _replaced(path)
        os.chmod(name, privacy.FILE_MODE)
        return
    fd = os.open(name, o_path | O_NOFOLLOW | O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            raise _replaced(path)
        os.chmod(f"{_PROC_FD}/{fd}", privacy.FILE_MODE)
    finally:
        os.close(fd)


def _replaced(path: str) -> OSError:
    return OSError(
        f"{path} was replaced (by a link?) right after Turnback bound its socket there; "
        "nothing was changed through it. Remove it (see what it points to first), then "
        "restart the server ('turnback serve --stop')")


def _ask_to_leave(path: str, workspace: str, root: str) -> bool:
    """Ask the server at ``path`` to leave (a background one does; an editor's, or one
    older than the ``leave`` verb, declines); whether it left. Blocking: a thread's."""
    fields = [str(sockets.VERSION), "leave", workspace, root, "0"]
    answer = sockets.exchange(path, sockets.encode_request(fields))
    return answer is not None and answer[0] == 0


def _alive(path: str) -> bool:
    """Whether a server answers at ``path`` (then it is not ours to replace)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()
