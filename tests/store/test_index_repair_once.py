"""A damaged line of ``checkpoints.jsonl`` stays in the file after the repair put back
what the object logs held (the file is append-only), so trust18's repair, remembered only
by the process that made it, ran again in every later process: every open while the line
was among the file's last 64 KiB (a CLI command's open: 1.4 ms became ~90 ms at 10,000
logged checkpoints), every listing and rewind of a CLI while it was anywhere in the file.
A whole repair is now marked in ``cache/index-mended`` (the file's inode and how far it
was read): the damage it covered does not make another; new damage does."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store.test_index_repair import _five

from turnback import Store
from turnback.store import state
from turnback.store.checkpoint_index import TAIL_BYTES
from wsutil import age_tree, write


def _index(ws: Path) -> Path:
    return ws / ".turnback" / "checkpoints.jsonl"


def _zero(ws: Path, cp_id: str) -> None:
    lines = _index(ws).read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if cp_id.encode() in line)
    lines[at] = b"\0" * (len(lines[at]) - 1) + b"\n"
    _index(ws).write_bytes(b"".join(lines))


def _pad_beyond_the_tail(ws: Path) -> None:
    pad = b'{"type":"drop","id":"%026d"}\n'
    with _index(ws).open("ab") as f:
        f.write(b"".join(pad % n for n in range(TAIL_BYTES // len(pad % 0) + 10)))


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry a walk of the object logs, True where every log was read whole."""
    seen: list[bool] = []
    real = state.logged_records

    def spy(folder: Path, missing: object, *, every: bool = False, **kw: object) -> object:
        seen.append(every)
        return real(folder, missing, every=every, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(state, "logged_records", spy)
    return seen


def test_a_damaged_tail_line_mended_once_is_not_mended_at_every_open(
        ws: Path, whole_reads: list[bool]) -> None:
    ids = _five(ws)
    _zero(ws, ids[2])
    whole_reads.clear()
    with Store.open(ws) as store:
        assert store.index.repaired == 1
    assert whole_reads == [True]
    for _ in range(2):  # later processes' opens, the zeroed line still in the tail
        with Store.open(ws) as store:
            assert ids[2] in {c.id for c in store.checkpoints()}
    assert whole_reads == [True, False, False], whole_reads


def test_a_damaged_middle_line_mended_once_is_not_mended_at_every_listing(
        ws: Path, whole_reads: list[bool]) -> None:
    ids = _five(ws)
    _zero(ws, ids[1])
    _pad_beyond_the_tail(ws)
    whole_reads.clear()
    with Store.open(ws) as store:
        assert ids[1] in {c.id for c in store.checkpoints()}
        assert store.index.repaired == 1
    assert whole_reads == [False, True]
    with Store.open(ws) as store:  # another CLI's listing and rewind
        assert ids[1] in {c.id for c in store.checkpoints()}
        store.rewind(ids[1])
        assert (ws / "a.txt").read_text() == "version 1\n"
    assert True not in whole_reads[2:], whole_reads


def test_new_damage_after_a_repair_is_mended_too(ws: Path, whole_reads: list[bool]) -> None:
    ids = _five(ws)
    _zero(ws, ids[1])
    with Store.open(ws) as store:
        assert store.index.repaired == 1
    with Store.open(ws) as store:
        later = []
        for i in range(3):
            write(ws, "a.txt", f"later {i}\n")
            age_tree(ws)
            later.append(store.checkpoint(label=f"w{i}").id)
    _zero(ws, later[1])  # lost after the mark: a repair again
    with Store.open(ws) as store:
        assert store.index.repaired == 1
        assert later[1] in {c.id for c in store.checkpoints()}


def test_a_planted_mark_leaves_the_merge_and_gc_reading_every_log(ws: Path) -> None:
    """The mark is input: one claiming the whole file mended stops only the open's and the
    listing's repair (trust18's state before); a merge still reads every log before it
    removes them, so the record is not lost."""
    ids = _five(ws)
    _zero(ws, ids[1])
    _pad_beyond_the_tail(ws)
    st = _index(ws).stat()
    (ws / ".turnback" / "cache").mkdir(exist_ok=True)
    (ws / ".turnback" / "cache" / "index-mended").write_text(f"{st.st_ino} {1 << 60} {1 << 60}\n")
    with Store.open(ws) as store:
        assert store.merge_logs(at_least=0) is not None
    with Store.open(ws) as store:
        assert ids[1] in {c.id for c in store.checkpoints()}


def test_new_damage_seen_by_the_process_that_repaired_is_mended_too(ws: Path) -> None:
    """A server: its listing repairs, then a later line is lost, then it lists again."""
    ids = _five(ws)
    _zero(ws, ids[1])
    _pad_beyond_the_tail(ws)
    with Store.open(ws) as store:
        assert ids[1] in {c.id for c in store.checkpoints()}
        write(ws, "a.txt", "later\n")
        age_tree(ws)
        later = store.checkpoint(label="later").id
        _pad_beyond_the_tail(ws)  # the lost line far from the end: only a listing sees it
        _zero(ws, later)
        assert later in {c.id for c in store.checkpoints()}
        assert store.index.repaired == 2
