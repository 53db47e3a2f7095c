"""filesEdited: which tool calls changed which files, and the count kept in the index."""

from __future__ import annotations

import pytest

from turnback.events import Event, Kind
from turnback.sessions.edited import edited_paths
from turnback.sessions.stats import StatsAccumulator, compute


@pytest.mark.parametrize(("data", "want"), [
    ({"name": "Edit", "input": {"file_path": "/w/a.py"}}, ["/w/a.py"]),
    ({"name": "Read", "input": {"file_path": "/w/a.py"}}, []),
    ({"name": "apply_patch", "input": "*** Begin Patch\n*** Update File: a.py\n*** Add File: "
      "b.py\n*** Delete File: c.py\n*** Update File: d.py\n*** Move to: e.py\n*** End Patch"},
     ["a.py", "b.py", "c.py", "d.py", "e.py"]),
    ({"name": "shell", "input": {"command": ["bash", "-lc", "apply_patch <<'EOF'\n"
                                             "*** Begin Patch\n*** Add File: f.py\n+x\n"
                                             "*** End Patch\nEOF"]}}, ["f.py"]),
    ({"name": "shell", "input": {"command": ["bash", "-lc", "rm -rf x"]}}, []),
    ({"name": "str_replace_editor", "input": {"command": "view", "path": "/w/a"}}, []),
    ({"name": "str_replace_editor", "input": {"command": "create", "path": "/w/a"}}, ["/w/a"]),
    ({"name": "write", "input": {"filePath": "/w/o.ts"}}, ["/w/o.ts"]),
    ({"name": "anything", "edits": ["x", 3, ""]}, ["x"]),
    ({"name": "Edit", "input": "not an object"}, []),
])
def test_edited_paths(data: dict[str, object], want: list[str]) -> None:
    assert edited_paths(data) == want


def event(i: int, data: dict[str, object]) -> Event:
    return Event(f"e{i}", "s", None, "2026-01-01T00:00:00.000Z", Kind.TOOL_CALL, data)


def test_distinct_paths_are_counted_and_the_state_resumes() -> None:
    events = [event(1, {"name": "Edit", "input": {"file_path": "a"}}),
              event(2, {"name": "Write", "input": {"file_path": "a"}}),
              event(3, {"name": "MultiEdit", "input": {"file_path": "b"}})]
    assert compute(events)["filesEdited"] == 2
    acc = StatsAccumulator()
    acc.add(events[0])
    resumed = StatsAccumulator(acc.state())
    for e in events[1:]:
        resumed.add(e)
    assert resumed.result()["filesEdited"] == 2


def test_a_state_counted_before_files_edited_existed_is_counted_again() -> None:
    state = StatsAccumulator().state()
    del state["edited"]
    with pytest.raises(KeyError):
        StatsAccumulator(state)  # the index catches this and counts the session again
