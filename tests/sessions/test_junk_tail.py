"""A session file ending in a long run of junk lines (branch junk33): the head read, which
every append makes under the session's lock, looks at ``HEAD_REACH`` lines back from the end,
not at every line back to the last object (4 MB of two-byte lines: 6-7 s of CPU an append).
Past the bound every writer refuses, naming the file; nothing is written or lost, readers
of the whole file still read every event, and fsck says why appends are refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Kind, Store, StoreDamaged
from turnback.fs import jsonl
from turnback.fs.jsonl import HEAD_REACH

JUNK_LINES = 50_000  # far past the bound; cheap enough to parse every one before


@pytest.fixture
def st(ws: Path) -> Iterator[Store]:
    s = Store.open(ws)
    yield s
    s.close()


def _session_with_junk(st: Store, junk: int) -> tuple[Path, str]:
    st.start_session(session_id="s-1")
    last = st.append("s-1", Kind.PROMPT, {"text": "hi"}).id
    path = st.root / "sessions" / "s-1.jsonl"
    with open(path, "ab") as f:
        f.write(b"x\n" * junk)
    return path, last


def _counting_loads() -> tuple[list[int], Any]:
    calls = [0]
    real = jsonl.loads

    def counted(raw: bytes) -> Any:
        calls[0] += 1
        return real(raw)

    return calls, mock.patch.object(jsonl, "loads", counted)


def test_an_append_after_a_long_junk_run_is_refused_after_the_bound(st: Store) -> None:
    path, last = _session_with_junk(st, JUNK_LINES)
    before = path.read_bytes()
    calls, patched = _counting_loads()
    with patched, pytest.raises(StoreDamaged) as err:
        st.append("s-1", Kind.NOTE, {"text": "after"})
    # before: every junk line parsed (50,001 calls) and the event appended after them
    assert calls[0] <= HEAD_REACH
    assert str(path) in err.value.message and "turnback fsck" in err.value.message
    assert path.read_bytes() == before  # nothing written, nothing cut
    log = st.session("s-1")  # a reader of the whole file still has every event
    assert [e.id for e in log.events] == [last] and log.head == last


@pytest.mark.parametrize("write", ["head", "set_head", "update_meta"])
def test_every_head_reader_of_the_session_refuses_alike(st: Store, write: str) -> None:
    path, last = _session_with_junk(st, JUNK_LINES)
    before = path.read_bytes()
    backend = st.backend
    with pytest.raises(StoreDamaged, match="none of its last"):
        if write == "head":
            backend.head("s-1")
        elif write == "set_head":
            backend.set_head("s-1", last)
        else:
            backend.update_meta("s-1", {"title": "t"})
    assert path.read_bytes() == before


def test_a_junk_run_within_the_bound_still_finds_the_head(st: Store) -> None:
    # the bound counts complete lines back from the end; one short of it is looked through
    _path, last = _session_with_junk(st, HEAD_REACH - 1)
    ev = st.append("s-1", Kind.NOTE, {"text": "after"})
    assert ev.parent == last


def test_fsck_says_why_appends_are_refused(st: Store) -> None:
    _session_with_junk(st, HEAD_REACH + 1)
    rep = st.fsck()
    refusals = [d for d in rep.damaged
                if d["id"] == "s-1" and "none of its last" in d["problem"]]
    assert len(refusals) == 1 and "refused" in refusals[0]["recoverable"]
