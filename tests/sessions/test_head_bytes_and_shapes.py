"""The head read from a session file's end (branch junk35): bounded in bytes as well as
lines, and naming the same head as a full ``load`` whatever junk follows the last event."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

from turnback import Kind, Store, StoreDamaged
from turnback.fs import jsonl


@pytest.fixture
def st(ws: Path) -> Iterator[Store]:
    s = Store.open(ws)
    yield s
    s.close()


def _session(st: Store) -> tuple[Path, str]:
    st.start_session(session_id="s-1")
    last = st.append("s-1", Kind.PROMPT, {"text": "hi"}).id
    return st.root / "sessions" / "s-1.jsonl", last


def test_the_head_bound_counts_bytes_too(st: Store) -> None:
    """100 junk lines of 1 KiB (far fewer than ``HEAD_REACH``) past a byte bound of 16 KiB:
    refused, naming the file, after reading no more than the bound. Before, every line was
    read and parsed and the event appended after them."""
    path, last = _session(st)
    with open(path, "ab") as f:
        f.write((b"[" + b"0," * 511 + b"0]\n") * 100)
    before = path.read_bytes()
    read = [0]
    real = jsonl.os.pread

    def counted(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        read[0] += len(data)
        return data

    with mock.patch.object(jsonl, "HEAD_BYTES", 16 << 10, create=True), \
            mock.patch.object(jsonl.os, "pread", counted), \
            pytest.raises(StoreDamaged, match="bytes") as err:
        st.append("s-1", Kind.NOTE, {"text": "after"})
    assert str(path) in err.value.message
    assert read[0] <= (16 << 10) + jsonl.TAIL_FIRST  # the torn-tail look and the bound
    assert path.read_bytes() == before
    assert st.session("s-1").head == last


def test_a_long_last_event_within_the_byte_bound_is_found(st: Store) -> None:
    path, _ = _session(st)
    long_one = st.append("s-1", Kind.NOTE, {"text": "x" * (40 << 10)}).id
    with open(path, "ab") as f:
        f.write(b"[]\n" * 10)
    with mock.patch.object(jsonl, "HEAD_BYTES", 64 << 10):
        ev = st.append("s-1", Kind.NOTE, {"text": "after"})
    assert ev.parent == long_one


def test_the_real_byte_bound_holds_the_longest_line_read() -> None:
    assert jsonl.HEAD_BYTES > jsonl.MAX_LINE  # a last event as long as any read is found


SHAPES = {
    "empty-object": b"{}\n",
    "object-without-fields": b'{"x": 1}\n',
    "id-not-a-string": b'{"id": 5, "session": "s-1", "ts": "t", "kind": "note"}\n',
    "a-second-header": b'{"type": "session", "id": "s-1", "head": "zzz"}\n',
    "meta-without-head": b'{"type": "meta", "title": "t"}\n',
    "unknown-type": b'{"type": "other", "head": "zzz"}\n',
    "array": b"[1, 2]\n",
    "string": b'"x"\n',
    "number": b"12345\n",
    "crlf-object": b"{}\r\n",
    "crlf-blank": b"\r\n",
    "no-final-newline": b"{}\n" + b'{"x": 1}',
}


@pytest.mark.parametrize("junk", SHAPES.values(), ids=SHAPES.keys())
def test_the_head_read_and_load_agree_after_junk(st: Store, junk: bytes) -> None:
    """Before, an object that is no event (``{}``) was taken as the last line: the head
    read said None (the next event a root) while ``load`` kept the event before it."""
    path, last = _session(st)
    with open(path, "ab") as f:
        f.write(junk * 3 if junk.endswith(b"\n") else junk)
    assert st.session("s-1").head == last
    assert st.backend.head("s-1") == last
    ev = st.append("s-1", Kind.NOTE, {"text": "after"})
    assert ev.parent == last
    log = st.session("s-1")
    assert log.head == ev.id and [e.id for e in log.events][-2:] == [last, ev.id]
