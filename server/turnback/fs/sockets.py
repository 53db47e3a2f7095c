"""The store's hand-off socket: where it is, who may use it, how a message is framed.

A running server listens on ``<store>/run/cli.sock`` (AF_UNIX); a fresh ``turnback``
process hands its request there instead of opening the store itself (``cli/handoff.py``,
``server/jobs/handoff.py``; docs/PROTOCOL.md "The CLI hand-off"). Both ends import this module
before anything else of Turnback, so it imports only ``os``, ``stat``, ``sys`` and the C
module ``_socket`` (``socket`` itself pulls in ``enum``, ~15 ms of a 40 ms hand-off). The
client's side of an exchange is here too (``exchange``): the CLI's hand-off, and an editor's
server asking a background one to leave (``server/jobs/handoff.py``), speak it alike.

Everything found on disk is input: the workspace (and so a store inside it) may come from
a cloned repository, where a planted ``run/cli.sock`` could be a symlink to another
program's socket. A socket is used only if it and its folder are the user's own and
private (folder 0700, socket 0600, neither a link), and, where the system says who is at
the other end (``SO_PEERCRED``), only if that is the same user.
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    import _socket

RUN_DIR = "run"
SOCKET_NAME = "cli.sock"
# sun_path holds 108 bytes on Linux, 104 on macOS and the BSDs (with the final NUL)
MAX_PATH_BYTES = 103
VERSION = 1
GREETING = b"turnback-handoff 1\n"  # the server's first line; anything else is not ours
KEEPALIVE = b"."  # sent while the work runs, so a client can tell slow from stuck
ANSWER = b"="  # then b"<exit> <stdout bytes> <stderr bytes>\n", stdout, stderr
DECLINED = "x"  # in place of <exit>: nothing was done, the client does the work itself
MAX_REQUEST = 1 << 20  # the request: argv-sized, far below this
MAX_OUTPUT = 1 << 30
CONNECT_TIMEOUT_S = 2.0  # the client's: connect and the server's greeting
IDLE_TIMEOUT_S = 10.0  # the server sends a keep-alive every second while it works


def available() -> bool:
    """Whether this platform has AF_UNIX sockets (else the CLI always works alone)."""
    try:
        import _socket
    except ImportError:
        return False
    return hasattr(_socket, "AF_UNIX")


def socket_path(store_root: str) -> str | None:
    """``<store>/run/cli.sock``, or None when the path is too long for a socket address."""
    path = os.path.join(store_root, RUN_DIR, SOCKET_NAME)
    return path if len(os.fsencode(path)) <= MAX_PATH_BYTES else None


def private_owned(st: os.stat_result, kind: int) -> bool:
    """``st`` is of ``kind`` (``stat.S_IFDIR``/``S_IFSOCK``), the user's, and private.

    lstat results only: a link is never of either kind."""
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    return (stat.S_IFMT(st.st_mode) == kind and (euid is None or st.st_uid == euid)
            and st.st_mode & 0o077 == 0)


def usable_socket(path: str) -> bool:
    """The folder and the socket at ``path`` are the user's own, private, not links."""
    try:
        return (private_owned(os.lstat(os.path.dirname(path)), stat.S_IFDIR)
                and private_owned(os.lstat(path), stat.S_IFSOCK))
    except OSError:
        return False


def _connect(path: str) -> _socket.socket | None:
    """A socket connected to ``path`` (the caller closes it), or None: nothing listens
    there (a crashed server's socket refuses), or no answer within CONNECT_TIMEOUT_S."""
    import _socket

    try:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        sock.connect(path)
        return sock
    except OSError:
        sock.close()
        return None


def answers(path: str) -> bool:
    """Whether something listens at ``path`` (a crashed server's socket refuses)."""
    sock = _connect(path)
    if sock is None:
        return False
    sock.close()
    return True


def peer_is_same_user(sock: _socket.socket) -> bool:
    """The process at the other end runs as this user; True where the system cannot say
    (the socket's 0600 mode and 0700 folder then keep others out)."""
    import _socket

    opt = getattr(_socket, "SO_PEERCRED", None)
    if opt is None or not hasattr(os, "geteuid"):
        return True
    try:
        raw = sock.getsockopt(_socket.SOL_SOCKET, opt, 12)  # struct ucred: pid, uid, gid
    except OSError:
        return False
    if len(raw) < 12:
        return False
    uid = int.from_bytes(raw[4:8], sys.byteorder)
    return uid == os.geteuid()


def encode_request(fields: list[str]) -> bytes:
    """Fields (none holds a NUL: they come from argv, the environment and paths) as one
    frame: 4-byte big-endian length, then the fields NUL-separated."""
    body = b"\0".join(os.fsencode(f) for f in fields)
    return len(body).to_bytes(4, "big") + body


def decode_request(body: bytes) -> list[str]:
    return [os.fsdecode(f) for f in body.split(b"\0")]


def encode_answer(code: int | str, out: bytes, err: bytes) -> bytes:
    return ANSWER + f"{code} {len(out)} {len(err)}\n".encode() + out + err


def parse_answer_header(line: bytes) -> tuple[int | None, int, int] | None:
    """``b"<exit> <n> <m>"`` → (exit code or None for declined, n, m); None if malformed."""
    parts = line.split(b" ")
    if len(parts) != 3 or not all(p.isdigit() and len(p) <= 12 for p in parts[1:]):
        return None
    nout, nerr = int(parts[1]), int(parts[2])
    if nout > MAX_OUTPUT or nerr > MAX_OUTPUT:
        return None
    if parts[0] == DECLINED.encode():
        return None if nout or nerr else (None, 0, 0)
    if not parts[0].isdigit() or len(parts[0]) > 3 or int(parts[0]) > 255:
        return None
    return int(parts[0]), nout, nerr


def exchange(path: str, request: bytes) -> tuple[int, bytes, bytes] | None:
    """Send ``request`` to the server at ``path``; (exit code, stdout, stderr) or None."""
    sock = _connect(path)
    if sock is None:
        return None
    try:
        # the server's greeting comes before anything is sent: a socket that is not a
        # Turnback server of this user learns nothing, and nothing can be done twice
        if not peer_is_same_user(sock):
            return None
        if _read_exactly(sock, len(GREETING)) != GREETING:
            return None
        sock.sendall(request)
        sock.settimeout(IDLE_TIMEOUT_S)
        return _read_answer(sock)
    except OSError:  # refused (stale), timed out, reset: the server is not there
        return None
    finally:
        sock.close()


def _read_answer(sock: _socket.socket) -> tuple[int, bytes, bytes] | None:
    while True:
        b = sock.recv(1)
        if b != KEEPALIVE:
            break
    if b != ANSWER:
        return None
    line = b""
    while not line.endswith(b"\n"):
        c = sock.recv(1)
        if not c or len(line) > 40:
            return None
        line += c
    head = parse_answer_header(line[:-1])
    if head is None:
        return None  # garbage
    code, nout, nerr = head
    if code is None:
        return None  # declined: nothing done
    body = _read_exactly(sock, nout + nerr)
    if body is None:
        return None
    return code, body[:nout], body[nout:]


def _read_exactly(sock: _socket.socket, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n > 0:
        c = sock.recv(min(n, 1 << 20))
        if not c:
            return None
        chunks.append(c)
        n -= len(c)
    return b"".join(chunks)
