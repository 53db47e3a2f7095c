"""A rewind killed at each of its file-system mutations in turn, torn and whole: since
format 3 its journal is written in place, into a file that stays between rewinds, and
emptied when the rewind ends. Every boundary must leave, after the next open, the workspace
as before or as the target, no journal pending, and an undo that brings back the state
before. (``test_crash.py`` kills at random points of random workspaces; this walks every
point of one, on a store whose journal file already exists.)

Also what a power cut may leave and a kill cannot: the journal on disk without the safety
checkpoint's record it was synced with (no file touched: it is emptied), and the same with a
file already written (refused, named, nothing applied). A small safety checkpoint's record is
in its object log frame, synced with the journal, and is put back from there when the frame
was kept (``test_powercut_safety_frame.py`` cuts the frame and the journal each way)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Store
from turnback.objects import packs
from turnback.rewind.apply import Applier, Changed
from wsutil import journal_left, picture, second_names, write

from . import crashkit
from .crashkit import Ack, run_child
from .wsgen import tracked

FILES = {"a.txt": "one\n", "src/b.py": "print(1)\n", "src/c/d.md": "# d\n", "e.bin": "\0\1"}


def _prepared(ws: Path) -> tuple[str, dict[str, bytes], dict[str, bytes]]:
    """A store that has rewound and undone once (its journal file exists, emptied), a
    checkpoint ``A`` and a workspace edited since: (A's id, A's picture, the picture now)."""
    for rel, text in FILES.items():
        write(ws, rel, text)
    os.symlink("a.txt", ws / "ln")  # a link the rewind writes back: its temporary is a link
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint(label="A")
        a = picture(ws)
        write(ws, "a.txt", "two\n")
        (ws / "ln").unlink()
        os.symlink("src/b.py", ws / "ln")
        write(ws, "src/new.txt", "made after A\n")
        (ws / "e.bin").unlink()
        store.rewind(cp.id)
        store.undo()
        write(ws, "src/b.py", "print(2)\n")
        assert store.oplog.journal.exists() and not journal_left(store.root)
    return cp.id, a, picture(ws)


def _rewind(ws: Path, cp: str) -> Callable[[Ack], None]:
    def run(ack: Ack) -> None:
        with Store.open(ws) as store:
            store.rewind(cp)
        ack("rewound")
    return run


def test_a_rewind_killed_at_every_step(tmp_path: Path) -> None:
    cp, a, b = _prepared(tmp_path / "count" / "ws")
    out = run_child(_rewind(tmp_path / "count" / "ws", cp))
    assert out.error is None, out.error
    steps = out.steps
    assert steps and steps > 10, out
    seen = {"target": 0, "before": 0}
    for k in range(1, steps + 1):
        for seed in (0, 1):  # a kill at a write: whole (seed 0), torn (seed 1)
            ws = tmp_path / f"k{k}-{seed}" / "ws"
            cp, a, b = _prepared(ws)
            out = run_child(_rewind(ws, cp), kill_at=k, seed=seed)
            assert out.error is None, f"step {k}: {out.error}"
            with Store.open(ws) as store:  # finishes or leaves an interrupted rewind
                assert not journal_left(store.root), f"step {k}: the journal was left"
                assert store.journal_problem is None, f"step {k}: {store.journal_problem}"
                now = picture(ws)
                if now == b:
                    where = "before"
                else:
                    assert tracked(now) == tracked(a), (
                        f"step {k} (seed {seed}): neither the target nor the state before")
                    where = "target"
                    store.undo()
                    assert picture(ws) == b, f"step {k}: the undo is not byte-exact"
                if out.acks:
                    assert where == "target", f"step {k}: an acknowledged rewind is not in place"
                # the killed rewind's temporary and second names, of a pid now gone: removed
                assert not second_names(ws), f"step {k}: {second_names(ws)}"
                assert store.fsck().ok, f"step {k}: {store.fsck().damaged}"
            seen[where] += 1
    assert seen["target"] and seen["before"], seen


def _begun_then_cut(ws: Path, write_one: bool, logged: bool = False
                    ) -> tuple[Store, dict[str, bytes]]:
    """A rewind stopped right after its journal was synced (a power cut there), with
    ``checkpoints.jsonl`` put back to what it held before the safety record: the record
    lost, the journal kept, as a cut between their writebacks could leave them. The safety
    checkpoint goes to a pack, as a large one does, unless ``logged``."""
    cp, _a, b = _prepared(ws)
    if not logged:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(packs, "LOG_BYTES", 0)
            return _cut(ws, cp, write_one), b
    return _cut(ws, cp, write_one), b


def _cut(ws: Path, cp: str, write_one: bool) -> Store:
    store = Store.open(ws)
    index = store.index.path.read_bytes()
    stop_before_apply(store, ws, cp, write_one)
    assert journal_left(store.root)
    store.index.path.write_bytes(index)
    return store


def stop_before_apply(store: Store, ws: Path, cp: str, write_one: bool) -> None:
    """``store``'s rewind to ``cp`` stopped as its files were about to change (its journal
    synced), having written ``a.txt`` first when ``write_one``."""
    def cut(self: Applier, plan: object, **_kw: object) -> list[str]:
        if write_one:
            (ws / "a.txt").write_text("one\n")  # what the rewind writes there
        raise KeyboardInterrupt  # the process stops here

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Applier, "apply", cut)
        with pytest.raises(KeyboardInterrupt):
            store.rewind(cp)


def test_a_journal_whose_safety_record_was_lost_before_any_file_changed_is_emptied(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _store, b = _begun_then_cut(ws, write_one=False)
    with Store.open(ws) as again:
        assert again.journal_problem is None
        assert not journal_left(again.root)
        assert picture(ws) == b
        assert again.log()[-1]["op"] == "undo"  # the cut rewind was never recorded
        # and the user is told so (trust38)
        assert [n.kind for n in again.notices()] == ["rewind"]
        assert "nothing was recorded" in again.notices()[0].message
        assert again.fsck().ok, again.fsck().damaged


def test_a_small_safety_record_lost_from_the_index_is_put_back_and_the_journal_emptied(
        tmp_path: Path) -> None:
    """The log frame holding the safety checkpoint was synced before the journal: the
    record comes back from it at the next open. No file was touched, so the rewind is not
    applied (trust37: it was carried to its target, as a refusal killed before its
    journal's retraction was): the workspace as it was, the safety checkpoint listed."""
    ws = tmp_path / "ws"
    _store, b = _begun_then_cut(ws, write_one=False, logged=True)
    with Store.open(ws) as again:
        assert again.journal_problem is None
        assert not journal_left(again.root)
        assert picture(ws) == b and again.log()[-1]["op"] == "undo"
        assert again.checkpoints()[-1].safety_of is not None  # put back from its frame
        assert [n.kind for n in again.notices()] == ["rewind"]  # told (trust38)
        assert again.fsck().ok, again.fsck().damaged


def test_a_journal_whose_safety_record_was_lost_after_a_file_changed_is_refused(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _store, _b = _begun_then_cut(ws, write_one=True)
    with Store.open(ws) as again:
        assert again.journal_problem is not None
        assert "safety checkpoint" in again.journal_problem
        assert journal_left(again.root)
        assert (ws / "a.txt").read_text() == "one\n"  # nothing applied, nothing undone


def test_a_journal_hard_linked_to_a_workspace_file_is_replaced_not_written_through(
        tmp_path: Path) -> None:
    """Written in place, the journal would change every other name of its file."""
    ws = tmp_path / "ws"
    cp, _a, _b = _prepared(ws)
    with Store.open(ws) as store:
        write(ws, "notes.txt", "the user's notes\n")
        store.oplog.journal.unlink()
        os.link(ws / "notes.txt", store.oplog.journal)
        store.rewind(cp, paths=["a.txt"])
        assert (ws / "notes.txt").read_text() == "the user's notes\n"
        assert os.stat(store.oplog.journal).st_nlink == 1
        assert not journal_left(store.root)


def test_a_rewind_never_overwrites_a_journal_left_pending(tmp_path: Path) -> None:
    """Another process's rewind interrupted after this store was opened: its journal is
    not overwritten by the next rewind, which is refused with what to do."""
    ws = tmp_path / "ws"
    cp, _a, _b = _prepared(ws)
    with Store.open(ws) as store:
        left = store.oplog.journal
        left.write_bytes(b'{"id": "0123456789abcdef"}\n')
        with pytest.raises(Exception, match="another process left unfinished"):
            store.rewind(cp)
        assert left.read_bytes() == b'{"id": "0123456789abcdef"}\n'


LATE = b"z3, written through a descriptor held open, late\n"


def _late_prepared(ws: Path) -> str:
    write(ws, "a.txt", "one\n")
    write(ws, "z.txt", "z1\n")
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint(label="A")
    write(ws, "a.txt", "two\n")
    write(ws, "z.txt", "z2\n")
    return cp.id


def _rewind_with_a_late_write(ws: Path, cp: str, fd: int) -> Callable[[Ack], None]:
    """The rewind, with a write into z.txt (through ``fd``, held open since before it)
    landing right before z.txt's replacement; acknowledged "late" once written."""
    def run(ack: Ack) -> None:
        real = Applier._keep_replaced

        def late(self: Applier, dfd: object, name: str, *rest: str) -> str | None:
            if name == "z.txt":
                os.lseek(fd, 0, os.SEEK_SET)
                crashkit._REAL_WRITE(fd, LATE)  # not a step: the kill lands around it
                ack("late")
            return real(self, dfd, name, *rest)  # type: ignore[arg-type]

        Applier._keep_replaced = late  # type: ignore[method-assign]
        with Store.open(ws) as store:
            try:
                store.rewind(cp)
            except Changed:
                ack("changed")
    return run


def test_a_write_before_a_replacement_is_kept_wherever_the_rewind_is_killed(
        tmp_path: Path) -> None:
    """A write landing after the safety scan and before z.txt's rename is in z.txt after
    the next open, wherever the rewind was killed: before the rename (it went into z.txt),
    between the rename and the look at the replaced file (its second name holds it, and
    the open puts it back: ``Applier.restore_late``), or after (the rewind put it back)."""
    def once(ws: Path, kill_at: int | None) -> crashkit.Outcome:
        cp = _late_prepared(ws)
        fd = os.open(ws / "z.txt", os.O_WRONLY)
        try:
            return run_child(_rewind_with_a_late_write(ws, cp, fd), kill_at=kill_at)
        finally:
            os.close(fd)

    out = once(tmp_path / "count" / "ws", None)
    assert out.error is None, out.error
    assert "late" in out.acks and "changed" in out.acks, out
    steps = out.steps
    assert steps and steps > 10, out
    late_seen = 0
    for k in range(1, steps + 1):
        ws = tmp_path / f"k{k}" / "ws"
        out = once(ws, k)
        assert out.error is None, f"step {k}: {out.error}"
        with Store.open(ws) as store:
            assert store.journal_problem is None, f"step {k}: {store.journal_problem}"
            assert not journal_left(store.root), f"step {k}: the journal was left"
            if "late" in out.acks:
                late_seen += 1
                assert (ws / "z.txt").read_bytes() == LATE, f"step {k}: the late write was lost"
            assert store.fsck().ok, f"step {k}: {store.fsck().damaged}"
            assert not [n for n in os.listdir(ws) if n.startswith(".turnback-tmp-")], k
    assert late_seen > 2
