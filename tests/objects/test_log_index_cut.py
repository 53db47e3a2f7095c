"""A process's first object read takes in at most ``packs.LOG_EAGER`` frames of a log; the
rest only when an object is found nowhere else (trust19). A planted log of one-object
frames (what a writer's invariants allow) was read whole, every row an entry in the index,
by every process's first read: 1.3 s and 165 MiB at 32 MiB (bench/RESULTS.md). A log that
is legitimately long still gives every object it holds, and a merge takes it whole."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.objects.test_planted_log import PLANTED, _counting, _plant, _row

from turnback import Store
from turnback.objects import packs
from turnback.objects.objectstore import LOOSE_THRESHOLD
from turnback.objects.packlog import encode


def test_a_planted_logs_frames_past_the_first_few_are_not_read_by_an_object_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On main the read looked at every one of the 3,000 planted frames (and took each
    row into the index)."""
    monkeypatch.setattr(packs, "LOG_EAGER", 64, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        planted = store.root / "objects" / "log" / PLANTED
    _plant(planted, 3000, lambda n, pos: encode(pos, [b"\0"], _row(n, pos), b""))
    looked = _counting(monkeypatch)
    for _ in range(2):  # each process pays it: a touch changes nothing here
        with Store.open(ws) as store:
            looked.clear()
            assert store.read_file(cp.id, "a.txt") == b"a\n"
            assert len(looked) < 200, len(looked)
            assert len(store.objects.packs.names()) < 200  # the index holds the cut only
        planted.touch()


def test_a_planted_log_is_not_read_whole_by_the_read_of_a_loose_object(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redteam19: an object of ``LOOSE_THRESHOLD`` or more is a loose file, looked for in
    the packs first; that miss read every cut log whole (``read_rest``) before the loose
    file was tried: each process's first read of a large file (a rewind, a diff, ``show``)
    paid a planted log as main did (3,002 frame looks here)."""
    monkeypatch.setattr(packs, "LOG_EAGER", 64, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    big = os.urandom(LOOSE_THRESHOLD + 1)
    (ws / "big.bin").write_bytes(big)
    with Store.open(ws) as store:
        cp = store.checkpoint()
        planted = store.root / "objects" / "log" / PLANTED
    _plant(planted, 3000, lambda n, pos: encode(pos, [b"\0"], _row(n, pos), b""))
    looked = _counting(monkeypatch)
    with Store.open(ws) as store:
        looked.clear()
        assert store.read_file(cp.id, "big.bin") == big
        assert len(looked) < 200, len(looked)


def test_a_long_real_log_gives_every_object_and_a_merge_takes_it_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packs, "LOG_EAGER", 4, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    made = []
    with Store.open(ws) as store:
        for i in range(20):
            (ws / "a.txt").write_text(f"v{i}\n")
            made.append(store.checkpoint())
        (log,) = (store.root / "objects" / "log").iterdir()
    with Store.open(ws) as store:
        # the newest checkpoint's objects lie past the first 4 frames: read all the same
        assert store.read_file(made[-1].id, "a.txt") == b"v19\n"
        assert all(store.read_file(c.id, "a.txt") == f"v{i}\n".encode()
                   for i, c in enumerate(made))
    with Store.open(ws) as store:
        store.objects.packs.refresh()  # a fresh process's look: cut after 4 frames
        assert len(store.objects.packs.names()) < 4 * 3
        assert store.objects.exists(made[-1].tree)  # exact: a rewind or fsck asks this
    with Store.open(ws) as store:
        store.objects.packs.refresh()
        assert store.merge_logs(at_least=0) is not None
        assert not log.exists()
    with Store.open(ws) as store:
        assert all(store.read_file(c.id, "a.txt") == f"v{i}\n".encode()
                   for i, c in enumerate(made))
        assert store.fsck().ok


def test_a_log_cut_at_its_very_end_is_not_read_again_at_every_miss(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redteam19: a log of exactly ``LOG_EAGER`` frames (or one that gained exactly that
    many since the last look) was noted cut, and ``read_rest``, finding nothing past the
    cut, left it noted: every later miss (``exists`` of an absent name: a pull's look-ups)
    listed the folders and opened every log again, and ``refresh`` never read the frames
    its writer (a server) appended later."""
    monkeypatch.setattr(packs, "LOG_EAGER", 4, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    made = []
    with Store.open(ws) as server:  # one process's log, still appended to
        for i in range(4):
            (ws / "a.txt").write_text(f"v{i}\n")
            made.append(server.checkpoint())
        with Store.open(ws) as store:
            reader = store.objects.packs
            reader.refresh()
            assert reader.read_rest()  # cut at 4: the rest looked at once
            assert not store.objects.exists("0" * 64)
            assert not reader.read_rest()  # nothing is cut now: a miss lists nothing
            (ws / "a.txt").write_text("later\n")
            later = server.checkpoint()  # the 5th frame of the same log
            reader.refresh()  # an ordinary look takes it in
            assert reader.locate(later.tree) is not None
            assert all(store.read_file(c.id, "a.txt") == f"v{i}\n".encode()
                       for i, c in enumerate(made))


class _ListingsWithAMergeBetween:
    """``os`` for ``packs.py`` whose pack-folder listing, with ``packs.log_names``, counts
    as one of a refresh's two listings: ``between`` runs before the second, once."""

    def __init__(self, between: Callable[[], object]) -> None:
        self.between: Callable[[], object] | None = between
        self.listings = 0

    def listing(self) -> None:
        self.listings += 1
        if self.listings == 2 and self.between is not None:
            between, self.between = self.between, None
            between()

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def listdir(self, path: str | Path) -> list[str]:
        self.listing()
        return os.listdir(path)


def test_an_object_past_the_cut_is_found_when_another_process_merges_the_log_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redteam19: a read of an object past a log's cut lists the folders again; a merge by
    another process (a hook's: the pack written, then the log removed) that ended between
    the refresh's listing of the packs and its listing of the logs left neither the log
    nor the pack in the index, and ``read_rest`` had nothing cut to read: "object …
    is missing", a stored checkpoint looking lost. Listed logs first, a log gone before
    the pack listing means its pack is there to list."""
    monkeypatch.setattr(packs, "LOG_EAGER", 4, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as server:
        for i in range(8):
            (ws / "a.txt").write_text(f"v{i}\n")
            newest = server.checkpoint()
    with Store.open(ws) as store:
        store.objects.warm(newest.tree)  # the first look: cut at 4 frames, the newest not read
        assert store.objects.packs.locate(newest.tree) is None

        def merge() -> None:
            with Store.open(ws) as hook:
                assert hook.merge_logs(at_least=0) is not None

        fake = _ListingsWithAMergeBetween(merge)
        real_log_names = packs.log_names

        def log_names(folder: Path) -> list[str]:
            fake.listing()
            return real_log_names(folder)

        monkeypatch.setattr(packs, "os", fake)
        monkeypatch.setattr(packs, "log_names", log_names)
        data = store.read_file(newest.id, "a.txt")
        monkeypatch.undo()
        assert fake.between is None  # the merge ran inside the read's refresh
        assert data == b"v7\n"
