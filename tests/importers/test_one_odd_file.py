"""One file whose mapping raises is that file's problem: the import goes on with the
others. The runner guarded each line's mapping (``feed``) but not a document's
(``DocumentParser.parse``) nor a line file's last step (``finish``): an exception there
ended the whole import in a traceback, the folder's later files not imported."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.events import JSON
from turnback.importers.agents.claude_code import ClaudeCodeParser
from turnback.importers.agents.continue_dev import ContinueParser
from turnback.importers.runner import import_source


def _session_ids(ws: Path) -> set[str]:
    with Store.open(ws) as store:
        return {s.header.id for s in store.sessions()[0]}


def test_a_document_whose_mapping_raises_is_its_problem_and_the_rest_is_imported(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "continue"
    folder.mkdir()
    for name in ("a-odd", "b-good"):
        (folder / f"{name}.json").write_text(json.dumps(
            {"sessionId": name, "title": name, "workspaceDirectory": str(ws), "history": []}))
    mapped = ContinueParser.on_document

    def odd(self: ContinueParser, doc: JSON) -> Iterator[Any]:
        if doc.get("sessionId") == "a-odd":
            raise TypeError("unhashable type: 'dict'")
        yield from mapped(self, doc)

    monkeypatch.setattr(ContinueParser, "on_document", odd)
    with Store.open(ws) as store:
        result = import_source(store, "continue", folder)
    assert [(p.file, p.message) for p in result.problems] == [
        (str(folder / "a-odd.json"),
         "could not read this file (TypeError(\"unhashable type: 'dict'\")); "
         "the rest of it skipped")]
    assert _session_ids(ws) == {"b-good"}


def test_a_line_file_whose_last_step_raises_is_its_problem_and_the_rest_is_imported(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "claude"
    folder.mkdir()
    for name in ("a-odd", "b-good"):
        (folder / f"{name}.jsonl").write_text(json.dumps(
            {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": name,
             "timestamp": "2026-01-02T03:04:05Z", "cwd": str(ws),
             "message": {"role": "user", "content": "hello"}}) + "\n")
    finish = ClaudeCodeParser.finish

    def odd(self: ClaudeCodeParser, final: bool) -> Iterator[Any]:
        if self.path.name.startswith("a-odd"):
            raise ValueError("odd")
        yield from finish(self, final)

    monkeypatch.setattr(ClaudeCodeParser, "finish", odd)
    with Store.open(ws) as store:
        result = import_source(store, "claude-code", folder)
    assert [(p.file, p.line, p.message) for p in result.problems] == [
        (str(folder / "a-odd.jsonl"), 2,
         "could not finish reading this file (ValueError('odd')); what it ended with skipped")]
    assert _session_ids(ws) == {"a-odd", "b-good"}  # the lines read before are kept


def test_a_followed_document_whose_mapping_raises_is_its_problem_and_the_poll_goes_on(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The follower reads documents itself: the same guard (it raised out of ``poll``)."""
    from turnback.importers import Follower

    from .test_documented_formats import continue_session

    home = tmp_path / "home"
    session = continue_session(home, store.workspace)
    mapped = ContinueParser.on_document

    def odd(self: ContinueParser, doc: JSON) -> Iterator[Any]:
        yield from mapped(self, doc)
        raise KeyError("odd")  # after its records: those are kept

    monkeypatch.setattr(ContinueParser, "on_document", odd)
    result = Follower(store, sources=["continue"], home=home, env={}).poll()
    assert result.sessions == ["c-1"]
    assert [(p.file, p.message) for p in result.problems] == [
        (str(session), "could not read this file (KeyError('odd')); the rest of it skipped")]
