"""A tool result's one-line summary skips a test runner's progress marks (pytest's dots),
in the events' summary (`sessions/event_summary.summarize`, a "Result" row) and a step's detail
(`turns.result_line`)."""

from __future__ import annotations

from turnback.events import Event, Kind
from turnback.sessions.event_summary import is_progress, summarize
from turnback.sessions.turns import result_line


def result(output: str) -> Event:
    return Event("e" * 16, "s" * 16, None, "2026-11-29T06:00:00Z", Kind.TOOL_RESULT,
                 {"output": output})


def test_progress_dots_are_left_out_of_a_results_summary() -> None:
    assert summarize(result("F.\nFAILED tests/test_farewell.py::test_farewell - AssertionError")
                     ) == "FAILED tests/test_farewell.py::test_farewell - AssertionError"
    assert summarize(result("..\n2 passed in 0.01s")) == "2 passed in 0.01s"
    assert summarize(result("....F.s   [ 70%]\n..x [100%]\n1 failed, 9 passed")
                     ) == "1 failed, 9 passed"
    assert result_line("1 failed\n....F [100%]") == "1 failed"


def test_output_that_is_only_marks_or_text_is_kept() -> None:
    assert summarize(result("..")) == ".."
    assert summarize(result("F")) == "F"
    assert summarize(result("Fixed it.\nDone")) == "Fixed it. Done"
    assert not is_progress("Fix")
    assert is_progress(" .F.s ")
    assert is_progress("F [ 50%]")


def test_an_undo_is_summarised_as_an_undo_not_a_rewind_to_a_safety_checkpoint() -> None:
    rw = Event("e" * 16, "s" * 16, None, "2026-11-29T06:00:00Z", Kind.REWIND,
               {"checkpoint": "206e2865736d", "mode": "files", "undo": "0123456789abcdef"})
    assert summarize(rw) == "undo (files)"
    rw.data.pop("undo")
    assert summarize(rw) == "rewind to 206e2865736d (files)"
