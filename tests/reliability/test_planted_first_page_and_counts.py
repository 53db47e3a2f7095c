"""A red-team pass over issue 16's saved first page and counts (branch ``sess16b``).

``index/first.json`` (the page a just-started server answers from), the accumulators a
refreshed session writes to ``index/acc/`` at once, and a store replaced under a Store
that still holds it open: each case names what it guards (docs/RELIABILITY.md, "A
red-team pass over the saved first page and the counts written at once").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Kind, Store


def _session(store: Store, sid: str) -> None:
    store.start_session(title=sid, agent="codex", session_id=sid)
    store.append(sid, Kind.PROMPT, {"text": "x"})


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_replaced_store_gets_no_counts_and_no_index(store: Store) -> None:
    """``mv .turnback old && turnback init`` (or a restore) under a server: a session it
    refreshes afterwards (``save_session_counts``) or a full listing it makes before it
    sees the replacement writes nothing into the new store (its close saves nothing
    there already: the same rule)."""
    _session(store, "s0")
    store.sessions()  # the index and the page saved: only new counts are written next
    store.append("s0", Kind.PROMPT, {"text": "more"})
    store.session_summary("s0")  # counted on: an accumulator not on disk yet
    store.root.rename(store.root.with_name("old-store"))
    with Store.open(store.workspace, create=True) as new:
        before = _files(new.root)
        store.save_session_counts({"s0"})
        store.sessions()
        assert _files(new.root) == before  # before: index/acc/s0.json, index/summaries.json


@pytest.mark.parametrize("planted", ["index/acc", "index"])
def test_a_link_planted_as_the_counts_folder_is_not_written_through(
        store: Store, tmp_path: Path, planted: str) -> None:
    """``index/acc`` (or ``index``) swapped for a link to a folder of the user's while a
    server runs (a sync, anything that writes the store: a link there is refused at open
    only). The counts of a refreshed session, written at once at every refresh, went
    through it: ``<session id>.json`` made or replaced in any folder, named by a
    session's id; so did ``summaries.json`` and ``first.json`` of a full listing."""
    _session(store, "settings")
    store.sessions()
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("settings.json", "summaries.json", "first.json"):
        (outside / name).write_bytes(b"{}")
    link = store.root / planted
    link.rename(tmp_path / "moved away")
    link.symlink_to(outside)
    store.append("settings", Kind.PROMPT, {"text": "more"})
    assert store.session_summary("settings").stats["prompts"] == 2
    store.save_session_counts({"settings"})
    store.append("settings", Kind.PROMPT, {"text": "again"})
    store.sessions()  # a full listing saves the counts, the index and the first page
    assert sorted(p.name for p in outside.iterdir()) == [
        "first.json", "settings.json", "summaries.json"]
    assert {p.read_bytes() for p in outside.iterdir()} == {b"{}"}  # before: the counts


@pytest.mark.parametrize("kind", ["fifo", "link-zero", "link-file", "hard-link", "folder"])
def test_a_planted_counts_file_is_replaced_never_written_into(
        store: Store, tmp_path: Path, kind: str) -> None:
    """``index/acc/<id>.json`` planted as a FIFO, a link to ``/dev/zero`` or to a file of
    the user's, a hard link to one, a folder: the counts written at once at a refresh
    never block, never write into what was planted, and the session's summary stays
    right (a folder cannot be replaced: the counts are not saved, nothing else fails)."""
    _session(store, "s0")
    store.sessions()
    mine = tmp_path / "mine.json"
    mine.write_bytes(b"keep")
    acc = store.root / "index" / "acc" / "s0.json"
    acc.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(acc)
    elif kind == "link-zero":
        acc.symlink_to("/dev/zero")
    elif kind == "link-file":
        acc.symlink_to(mine)
    elif kind == "hard-link":
        os.link(mine, acc)
    else:
        acc.mkdir()
    store.append("s0", Kind.PROMPT, {"text": "more"})
    assert store.session_summary("s0").stats["prompts"] == 2
    store.save_session_counts({"s0"})
    assert mine.read_bytes() == b"keep"
    assert acc.is_dir() if kind == "folder" else acc.is_file() and not acc.is_symlink()
    store.append("s0", Kind.PROMPT, {"text": "again"})
    with Store.open(store.workspace) as other:  # counts on from what was saved, or anew
        assert other.session_summary("s0").stats["prompts"] == 3


def test_counts_not_written_by_a_full_listing_are_written_by_the_next(store: Store) -> None:
    """A full listing whose counts could not be written (``index/acc`` not a folder for a
    while) writes them at the next listing once it can: before, they were forgotten until
    the session changed again, and a killed server's successor counted it anew."""
    _session(store, "s0")
    store.sessions()
    acc = store.root / "index" / "acc"
    for p in acc.iterdir():
        p.unlink()
    acc.rmdir()
    acc.write_bytes(b"")  # not a folder: the counts cannot be written
    store.append("s0", Kind.PROMPT, {"text": "more"})
    store.sessions()
    acc.unlink()
    store.sessions()
    assert (acc / "s0.json").is_file()
