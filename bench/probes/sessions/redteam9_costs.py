"""What the redteam9 fixes cost where they touch a hot path (bench/RESULTS.md, "redteam9").

Both figures are CPU time of this process over realistic events: the Claude Code transcripts
of ``../shared/transcripts`` imported once into a scratch store (read in place), their events
repeated to 20,000.

    append   the store's append (sessions/files.py: each line now written by ``_event_line``,
             which looks for the nesting bound only after orjson refused a line): 20,000
             events appended in batches of 5,000, three sessions, the mean per 20,000
    redact   a push's walk of each event (sharing/export.py ``_redact_json``: a depth check
             per container, a try around each string's redaction), best of 3 over 20,000

Run against another tree's code with ``PYTHONPATH=<that tree>/server``; alternate the two.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from turnback import Store
from turnback.events import Event
from turnback.importers.runner import import_source

TRANSCRIPTS = Path(__file__).resolve().parents[4] / "shared" / "transcripts" / "claude-code"
EVENTS = 20_000


def _events(store: Store, transcripts: Path) -> list[Event]:
    for f in sorted(transcripts.rglob("*.jsonl")):
        import_source(store, "claude-code", f)
    out = [e for s in store.sessions()[0] for e in store.session(s.header.id).events]
    return (out * (EVENTS // len(out) + 1))[:EVENTS]


def append(store: Store, events: list[Event]) -> float:
    t0 = time.process_time()
    for r in range(3):
        sid = f"bench{r}"
        store.start_session(title="bench", agent="bench", session_id=sid)
        batch = [Event(f"e{r}-{i}", sid, None, e.ts, e.kind, e.data) for i, e in enumerate(events)]
        for i in range(0, len(batch), 5000):
            store.append_events(sid, batch[i:i + 5000])
    return (time.process_time() - t0) / 3


def redact(events: list[Event]) -> float:
    from turnback.sharing.export import _redact_json

    lines = [e.to_json() for e in events]
    best = []
    for _ in range(3):
        t0 = time.process_time()
        for line in lines:
            _redact_json(line, [])
        best.append(time.process_time() - t0)
    return min(best)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["append", "redact"])
    ap.add_argument("--scratch", type=Path, required=True, help="a folder to make and remove")
    ap.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    args = ap.parse_args()
    ws = args.scratch / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    ws.mkdir(parents=True)
    try:
        with Store.open(ws, create=True) as store:
            events = _events(store, args.transcripts)
            took = append(store, events) if args.what == "append" else redact(events)
        print(f"{args.what}: {took * 1000:.1f} ms of CPU per {EVENTS:,} events")
    finally:
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    main()
