"""Line attribution with known truth: histories built through the Store API, where the
origin of every line is known, each asserted line by line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Store
from turnback.attribution.blame import blame_file
from turnback.attribution.history import load_history
from turnback.attribution.origins import Origin
from turnback.errors import NotFound
from turnback.events import Kind
from turnback.store import checkpoint_ops, session_ops


class Agent:
    """A session whose turns take a checkpoint when the prompt arrives and one at the end."""

    def __init__(self, store: Store, agent: str, model: str = "m-1") -> None:
        self.store = store
        self.sid = store.start_session(title=agent, agent=agent, model=model).id

    def start(self, prompt: str) -> None:
        self.store.append(self.sid, Kind.PROMPT, {"text": prompt})
        self.store.checkpoint(session_id=self.sid)
        self.store.append(self.sid, Kind.TOOL_CALL, {"name": "Edit", "input": {}})

    def end(self) -> str:
        return self.store.checkpoint(session_id=self.sid).id

    def turn(self, prompt: str, edit: Callable[[], object]) -> str:
        self.start(prompt)
        edit()
        return self.end()


def who(o: Origin) -> str:
    """An origin in a few words: agent:prompt for a turn, else its kind."""
    if o.kind == "turn":
        return f"{o.turns[0].agent}:{o.turns[0].prompt}"
    if o.kind == "shared":
        return "shared:" + "+".join(f"{t.agent}:{t.prompt}" for t in o.turns)
    return o.kind


def blame(store: Store, path: str, at: str | None = None) -> list[str]:
    return [who(o) for o in blame_file(store, load_history(store), path, at).origins]


def lines(*xs: str) -> str:
    return "".join(x + "\n" for x in xs)


def test_initial_tool_edit_and_person_between_turns(store: Store, ws: Path) -> None:
    f = ws / "a.py"
    f.write_text(lines("import os", "x = 1"))
    store.checkpoint(label="start")
    claude = Agent(store, "claude-code")
    claude.turn("add greet", lambda: f.write_text(lines(
        "import os", "def greet():", "    return 'hi'", "x = 1")))
    f.write_text(lines("import os", "def greet():", "    return 'hello'", "x = 1", "# mine"))
    claude.turn("add y", lambda: f.write_text(f.read_text() + "y = 2\n"))
    assert blame(store, "a.py") == [
        "initial", "claude-code:add greet", "person", "initial", "person", "claude-code:add y"]
    # as it was after the first turn
    first_end = store.checkpoints()[2].id
    assert blame(store, "a.py", first_end) == [
        "initial", "claude-code:add greet", "claude-code:add greet", "initial"]


def test_a_file_made_by_a_shell_command_inside_a_turn_is_the_turns(store: Store, ws: Path
                                                                    ) -> None:
    store.checkpoint(label="start")
    codex = Agent(store, "codex")
    codex.start("generate the parser")
    store.append(codex.sid, Kind.TOOL_CALL, {"name": "Bash", "input": {"command": "make gen"}})
    (ws / "gen.py").write_text(lines("# generated", "TABLE = [1, 2, 3]"))  # no edit tool saw it
    codex.end()
    assert blame(store, "gen.py") == ["codex:generate the parser"] * 2


def test_person_edit_origin_names_the_time_range(store: Store, ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text("one\n")
    c0 = store.checkpoint(label="start")
    f.write_text("one\ntwo\n")
    c1 = store.checkpoint(label="later")
    b = blame_file(store, load_history(store), "a.txt", c1.id)
    person = b.origins[1]
    assert (person.kind, person.since, person.until) == ("person", c0.ts, c1.ts)
    assert (person.checkpoint, person.previous) == (c1.id, c0.id)
    assert b.origins[0].kind == "initial" and b.origins[0].checkpoint == c0.id


def test_moved_lines_keep_their_origin(store: Store, ws: Path) -> None:
    f = ws / "m.py"
    block = ["def helper(value):", "    return value * 2 + offset"]
    f.write_text(lines("first = 1", *block, "last = 2"))
    store.checkpoint(label="start")
    claude = Agent(store, "claude-code")
    claude.turn("write main", lambda: f.write_text(f.read_text() + lines("def main():",
                                                                         "    run()")))
    # a person moves the helper below main, and the short line `}`-like one is not a move
    f.write_text(lines("first = 1", "last = 2", "def main():", "    run()", *block))
    assert blame(store, "m.py") == [
        "initial", "initial", "claude-code:write main", "claude-code:write main",
        "initial", "initial"]


def test_a_short_moved_line_is_new(store: Store, ws: Path) -> None:
    f = ws / "s.txt"
    f.write_text(lines("a", "b", "c"))
    store.checkpoint(label="start")
    f.write_text(lines("b", "c", "a"))
    store.checkpoint(label="moved")
    assert blame(store, "s.txt") == ["initial", "initial", "person"]


def test_a_file_deleted_and_recreated_is_the_recreating_turns(store: Store, ws: Path) -> None:
    f = ws / "d.txt"
    f.write_text(lines("alpha line here", "beta line here"))
    store.checkpoint(label="start")
    gemini = Agent(store, "gemini")
    gemini.turn("remove d", f.unlink)
    with pytest.raises(NotFound):
        blame(store, "d.txt")
    gemini.turn("bring d back", lambda: f.write_text(lines("alpha line here",
                                                           "beta line here")))
    assert blame(store, "d.txt") == ["gemini:bring d back"] * 2


@pytest.mark.parametrize("clock", ["running", "one millisecond"])
def test_two_sessions_turns_open_at_once_are_shared(
    store: Store, ws: Path, clock: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if clock == "one millisecond":  # every event and checkpoint in the same millisecond
        for module in (checkpoint_ops, session_ops):
            monkeypatch.setattr(module, "now_iso", lambda: "2026-01-01T00:00:00.000Z")
    f = ws / "s.py"
    f.write_text("base\n")
    store.checkpoint(label="start")
    claude, codex = Agent(store, "claude-code"), Agent(store, "codex")
    claude.start("claude's task")
    f.write_text(lines("base", "by claude alone"))
    codex.start("codex's task")
    f.write_text(lines("base", "by claude alone", "while both ran"))
    claude.end()
    f.write_text(lines("base", "by claude alone", "while both ran", "by codex alone"))
    codex.end()
    assert blame(store, "s.py") == [
        "initial", "claude-code:claude's task",
        "shared:claude-code:claude's task+codex:codex's task", "codex:codex's task"]
    shared = blame_file(store, load_history(store), "s.py").origins[2]
    assert shared.to_json()["agent"] is None
    assert [s["agent"] for s in shared.to_json()["shared"]] == ["claude-code", "codex"]


def test_lines_brought_back_by_a_rewind_keep_their_original_origin(store: Store, ws: Path
                                                                   ) -> None:
    f = ws / "r.py"
    f.write_text("base\n")
    store.checkpoint(label="start")
    claude = Agent(store, "claude-code")
    good = claude.turn("good change", lambda: f.write_text(lines("base", "good line one")))
    f.write_text(lines("base", "good line one", "a person's line"))
    claude.turn("bad change", lambda: f.write_text(lines("bad rewrite")))
    store.rewind(good)
    # as it is now: not yet in a checkpoint, and still the lines' first authors
    assert blame(store, "r.py") == ["initial", "claude-code:good change"]
    store.checkpoint(label="after the rewind")
    assert blame(store, "r.py") == ["initial", "claude-code:good change"]
    # undo brings back the rewound-away state: each line its own author again
    store.undo()
    store.checkpoint(label="after the undo")
    assert blame(store, "r.py") == ["claude-code:bad change"]


def test_a_rewind_of_other_paths_leaves_a_files_steps_alone(store: Store, ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    (ws / "b.txt").write_text("b\n")
    c0 = store.checkpoint(label="start")
    (ws / "a.txt").write_text("a\na2\n")
    (ws / "b.txt").write_text("b\nb2\n")
    store.checkpoint(label="both")
    store.rewind(c0.id, paths=["a.txt"])
    (ws / "b.txt").write_text("b\nb2\nb3\n")
    store.checkpoint(label="later")
    assert blame(store, "a.txt") == ["initial"]
    assert blame(store, "b.txt") == ["initial", "person", "person"]
    # b2 from the step into "both", b3 from the step into "later": two origins
    b = blame_file(store, load_history(store), "b.txt")
    assert b.origins[1] != b.origins[2]


def test_uncommitted_lines_and_ranges(store: Store, ws: Path) -> None:
    f = ws / "u.txt"
    f.write_text(lines("1", "2"))
    store.checkpoint(label="start")
    f.write_text(lines("1", "2", "3", "4"))
    b = blame_file(store, load_history(store), "u.txt")
    assert [o.kind for o in b.origins] == ["initial", "initial", "uncommitted", "uncommitted"]
    assert [(s, e, o.kind) for s, e, o in b.ranges()] == [(1, 2, "initial"),
                                                        (3, 4, "uncommitted")]
    out = b.to_json()
    assert out["checkpoint"] is None and [x["line"] for x in out["lines"]] == [1, 2, 3, 4]


def test_a_turn_with_checkpoints_inside_owns_every_step(store: Store, ws: Path) -> None:
    f = ws / "t.txt"
    f.write_text("0\n")
    store.checkpoint(label="start")
    claude = Agent(store, "claude-code")
    claude.start("long task")
    f.write_text("0\n1\n")
    store.checkpoint(session_id=claude.sid)  # a checkpoint mid-turn (an agent's hook)
    f.write_text("0\n1\n2\n")
    claude.end()
    assert blame(store, "t.txt") == ["initial", "claude-code:long task", "claude-code:long task"]
    turn = blame_file(store, load_history(store), "t.txt").origins[2].turns[0]
    assert (turn.index, turn.model) == (1, "m-1")


def test_binary_and_missing_files_are_refused_with_a_reason(store: Store, ws: Path) -> None:
    (ws / "bin").write_bytes(b"\0\1\2")
    c = store.checkpoint(label="start")
    with pytest.raises(Exception, match="binary"):
        blame(store, "bin")
    with pytest.raises(Exception, match="binary"):
        blame(store, "bin", c.id)
    with pytest.raises(NotFound):
        blame(store, "nope.txt")
    with pytest.raises(NotFound):
        blame(store, "nope.txt", c.id)
