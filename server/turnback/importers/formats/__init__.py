"""Parsers of session file formats that are not one agent's own store: the seed formats
(000-004) and Turnback's own JSONL."""
