"""Turns of a long session: how long the Sessions view waits for a page of turns and for
one turn's steps, built from scratch, kept (store/turn_ops.py's cache), and continued
over one more appended event (sessions/turns.py's TurnBuilder).

    PYTHONPATH=server .venv/bin/python bench/probes/sessions/turns.py [TURNS]

A session of TURNS turns (default 5,000) of four events each (prompt, tool call, result,
response) in a temporary store; prints milliseconds and the load average beside them.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from turnback import Store
from turnback.events import Event, Kind, new_id


def main() -> None:
    n_turns = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "a").write_text("x")
        with Store.open(ws) as s:
            sid = s.start_session(agent="claude-code").id
            events, parent = [], None
            for i in range(n_turns):
                for kind, data in ((Kind.PROMPT, {"text": f"prompt {i}"}),
                                   (Kind.TOOL_CALL, {"name": "Bash", "toolUseId": f"t{i}"}),
                                   (Kind.TOOL_RESULT, {"toolUseId": f"t{i}", "output": "ok"}),
                                   (Kind.RESPONSE, {"text": "done"})):
                    e = Event(new_id(), sid, parent, "2025-01-01T00:00:00.000Z", kind, data)
                    events.append(e)
                    parent = e.id
            s.append_events(sid, events)

            def ms(fn: object, runs: int = 1) -> float:
                t = time.perf_counter()
                for _ in range(runs):
                    fn()  # type: ignore[operator]
                return (time.perf_counter() - t) / runs * 1000

            built = ms(lambda: s.turn_page(sid, None, 100))
            kept = ms(lambda: s.turn_page(sid, None, 100), 20)
            last = s.turn_page(sid, None, 1).turns[-1].id
            steps = ms(lambda: s.steps(sid, last), 20)
            s.append(sid, Kind.NOTE, {"text": "one more event"})
            continued = ms(lambda: s.turn_page(sid, None, 100))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{n_turns} turns, {4 * n_turns} events (load average {load}):")
    print(f"  latest page of 100 turns, built: {built:.0f} ms; kept: {kept:.2f} ms")
    print(f"  one turn's steps, kept: {steps:.2f} ms")
    print(f"  latest page after one more event (continued): {continued:.2f} ms")


if __name__ == "__main__":
    main()
