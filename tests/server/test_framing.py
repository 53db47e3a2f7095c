"""What a server answers to bytes that are not a well-formed JSON-RPC request (framing.py).

JSON-RPC 2.0: a body that is not JSON gets -32700, JSON that is not a request object
-32600, both with ``"id": null``. pygls's loop answered neither (the client waited for
ever), read a `Content-Length` of 10^12 as a promise to buffer, and bounded a line only
when stdin was a pipe. Each test drives a real server process over its stdin.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback.server.transport.framing import MAX_BODY

from .conftest import SERVER_CMD
from .rawio import RawServer, frame, request

PARSE, INVALID = -32700, -32600
MB = 2**20


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawServer]:
    server = RawServer(tmp_path)
    yield server
    server.close()
    assert "Traceback" not in server.stderr()


NOT_JSON = {
    "truncated": b'{"id": 1,]',
    "not-utf8": b'{"x": "\xff\xfe"}',
    "nested-past-the-parser": b"[" * 100_000 + b"]" * 100_000,
    "5000-digit-int": b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"n": '
                      + b"9" * 5000 + b"}}",
    "empty": b"",
}


@pytest.mark.parametrize("body", NOT_JSON.values(), ids=NOT_JSON.keys())
def test_a_body_that_is_not_json_is_answered_parse_error(raw: RawServer, body: bytes) -> None:
    """No reply before (the client waited for ever): now -32700 with id null, logged once,
    and the next request is answered."""
    raw.send(frame(body))
    answer = raw.expect(code=PARSE)
    assert answer["id"] is None and answer["jsonrpc"] == "2.0"
    assert "not JSON" in answer["error"]["message"]
    raw.answers(2)
    assert raw.stderr().count("refused a message") == 1


NOT_A_REQUEST = {
    "number": (b"5", None),
    "string": (b'"x"', None),
    "null": (b"null", None),
    "object-without-method": (b'{"jsonrpc": "2.0", "params": {}}', None),
    "id-without-method-or-result": (b'{"jsonrpc": "2.0", "id": 3}', 3),
    "empty-array": (b"[]", None),
    "method-not-a-string": (b'{"jsonrpc": "2.0", "id": 4, "method": 5}', 4),
    "id-an-array": (b'{"jsonrpc": "2.0", "id": [1], "method": "turnback/status"}', None),
    "id-an-object": (b'{"jsonrpc": "2.0", "id": {}, "method": "turnback/status"}', None),
    "id-a-bool": (b'{"jsonrpc": "2.0", "id": true, "method": "turnback/status"}', None),
    # read as infinity, then answered as "id": Infinity, which is not JSON
    "id-past-a-float": (b'{"jsonrpc": "2.0", "id": 1e400, "method": "turnback/status"}', None),
    "jsonrpc-1.0": (b'{"jsonrpc": "1.0", "id": 5, "method": "turnback/status"}', 5),
    "no-jsonrpc": (b'{"id": 6, "method": "turnback/status"}', 6),
}


@pytest.mark.parametrize("body,msg_id", NOT_A_REQUEST.values(), ids=NOT_A_REQUEST.keys())
def test_json_that_is_not_a_request_is_answered_invalid_request(
    raw: RawServer, body: bytes, msg_id: int | None
) -> None:
    """-32600, with the message's id where it had a usable one (JSON-RPC: null when it
    could not be read); the server answers on."""
    raw.send(frame(body))
    answer = raw.expect(code=INVALID)
    assert answer["id"] == msg_id
    raw.answers(2)


def test_a_batch_is_refused_whole(raw: RawServer) -> None:
    """LSP has no batches: one -32600 naming them, and none of the batch's requests run."""
    batch = [json.loads(request(i, "shutdown").split(b"\r\n\r\n", 1)[1]) for i in (7, 8)]
    raw.send(frame(json.dumps(batch).encode()))
    answer = raw.expect(code=INVALID)
    assert answer["id"] is None and "batch" in answer["error"]["message"]
    raw.answers(2)  # not shut down: the batch's `shutdown` was not run
    assert not any(m.get("id") in (7, 8) for m in raw.seen)


def test_params_that_do_not_fit_an_lsp_type_are_answered_with_the_id(tmp_path: Path) -> None:
    """pygls's converter refusing a typed method's params dropped the request unanswered.
    (pygls logs the converter's traceback itself: no ``raw`` fixture, which forbids one.)"""
    raw = RawServer(tmp_path)
    try:
        raw.send(frame(b'{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": 5}'))
        assert raw.expect(id=9)["error"]["code"] == -32602
        raw.answers(2)
    finally:
        raw.close()


BAD_LENGTHS = {
    "negative": b"Content-Length: -5\r\n\r\n{}",
    "not-a-number": b"Content-Length: ten\r\n\r\n{}",
    "past-20-digits": b"Content-Length: " + b"9" * 30 + b"\r\n\r\n{}",
    "duplicated": b"Content-Length: 2\r\nContent-Length: 7\r\n\r\n{}",
    "duplicated-same": b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
    "missing": b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
    "not-a-header-line": b"Content-Length: 2\r\nnot a header\r\n\r\n{}",
}


@pytest.mark.parametrize("junk", BAD_LENGTHS.values(), ids=BAD_LENGTHS.keys())
def test_a_frame_without_a_usable_length_is_answered_and_the_next_is_read(
    raw: RawServer, junk: bytes
) -> None:
    """-32700 at the headers; its body is dropped up to the next ``Content-Length`` line,
    so the request right after it (no blank line between: clients send none) is answered.
    Before: no answer, and the next request was swallowed too."""
    raw.send(junk + request(2))
    assert raw.expect(code=PARSE)["id"] is None
    raw.expect(id=2)
    raw.answers(3)


def test_a_body_longer_than_its_length_costs_only_itself(raw: RawServer) -> None:
    raw.send(b"Content-Length: 2\r\n\r\n{}garbage" + request(2))
    assert raw.expect(code=INVALID)["id"] is None  # `{}`
    raw.expect(id=2)


def test_a_length_past_the_bound_is_refused_at_once_and_skipped_in_bounded_memory(
    raw: RawServer,
) -> None:
    """Before: the server waited for the whole body, buffering it (a 10^12 length: for
    ever, holding all that came), then dropped it unanswered. Now -32600 before any of the
    body is sent, the body read and dropped a MB at a time, the next request answered."""
    raw.answers(1)
    n = MAX_BODY + 16 * MB
    before = raw.peak_kb()
    raw.send(b"Content-Length: %d\r\n\r\n" % n)
    answer = raw.expect(code=INVALID)
    assert answer["id"] is None and str(n) in answer["error"]["message"]
    chunk = b"x" * MB
    for _ in range(n // MB):
        raw.send(chunk)
    raw.answers(2)
    grown_mb = (raw.peak_kb() - before) / 1024
    assert grown_mb < 48, f"the server's peak memory grew {grown_mb:.0f} MB over an {n} byte body"


def test_a_length_of_a_terabyte_is_refused_at_the_header(raw: RawServer) -> None:
    raw.answers(1)
    before = raw.peak_kb()
    raw.send(b"Content-Length: 1000000000000\r\n\r\n")
    assert raw.expect(code=INVALID)["id"] is None
    for _ in range(128):  # what it reads meanwhile is dropped, not held
        raw.send(b"y" * MB)
    raw.send(b"\r\n")
    assert raw.proc.poll() is None
    # the 128 MB were read: a request sent after them waits on the skip, which the
    # server's own answers cannot show; its memory can
    grown_mb = (raw.peak_kb() - before) / 1024
    assert grown_mb < 48, f"the server's peak memory grew {grown_mb:.0f} MB"


def test_a_stdin_that_is_a_file_holds_the_line_bound(tmp_path: Path) -> None:
    """pygls's thread reader (a file, a terminal, Windows' stdin) read a line whole: 512 MB
    of one line held 512 MB. Now it is dropped past 16 MB on every kind of stdin."""
    line = 512 * MB
    path = tmp_path / "stdin"
    with path.open("wb") as f:
        f.truncate(line)  # sparse: zeros, no newline
        f.seek(line)
        f.write(b"\r\n" + frame(b"not json") + request(2))
    with path.open("rb") as stdin:
        # the server started by a small launcher that tells its peak: a child's ru_maxrss
        # counts its parent's resident size at the fork, and pytest's grows past the
        # bound over a whole run
        server = RawServer(tmp_path, stdin=stdin, cmd=[sys.executable, "-c", _PEAK, *SERVER_CMD])
        try:
            assert server.expect(code=PARSE)["id"] is None  # read past the line
            server.proc.wait(60)  # the file's end ends it
        finally:
            server.close()
    told = re.findall(r"^peak-kb (\d+)$", server.stderr(), re.M)
    assert told, server.stderr()[-2000:]
    assert int(told[-1]) < 256 * 1024, f"peak {told[-1]} kB"
    assert "Traceback" not in server.stderr()


# runs argv[1:] as its child, waits, prints the child's peak resident memory (kB)
_PEAK = ("import os, subprocess, sys\n"
         "p = subprocess.Popen(sys.argv[1:])\n"
         "_, status, usage = os.wait4(p.pid, 0)\n"
         "print(f'peak-kb {usage.ru_maxrss}', file=sys.stderr, flush=True)\n"
         "sys.exit(os.waitstatus_to_exitcode(status))\n")


def test_a_stdin_that_is_a_socket_holds_the_line_bound(tmp_path: Path) -> None:
    import socket

    ours, theirs = socket.socketpair()
    with ours, theirs:
        server = RawServer(tmp_path, stdin=theirs.fileno())
        try:
            theirs.close()
            ours.sendall(b"z" * (40 * MB) + b"\r\n" + request(2))
            server.expect(id=2)
            assert server.peak_kb() < 256 * 1024
            ours.sendall(request(3, "shutdown") + frame(b'{"jsonrpc":"2.0","method":"exit"}'))
            server.expect(id=3)
            assert server.proc.wait(20) == 0
        finally:
            server.close()
    assert "Traceback" not in server.stderr()




def test_a_header_line_with_long_runs_of_blanks_costs_linear_time(raw: RawServer) -> None:
    """The header pattern's ``(.*?)[ \\t]*\\r?\\n\\Z`` backtracked over every run of blanks
    in a value from each of its bytes: 40 KB of spaces held the event loop 42 s, a 16 MB
    line (the line bound) for days, every request unanswered. Now split at its colon."""
    raw.answers(1)
    raw.send(b"X-Junk: a" + b" " * (100 * 1024) + b"b\r\n" + b"Content-Length: 2\r\n\r\n{}")
    assert raw.expect(code=INVALID, timeout=20)["id"] is None
    raw.answers(2)


def test_repeated_content_length_headers_are_not_held(raw: RawServer) -> None:
    """Each ``Content-Length`` line of a frame was kept until its blank line: a client that
    never sends it grew the server by every byte it sent (96 MB: +95 MB). Now the first
    is kept, the others counted."""
    raw.answers(1)
    before = raw.peak_kb()
    line = b"Content-Length: " + b"7" * (64 * 1024) + b"\r\n"
    for _ in range(96):  # 96 MB of headers, no blank line
        raw.send(line * 16)
    raw.send(b"\r\n{}")
    answer = raw.expect(code=PARSE)
    assert "given 1536 times" in answer["error"]["message"]
    raw.answers(2)
    grown_mb = (raw.peak_kb() - before) / 1024
    assert grown_mb < 48, f"the server's peak memory grew {grown_mb:.0f} MB"


def test_exit_without_shutdown_exits_1(raw: RawServer) -> None:
    """LSP: ``exit`` without ``shutdown`` before it ends the server with code 1, so the
    editor can tell a crash-like stop from an orderly one. pygls raises SystemExit(1); the
    stdio loop swallowed it and the process ended 0."""
    raw.answers(1)
    raw.send(frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
    assert raw.proc.wait(20) == 1


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal (POSIX)")
def test_a_terminal_hung_up_ends_the_server_as_stdin_ending_does(tmp_path: Path) -> None:
    """A terminal's read fails (EIO) once its other end is closed: the thread reader let
    that OSError out of the loop, a traceback and exit code 1 where a pipe's end is a
    clean stop. Now a stdin that fails to read is a stdin that ended."""
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    server = RawServer(tmp_path, stdin=slave)
    try:
        os.close(slave)
        os.write(master, request(1))
        server.expect(id=1)
        os.close(master)
        assert server.proc.wait(20) == 0
    finally:
        server.close()
    assert "Traceback" not in server.stderr()


def _body(msg_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "turnback/status",
                       "params": {}}).encode()


def test_every_framing_a_real_client_writes_is_read(raw: RawServer) -> None:
    """What clients write, each answered: Content-Type before or after the length, LF-only
    lines, several messages in one write, one message over many writes (one byte each, and
    cut at the header's end and mid-body). A guard on the reader that replaced pygls's."""
    typ = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    b1, b2, b3, b4 = (_body(i) for i in (1, 2, 3, 4))
    raw.send(b"Content-Length: %d\r\n" % len(b1) + typ + b"\r\n" + b1)
    raw.expect(id=1)
    raw.send(typ + b"Content-Length: %d\r\n\r\n" % len(b2) + b2)
    raw.expect(id=2)
    raw.send(b"Content-Length: %d\n\n" % len(b3) + b3)  # LF only
    raw.expect(id=3)
    raw.send(b"content-length:%d\r\n\r\n" % len(b4) + b4)  # any case, no blank
    raw.expect(id=4)
    raw.send(b"".join(request(i) for i in range(10, 30)))  # twenty in one write
    for i in range(10, 30):
        raw.expect(id=i)
    whole = request(40)
    for cut in (whole.index(b"\r\n\r\n") + 4, len(whole) - 1):
        raw.send(whole[:cut])
        raw.send(whole[cut:])
        raw.expect(id=40)
    for byte in request(41):
        raw.send(bytes([byte]))
    raw.expect(id=41)
