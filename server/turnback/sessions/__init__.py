"""Sessions as event trees: events, the backends that keep them (JSONL files, memory),
and the statistics of a session."""
