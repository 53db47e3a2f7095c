"""aider chat history: the real file counted independently, and the edge cases of the Markdown."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.importers import import_source
from turnback.importers.agents.aider import parse_tokens

from .conftest import TRANSCRIPTS, need_transcripts


def raw_counts(path: Path) -> list[dict[str, Any]]:
    """Per session: prompts (runs of `#### ` lines not starting with /), edits, tokens."""
    sessions: list[dict[str, Any]] = []
    previous_was_prompt = False
    for text in path.read_text().splitlines():
        if text.startswith("# aider chat started at"):
            sessions.append({"prompts": 0, "edits": 0, "output": 0})
            previous_was_prompt = False
            continue
        if not sessions:
            continue
        s = sessions[-1]
        # aider's writer ends each line the person typed with a hard break (two spaces)
        is_prompt = text.startswith("#### ") and text.endswith("  ")
        if is_prompt and not previous_was_prompt and not text[5:].lstrip().startswith("/"):
            s["prompts"] += 1
        previous_was_prompt = is_prompt
        s["edits"] += text.startswith("> Applied edit to ")
        m = re.match(r"> Tokens: .*?([\d.]+)(k?) received", text)
        if m:
            s["output"] += round(float(m.group(1)) * (1000 if m.group(2) else 1))
    return sessions


def test_real_history_counts(store: Store) -> None:
    need_transcripts()
    path = TRANSCRIPTS / "aider/0xf1e+health-analyzer-poc/.aider.chat.history.md"
    result = import_source(store, "aider", path.parent)
    assert result.problems == []
    assert result.sessions == ["aider-20250922T120400", "aider-20250922T145500"]
    for sid, want in zip(result.sessions, raw_counts(path), strict=True):
        stats = store.stats(sid)
        assert stats["prompts"] == want["prompts"]
        assert stats["toolCalls"] == stats["toolResults"] == want["edits"]
        assert stats["tokens"]["output"] == want["output"]
    first = store.session("aider-20250922T120400")
    commits = [e.data["commit"] for e in first.events if "commit" in e.data]
    assert commits == ["e14ab36", "461c5fc", "c6ad63d", "f9a09d7"]
    assert first.header.model == "openrouter/deepseek/deepseek-chat-v3.1"
    assert import_source(store, "aider", path).events == 0


def test_prompts_commands_output_and_fences(store: Store, ws: Path) -> None:
    (ws / ".aider.chat.history.md").write_text(
        "\n# aider chat started at 2025-01-02 03:04:05\n\n"
        "> Main model: gpt-x with diff edit format\n\n"
        "#### /add a.py  \n\n"
        "#### first line  \n#### second line  \n\n"
        "Here is the change:\n\n"
        "a.py\n```python\n#### not a prompt\n> not output\n```\n\n"
        "> Tokens: 1.2k sent, 250 received. Cost: $0.01 message, $0.01 session.  \n"
        "> Applied edit to a.py  \n"
        "> Commit 0123abc feat: change a  \n"
        "> pytest -q\nmore of the command  \n"
        "> Run shell command? (Y)es/(N)o [Yes]: n  \n\n"
        "#### again  \n\n"
        "Sure, cut off mid-fence:\n\n```python\nx = 1\n\n\n"
        "#### a prompt after an answer cut off inside a fence  \n"
    )
    result = import_source(store, "aider")  # the workspace's own history file
    assert result.sessions == ["aider-20250102T030405"]
    log = store.session("aider-20250102T030405")
    got = [(e.kind, e.data.get("text", "")[:30]) for e in log.events]
    assert got == [
        ("note", "Main model: gpt-x with diff ed"),
        ("note", "/add a.py"),
        ("prompt", "first line\nsecond line"),
        ("response", "Here is the change:\n\na.py\n```p"),
        ("usage", "Tokens: 1.2k sent, 250 receive"),
        ("tool_call", ""),
        ("tool_result", ""),
        ("note", "Commit 0123abc feat: change a"),
        ("note", "pytest -q\nmore of the command\n"),
        ("prompt", "again"),
        ("response", "Sure, cut off mid-fence:\n\n```p"),
        ("prompt", "a prompt after an answer cut o"),
    ]
    assert log.events[6].data["output"] == "Applied edit to a.py"
    assert log.events[8].data["text"].endswith("Run shell command? (Y)es/(N)o [Yes]: n")
    assert "#### not a prompt\n> not output" in log.events[3].data["text"]
    assert log.header.title == "first line"
    stats = store.stats("aider-20250102T030405")
    assert stats["tokens"]["input"] == 1200 and stats["tokens"]["output"] == 250


def test_token_line_shapes() -> None:
    assert parse_tokens("Tokens: 2,345 sent, 26 cache write, 1.2k cache hit, 201 received.") == {
        "input": 2345, "output": 201, "cacheRead": 1200, "cacheCreation": 26,
        "approximate": True}
    assert parse_tokens("Tokens: nothing here") is None


HEAD = "\n# aider chat started at 2025-03-04 05:06:07\n\n"


def test_only_lines_with_aiders_hard_break_are_the_persons(store: Store, ws: Path) -> None:
    """aider's io.user_input writes `#### line` + two spaces; an answer's heading has none."""
    (ws / ".aider.chat.history.md").write_text(
        HEAD + "> Model: gpt-4o with diff edit format  \n\n"
        "#### plan it  \n\n"
        "#### Step 1\nRead the code.\n\n#### Step 2\nChange it.\n\n"
        "#### thanks  \n\n"
        "You are welcome.\n\n")
    import_source(store, "aider")
    log = store.session("aider-20250304T050607")
    kinds = [(e.kind, e.data.get("text", "")) for e in log.events]
    assert [t for k, t in kinds if k == "prompt"] == ["plan it", "thanks"]
    assert ("response", "#### Step 1\nRead the code.\n\n#### Step 2\nChange it.") in kinds
    assert log.header.model == "gpt-4o"  # `> Model:` (no weak model) names the model too


def test_an_unclosed_fence_does_not_swallow_the_rest(store: Store, ws: Path) -> None:
    (ws / ".aider.chat.history.md").write_text(
        HEAD + "#### write it  \n\n"
        "Here:\n\n```python\nx = 1\n\n"  # the answer ends without closing its fence
        "> Tokens: 1.5k sent, 20 received.  \n\n"
        "#### /drop  \n\n"
        "#### next  \n\n")
    import_source(store, "aider")
    log = store.session("aider-20250304T050607")
    assert [e.kind for e in log.events] == ["prompt", "response", "usage", "note", "prompt"]
    assert log.events[1].data["text"] == "Here:\n\n```python\nx = 1"
    assert store.stats("aider-20250304T050607")["tokens"]["output"] == 20


def test_reimport_after_a_cut_import_has_the_whole_answer(store: Store, ws: Path) -> None:
    path = ws / ".aider.chat.history.md"
    whole = HEAD + "#### explain  \n\nFirst part.\nSecond part.\n\n"
    path.write_text(whole[: whole.index("Second") + 3])  # read while aider was writing
    first = import_source(store, "aider")
    assert any("cut off" in p.message for p in first.problems)
    path.write_text(whole)
    again = import_source(store, "aider")
    assert again.problems == []
    log = store.session("aider-20250304T050607")
    responses = [e.data["text"] for e in log.events if e.kind == "response"]
    assert responses == ["First part.\nSecond part."]
    assert store.stats("aider-20250304T050607")["responses"] == 1
