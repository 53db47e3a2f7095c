"""The listing a store gives before counting: each session's first line read alone.

A store that was never listed (no ``index/``) answers the server's first
``turnback/sessions`` from its session files' header lines when counting would read more
than a few megabytes (``Store.bytes_to_count``; ``Store.sessions_at_hand``). Every file
read here is input: links, FIFOs, huge or garbage first lines.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from turnback import Kind, Store
from turnback.fs.folders import open_root
from turnback.fs.reading import open_regular
from turnback.sessions import ahead as ahead_mod
from turnback.sessions import files as files_mod
from turnback.sessions import headers as headers_mod
from turnback.sessions.files import FileSessions
from turnback.sessions.headers import (
    FIRST_READ,
    MAX_HEADER,
    TAIL,
    HeaderRead,
    read_headers,
)


def _session(store: Store, sid: str, started: str, prompts: int = 1) -> None:
    store.start_session(title=f"run {sid}", agent="codex", session_id=sid, started=started)
    for _ in range(prompts):
        store.append(sid, Kind.PROMPT, {"text": "x"})


def _header(sid: str, title: str = "t") -> bytes:
    return orjson.dumps({"type": "session", "format": 1, "id": sid, "title": title,
                         "agent": "aider", "started": "2026-03-01T00:00:00.000Z",
                         "head": None}) + b"\n"


def test_bytes_to_count_is_every_byte_unlisted_then_only_what_grew(store: Store) -> None:
    _session(store, "s0", "2026-01-01T00:00:00.000Z")
    _session(store, "s1", "2026-01-02T00:00:00.000Z")
    sizes = {p.name: p.stat().st_size for p in (store.root / "sessions").iterdir()}
    assert store.bytes_to_count() == sum(sizes.values())
    store.sessions()  # counted: the index knows both files
    assert store.bytes_to_count() == 0
    before = (store.root / "sessions" / "s0.jsonl").stat().st_size
    store.append("s0", Kind.PROMPT, {"text": "more"})
    grown = (store.root / "sessions" / "s0.jsonl").stat().st_size - before
    assert store.bytes_to_count() == grown


def test_a_never_listed_store_gives_headers_newest_first_and_counts_nothing(
        store: Store) -> None:
    _session(store, "old", "2026-01-01T00:00:00.000Z", prompts=3)
    _session(store, "new", "2026-01-02T00:00:00.000Z")
    shutil.rmtree(store.root / "index")
    with Store.open(store.workspace) as fresh:  # a process that never listed this store
        got = fresh.sessions_at_hand()
        assert [s.header.id for s in got] == ["new", "old"]
        assert [s.header.title for s in got] == ["run new", "run old"]
        assert all(not s.counted for s in got)
        shown = got[1].to_json()
        assert shown["events"] is None and shown["stats"] is None and shown["counted"] is False
        assert shown["startedAt"] == "2026-01-01T00:00:00.000Z"
        assert fresh.bytes_to_count() > 0  # nothing was counted (nor written to index/)
        assert not (fresh.root / "index" / "summaries.json").exists()


def test_the_sessions_named_exact_are_counted_and_the_counted_ones_kept(store: Store) -> None:
    """What this server wrote shows as written (read-your-writes); what the full listing
    behind the answer counted already shows counted."""
    for i in range(3):
        _session(store, f"s{i}", f"2026-01-0{i + 1}T00:00:00.000Z", prompts=i + 1)
    shutil.rmtree(store.root / "index")
    with Store.open(store.workspace) as fresh:
        fresh.session_summary("s0")  # as the full listing does, one session at a time
        got = {s.header.id: s for s in fresh.sessions_at_hand({"s2", "gone", "../x"})}
        assert sorted(got) == ["s0", "s1", "s2"]
        assert got["s0"].counted and got["s0"].stats["prompts"] == 1
        assert got["s2"].counted and got["s2"].stats["prompts"] == 3
        assert not got["s1"].counted
        backend = fresh.backend
        assert isinstance(backend, FileSessions) and backend._headers  # kept between asks
        fresh.sessions()  # the full listing: every session counted
        assert backend._headers == {}  # 8.4 MB for 10,000 sessions, not kept for nothing


def test_hostile_session_files_are_left_out_without_blocking(store: Store, tmp_path: Path
                                                             ) -> None:
    _session(store, "good", "2026-01-01T00:00:00.000Z")
    sessions = store.root / "sessions"
    shutil.rmtree(store.root / "index")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(_header("linked"))
    (sessions / "linked.jsonl").symlink_to(outside)
    os.mkfifo(sessions / "fifo.jsonl")  # opened for reading, a FIFO would block
    (sessions / "huge.jsonl").write_bytes(
        _header("huge", "x" * MAX_HEADER))  # a first line past the bound
    (sessions / "garbage.jsonl").write_bytes(b"\x00\xff not json\n")
    (sessions / "event.jsonl").write_bytes(b'{"id": "e", "kind": "prompt"}\n')
    (sessions / "list.jsonl").write_bytes(b"[1, 2]\n")
    (sessions / "torn.jsonl").write_bytes(_header("torn")[:-1])  # no whole line yet
    (sessions / "empty.jsonl").write_bytes(b"")
    (sessions / "folder.jsonl").mkdir()
    (sessions / "no id!.jsonl").write_bytes(_header("x"))
    long_ok = _header("long", "y" * (3 * FIRST_READ))  # longer than one read, under the bound
    (sessions / "long.jsonl").write_bytes(long_ok)
    with Store.open(store.workspace) as fresh:
        got = {s.header.id: s for s in fresh.sessions_at_hand()}
        assert sorted(got) == ["good", "long"]
        assert got["long"].header.title == "y" * (3 * FIRST_READ)
        assert fresh.bytes_to_count() > 0


def test_read_headers_reads_the_first_line_only(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(_header("s", "first") + _header("s", "second"))
    with open_root(str(tmp_path)) as folder:
        got = read_headers(["s.jsonl", "missing.jsonl"], folder)
    assert got[0] is not None and got[0].header is not None
    assert got[0].header.title == "first" and got[0].ino == p.stat().st_ino
    assert got[1] is None


def test_a_file_whose_header_names_another_session_is_listed_by_neither_listing(
        store: Store) -> None:
    """The store names every file by its header's id: ``a1.jsonl`` saying it is ``real``
    (or ``../x``) is planted. Listed, it showed as a second ``real`` under the planter's
    title, in the partial answer and in the full listing alike (red team, redteam6)."""
    _session(store, "real", "2026-01-01T00:00:00.000Z")
    shutil.rmtree(store.root / "index")
    folder = store.root / "sessions"
    (folder / "a1.jsonl").write_bytes(_header("real", "planted"))
    (folder / "a2.jsonl").write_bytes(_header("../../etc/passwd"))
    (folder / "a3.jsonl").write_bytes(_header("a3"))  # its own name: listed
    with Store.open(store.workspace) as fresh:
        early = [(s.header.id, s.header.title) for s in fresh.sessions_at_hand({"a1"})]
        assert sorted(early) == [("a3", "t"), ("real", "run real")]
        full, total = fresh.sessions()
        assert sorted((s.header.id, s.header.title) for s in full) == [
            ("a3", "t"), ("real", "run real")]
        assert total == 2
        again, _total = fresh.sessions()  # counted once: the kept index entry is no way in
        assert sorted(s.header.id for s in again) == ["a3", "real"]
        assert fresh.session_summary("a1").header.id == "real"  # the file itself is kept
    assert (folder / "a1.jsonl").exists() and (folder / "a2.jsonl").exists()


def test_headers_read_while_the_full_listing_ends_are_not_kept(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A partial answer (the read pool) reads its header lines while the full listing behind
    it (another thread) ends and frees the kept headers: the answer's lines, stored after
    that, were kept for the server's life (no full listing comes again while the kept one
    is refreshed by name): 8.4 MB at 10,000 sessions. The interleaving made by hand."""
    for i in range(3):
        _session(store, f"s{i}", f"2026-01-0{i + 1}T00:00:00.000Z")
    shutil.rmtree(store.root / "index")
    with Store.open(store.workspace) as fresh:
        backend = fresh.backend
        assert isinstance(backend, FileSessions)
        listed: list[int] = []

        def read_then_list(names: list[str], folder: Any) -> list[HeaderRead | None]:
            if not listed:  # the full listing ends between the scan and the headers' store
                listed.append(len(fresh.sessions()[0]))
            return read_headers(names, folder)

        monkeypatch.setattr(headers_mod, "read_headers", read_then_list)  # imported where used
        got = fresh.sessions_at_hand()
        assert listed == [3] and len(got) == 3  # the answer itself is whole
        assert backend._headers == {}


def test_the_sessions_folder_moved_away_between_the_scan_and_the_headers(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sessions/`` renamed away (a sync tool, the user) after the directory scan and before
    its header lines are read: the full listing then leaves the files it cannot find out;
    the partial answer failed (``FileNotFoundError``: an internal error to the client)."""
    _session(store, "s0", "2026-01-01T00:00:00.000Z")
    _session(store, "s1", "2026-01-02T00:00:00.000Z")
    shutil.rmtree(store.root / "index")
    folder = store.root / "sessions"
    real_open_root = files_mod.open_root

    def moved_then_opened(path: str) -> Any:
        folder.rename(folder.with_name("sessions.moved"))
        return real_open_root(path)

    with Store.open(store.workspace) as fresh:
        monkeypatch.setattr(files_mod, "open_root", moved_then_opened)
        assert fresh.sessions_at_hand({"s1"}) == []  # nothing there to show, and no error
    moved = folder.with_name("sessions.moved")
    assert sorted(p.name for p in moved.glob("*.jsonl")) == ["s0.jsonl", "s1.jsonl"]


def test_more_hostile_first_lines_and_files_swapped_after_the_scan(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team (redteam6), held: links to ``/dev/zero`` and to a folder, invalid UTF-8
    inside a JSON string, a header whose fields have the wrong types (shown with defaults,
    placed last), and files swapped after the directory scan for a FIFO, a link to
    ``/dev/zero`` or a grown file: nothing blocks, nothing unbounded is read."""
    _session(store, "good", "2026-01-01T00:00:00.000Z")
    sessions = store.root / "sessions"
    shutil.rmtree(store.root / "index")
    (sessions / "zero.jsonl").symlink_to("/dev/zero")
    (sessions / "dirlink.jsonl").symlink_to(sessions)
    (sessions / "utf8.jsonl").write_bytes(b'{"type": "session", "id": "utf8", "title": "\xff"}\n')
    (sessions / "types.jsonl").write_bytes(orjson.dumps(
        {"type": "session", "id": "types", "started": 5, "agent": {"x": 1}, "title": None,
         "ended": ["x"]}) + b"\n")
    for sid in ("fifo", "zerolater", "grown"):
        (sessions / f"{sid}.jsonl").write_bytes(_header(sid))

    def swapped_then_opened(name: str, folder: Any = None) -> int:
        path = sessions / name
        if name == "fifo.jsonl":
            path.unlink()
            os.mkfifo(path)
        elif name == "zerolater.jsonl":
            path.unlink()
            path.symlink_to("/dev/zero")
        elif name == "grown.jsonl":
            with path.open("ab") as f:  # an agent appending meanwhile
                f.write(b'{"id": "e1", "session": "grown", "ts": "t", "kind": "prompt"}\n')
        return open_regular(name, folder=folder)

    monkeypatch.setattr(ahead_mod, "open_regular", swapped_then_opened)
    with Store.open(store.workspace) as fresh:
        got = fresh.sessions_at_hand()
        assert [s.header.id for s in got][-1] == "types"  # no start time: placed last
        assert sorted(s.header.id for s in got) == ["good", "grown", "types"]
        shown = {s.header.id: s.to_json() for s in got}["types"]
        assert shown["agent"] == "unknown" and shown["startedAt"] is None
        assert shown["endedAt"] is None and shown["title"] == ""


def test_a_renamed_or_ended_session_shows_its_latest_title_and_end_on_the_page(
        store: Store) -> None:
    """The meta lines among a file's last ``TAIL`` bytes are applied, in order, as a count
    applies them, to the sessions of the page asked; one further back is not read (the
    bound), nor a torn last line. A query matches the latest title."""
    for sid in ("renamed", "old", "torn"):
        _session(store, sid, "2026-01-01T00:00:00.000Z")
    store.update_session("renamed", title="first rename")
    store.update_session("renamed", title="second rename")
    store.end_session("renamed", "2026-01-01T01:00:00.000Z")
    store.update_session("old", title="too far back")
    for _ in range(40):  # about 100 bytes each: the rename is out of the last 4 KiB
        store.append("old", Kind.PROMPT, {"text": "x"})
    shutil.rmtree(store.root / "index")
    with (store.root / "sessions" / "torn.jsonl").open("ab") as f:
        f.write(b'{"type": "meta", "title": "half writ')  # a writer still at it
    with Store.open(store.workspace) as fresh:
        page, total = fresh.sessions_at_hand_page()
        got = {s.header.id: s.header for s in page}
        assert total == 3 and not any(s.counted for s in page)
        assert got["renamed"].title == "second rename"
        assert got["renamed"].ended == "2026-01-01T01:00:00.000Z"
        assert got["old"].title == "run old"  # counted, it is "too far back"
        assert got["torn"].title == "run torn"
        assert {s.header.id: s.header.title for s in fresh.sessions_at_hand()}[
            "renamed"] == "run renamed"  # the kept header line is left as it is
        # a query matches the latest title, as the full listing's does: the new name
        # finds the renamed session and the header's old one no longer does
        found, total = fresh.sessions_at_hand_page(query="second rename")
        assert [s.header.id for s in found] == ["renamed"] and total == 1
        assert found[0].header.ended == "2026-01-01T01:00:00.000Z"
        assert fresh.sessions_at_hand_page(query="run renamed") == ([], 0)
        only, total = fresh.sessions_at_hand_page(offset=1, limit=1, query="run")
        assert total == 2 and len(only) == 1
        listed = {s.header.id: s.header.title for s in fresh.sessions()[0]}
        assert "second rename" in listed["renamed"]  # what the full listing then says
        assert fresh.session_summary("old").header.title == "too far back"


def test_a_planted_huge_file_costs_a_bounded_read(store: Store, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    """A sparse file of 1 GiB with meta lines at its end: its first line and its last
    ``TAIL + 1`` bytes are read, nothing between."""
    shutil.rmtree(store.root / "index", ignore_errors=True)
    path = store.root / "sessions" / "big.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(_header("big"))
        f.seek(1 << 30)
        f.write(b'\n{"type": "meta", "title": "the end"}\n')
    read: list[int] = []
    real_pread = os.pread

    def counted(fd: int, n: int, offset: int) -> bytes:
        data = real_pread(fd, n, offset)
        read.append(len(data))
        return data

    monkeypatch.setattr(headers_mod.os, "pread", counted)
    with Store.open(store.workspace) as fresh:
        page, _total = fresh.sessions_at_hand_page()
    assert [s.header.title for s in page] == ["the end"]
    assert read == [FIRST_READ, TAIL + 1]


def _short_of_descriptors(monkeypatch: pytest.MonkeyPatch, refuse: dict[str, int]
                          ) -> list[str]:
    """``open_regular`` in the reads ahead refusing a name ``refuse[name]`` times with
    EMFILE, as a process out of descriptors; the names opened, in order."""
    opened: list[str] = []
    real_open = ahead_mod.open_regular

    def short(name: str, folder: Any = None) -> int:
        if refuse.get(name, 0) > 0:
            refuse[name] -= 1
            raise OSError(errno.EMFILE, "Too many open files")
        opened.append(name)
        return real_open(name, folder=folder)

    monkeypatch.setattr(ahead_mod, "open_regular", short)
    return opened


def test_files_are_read_in_inode_order_and_too_many_open_files_lose_none(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reads go in inode order (files made one after another lie so on disk). Out of
    descriptors while files are open ahead, the process reads those first and opens the
    refused one after."""
    for i in range(6):
        _session(store, f"s{i}", f"2026-01-0{i + 1}T00:00:00.000Z")
    shutil.rmtree(store.root / "index")
    inode = {p.name: p.stat().st_ino for p in (store.root / "sessions").glob("*.jsonl")}
    monkeypatch.setattr(ahead_mod, "AHEAD", 3)
    refuse = {n: 1 for n in sorted(inode, key=inode.__getitem__)[2:]}  # each once, 2 open
    opened = _short_of_descriptors(monkeypatch, refuse)
    with Store.open(store.workspace) as fresh:
        got = [s.header.id for s in fresh.sessions_at_hand()]
    assert got == ["s5", "s4", "s3", "s2", "s1", "s0"]
    assert opened == sorted(inode, key=inode.__getitem__)
    assert not any(refuse.values())  # every refusal happened


def test_out_of_descriptors_with_none_open_ahead_leaves_that_session_out(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        _session(store, f"s{i}", f"2026-01-0{i + 1}T00:00:00.000Z")
    shutil.rmtree(store.root / "index")
    monkeypatch.setattr(ahead_mod, "AHEAD", 1)  # nothing of ours open at each open
    _short_of_descriptors(monkeypatch, {"s1.jsonl": 1})
    with Store.open(store.workspace) as fresh:
        assert [s.header.id for s in fresh.sessions_at_hand()] == ["s2", "s0"]
        assert [s.header.id for s in fresh.sessions_at_hand()] == ["s2", "s1", "s0"]
