"""One real Claude Code session replayed against the file history it recorded.

The transcript (``../shared/transcripts``, read in place) holds, for every Edit and Write,
the whole file before it (``originalFile``), what was replaced or written, and Claude
Code's own diff of the change (``structuredPatch``). The replay writes each version into a
workspace inside turns bracketed by checkpoints (one after every edit, as an agent's hook
takes them); where a file is not what the transcript says it was before an edit, something
else inside the turn changed it (here: ``mix format`` run through Bash), and that version is
written first, in the same turn. The expected origin of every line is carried from the
transcript's own record — the patch's context lines keep theirs, its added lines are the
turn's — never from Turnback's diff.

Two diffs of one change may pair repeated lines differently (which of two ``end`` lines
or blank lines stayed): for each distinct line text, the lines holding it must come from
the same origins as the record says, in any order; a line whose text is unique in its file
is therefore checked exactly.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from shared_data import need_transcripts
from turnback import Store
from turnback.attribution.blame import blame_at
from turnback.attribution.history import load_history
from turnback.attribution.origins import INITIAL, TURN
from turnback.events import Kind
from turnback.sessions.turns import first_line

SESSION = "claude-code/marot+spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"

Who = int | str  # a turn's index, or "initial"


@dataclass
class Edit:
    path: str  # workspace-relative
    before: str  # the file before the edit, as the transcript recorded it ("" when new)
    after: str
    patch: list[dict[str, Any]]  # the transcript's structuredPatch hunks


@dataclass
class RecordedTurn:
    prompt: str
    edits: list[Edit] = field(default_factory=list)


def _read(path: Path) -> list[RecordedTurn]:
    """The session's prompts, each with the edits its tools made, in order."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    cwd = next(r["cwd"] for r in rows if r.get("cwd")).rstrip("/") + "/"
    turns: list[RecordedTurn] = []
    for r in rows:
        if r.get("type") != "user" or r.get("isMeta") or r.get("isSidechain"):
            continue
        result = r.get("toolUseResult")
        content = r["message"]["content"]
        if isinstance(result, dict) and "originalFile" in result:
            assert result["filePath"].startswith(cwd)
            before = result["originalFile"] or ""
            if "content" in result:  # Write: the whole file
                after = result["content"]
            else:  # Edit: one replacement, or all of them
                old, new = result["oldString"], result["newString"]
                assert old in before
                after = before.replace(old, new, -1 if result["replaceAll"] else 1)
            turns[-1].edits.append(Edit(result["filePath"][len(cwd):], before, after,
                                        result["structuredPatch"]))
            continue
        if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            continue  # another tool's result
        text = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
        turns.append(RecordedTurn(text))
    return turns


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _by_patch(edit: Edit, before: list[Who], who: Who) -> list[Who]:
    """The origins after ``edit``, from the transcript's patch: lines outside its hunks and
    its context lines keep theirs, its added lines are ``who``'s. A last line that only
    gained its newline is the same line (a line is its text, not its end)."""
    if not edit.before:
        return [who] * len(_lines(edit.after))
    out: list[Who] = []
    old = 0
    for hunk in edit.patch:
        start = hunk["oldStart"] - 1 if hunk["oldLines"] else hunk["oldStart"]
        out.extend(before[old:start])
        old = start
        lines = [x for x in hunk["lines"] if not x.startswith("\\")]
        for k, x in enumerate(lines):
            if x.startswith(" "):
                out.append(before[old])
                old += 1
            elif x.startswith("-"):
                if lines[k + 1 :] == ["+" + x[1:]] and old == len(before) - 1:
                    out.append(before[old])  # the last line, given its newline
                    lines[k + 1] = "="
                old += 1
            elif x.startswith("+"):
                out.append(who)
    out.extend(before[old:])
    assert len(out) == len(_lines(edit.after)), edit.path
    return out


def _by_region(before_text: str, after_text: str, before: list[Who], who: Who) -> list[Who]:
    """The origins after a change the transcript did not record (a formatter run inside a
    turn), from the versions before and after: the lines wholly in their common beginning
    or end keep theirs, the rest are ``who``'s."""
    n = min(len(before_text), len(after_text))
    head = 0
    while head < n and before_text[head] == after_text[head]:
        head += 1
    tail = 0
    while tail < n - head and before_text[-1 - tail] == after_text[-1 - tail]:
        tail += 1
    old, new = before_text.splitlines(True), after_text.splitlines(True)
    out: list[Who] = []
    pos = 0
    for i, line in enumerate(new):
        if pos + len(line) <= head:
            out.append(before[i])
        elif pos >= len(after_text) - tail:
            out.append(before[len(old) - (len(new) - i)])
        else:
            out.append(who)
        pos += len(line)
    return out


def _who(origin: Any) -> Who:
    if origin.kind == INITIAL:
        return INITIAL
    assert origin.kind == TURN, origin
    return int(origin.turns[0].index)


def _check(store: Store, at: str, path: str, text: str, expected: list[Who],
           prompts: dict[int, str]) -> None:
    got = blame_at(store, load_history(store), path, at)
    lines = _lines(text)
    assert [x.decode() for x in got.lines] == lines
    who = [_who(o) for o in got.origins]
    assert Counter(zip(lines, who, strict=True)) == Counter(zip(lines, expected, strict=True)), \
        path
    for o in got.origins:
        if o.kind == TURN:
            t = o.turns[0]
            assert (t.agent, t.prompt) == ("claude-code", first_line(prompts[t.index]))


def test_a_real_session_replayed_against_its_recorded_file_history(store: Store,
                                                                   ws: Path) -> None:
    path = need_transcripts() / SESSION
    if not path.is_file():
        pytest.skip(f"needs {path} (not in this copy of the transcripts)")
    turns = _read(path)
    assert sum(len(t.edits) for t in turns) == 48  # the file as committed to ../shared

    text: dict[str, str] = {}  # each file as the workspace holds it
    origins: dict[str, list[Who]] = {}  # and its lines' expected origins
    for t in turns:  # the files as they were before the session: the first checkpoint
        for e in t.edits:
            if e.path not in text:
                text[e.path] = e.before
                origins[e.path] = [INITIAL] * len(_lines(e.before))
                if e.before:
                    (ws / e.path).parent.mkdir(parents=True, exist_ok=True)
                    (ws / e.path).write_text(e.before)
    sid = store.start_session(title="spotter-gqc", agent="claude-code", model="claude").id
    store.checkpoint(label="before the session", session_id=sid)
    prompts: dict[int, str] = {}
    formatted = 0
    for index, t in enumerate(turns, 1):
        prompts[index] = t.prompt
        store.append(sid, Kind.PROMPT, {"text": t.prompt})
        store.checkpoint(session_id=sid)  # the turn's start
        for e in t.edits:
            target = ws / e.path
            if text[e.path] != e.before:  # changed since, by something else in this turn
                formatted += 1
                store.append(sid, Kind.TOOL_CALL, {"name": "Bash"})
                origins[e.path] = _by_region(text[e.path], e.before, origins[e.path], index)
                target.write_text(e.before)
                store.checkpoint(session_id=sid)
            store.append(sid, Kind.TOOL_CALL, {"name": "Edit", "input": {"file_path": e.path}})
            origins[e.path] = _by_patch(e, origins[e.path], index)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(e.after)
            text[e.path] = e.after
            store.checkpoint(session_id=sid)  # as a hook after each edit takes it
        store.append(sid, Kind.RESPONSE, {"text": "done"})
        end = store.checkpoint(session_id=sid)  # the turn's end
        for p in sorted({e.path for e in t.edits}):
            _check(store, end.id, p, text[p], origins[p], prompts)
    assert formatted == 2  # mix format, twice, between the agent's edits
    last = store.checkpoints()[-1].id
    for p in sorted(text):
        _check(store, last, p, text[p], origins[p], prompts)
    assert {w for o in origins.values() for w in o} >= {INITIAL, 1, 3, 4}
