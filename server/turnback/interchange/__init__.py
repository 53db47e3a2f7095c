"""Sessions in other shapes, over the store's API: export (JSONL, Markdown) and
conversation snapshots an agent can resume from."""
