"""Export: Turnback JSONL imports back identical; the Markdown transcript reads in order."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from shared_data import TRANSCRIPTS, need_transcripts
from turnback import Kind, Store
from turnback.importers import import_source
from turnback.interchange.export import export_jsonl, export_markdown

REAL = [
    ("claude-code", "claude-code/marot+spotter"),
    ("claude-code", "claude-code/d-kimuson+claude-code-viewer"),
    ("codex", "codex"),
    ("aider", "aider"),
    ("ralph", "ralph"),
]


def exported(store: Store, sid: str) -> bytes:
    out = io.BytesIO()
    export_jsonl(store, sid, out)
    return out.getvalue()


@pytest.mark.parametrize(("source", "folder"), REAL, ids=[f for _, f in REAL])
def test_jsonl_export_imports_back_identical(
    store: Store, tmp_path: Path, source: str, folder: str
) -> None:
    need_transcripts()
    result = import_source(store, source, TRANSCRIPTS / folder)
    (tmp_path / "other").mkdir()
    other = Store.open(tmp_path / "other")
    for sid in result.sessions:
        data = exported(store, sid)
        f = tmp_path / f"{sid}.jsonl"
        f.write_bytes(data)
        back = import_source(other, "turnback", f)
        assert back.sessions == [sid] and back.problems == []
        assert exported(other, sid) == data
        assert other.stats(sid) == store.stats(sid)
        assert import_source(other, "turnback", f).events == 0


def test_jsonl_export_keeps_a_forked_head_and_meta(store: Store, tmp_path: Path) -> None:
    s = store.start_session(title="first title", agent="loop", model="m1")
    a = store.append(s.id, Kind.PROMPT, {"text": "one"})
    store.append(s.id, Kind.RESPONSE, {"text": "two"})
    store.fork(a.id, s.id)
    store.update_session(s.id, title="better title")
    store.end_session(s.id, "2026-01-01T00:00:00.000Z")
    data = exported(store, s.id)
    header = json.loads(data.splitlines()[0])
    assert (header["title"], header["head"], header["ended"]) == (
        "better title", a.id, "2026-01-01T00:00:00.000Z")
    f = tmp_path / "s.jsonl"
    f.write_bytes(data)
    (tmp_path / "other").mkdir()
    other = Store.open(tmp_path / "other")
    import_source(other, "turnback", f)
    assert exported(other, s.id) == data
    assert other.session(s.id).head == a.id


def test_turnback_import_reports_bad_lines(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(
        json.dumps({"id": "e0", "session": "x", "ts": "t", "kind": "note"}) + "\n"
        + json.dumps({"type": "session", "id": "s-1", "title": "t"}) + "\n"
        + json.dumps({"id": "e1", "session": "x", "parent": None, "ts": "2026-01-01T00:00:00Z",
                      "kind": "prompt", "data": {"text": "hi"}}) + "\n"
        + json.dumps({"id": "bad id!", "session": "x", "ts": "t", "kind": "note"}) + "\n"
        + json.dumps({"id": "e2", "session": "x", "kind": "note"}) + "\n"
    )
    result = import_source(store, "turnback", f)
    assert [p.line for p in result.problems] == [1, 4, 5]
    assert [e.id for e in store.session("s-1").events] == ["e1"]


def test_markdown_transcript(store: Store) -> None:
    need_transcripts()
    import_source(store, "claude-code", TRANSCRIPTS / "claude-code/marot+spotter/short.jsonl")
    out = io.StringIO()
    shown = export_markdown(store, "55604662-cf2a-4331-851a-ec234028f8ca", out)
    md = out.getvalue()
    assert md.startswith("# mix phx.server doesnt seem to start\n")
    assert "| Tool calls | 2 (2 failed) |" in md
    order = [md.index(s) for s in ("## Prompt", "<summary>Thinking</summary>",
                                   "**Assistant**", "**Tool call** `Bash`", "**Result (error)**")]
    assert order == sorted(order)
    assert shown > 0 and "events not shown" in md


def test_markdown_fences_survive_backticks(store: Store) -> None:
    s = store.start_session(title="fences")
    store.append(s.id, Kind.TOOL_RESULT, {"toolUseId": "t", "output": "```\ncode\n````"})
    out = io.StringIO()
    export_markdown(store, s.id, out)
    assert "`````\n```\ncode\n````\n`````" in out.getvalue()
