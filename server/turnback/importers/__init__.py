"""Importers: turn the sessions other tools write into Turnback sessions.

``import_source(store, "claude-code")`` imports this workspace's Claude Code
sessions; ``Follower(store).poll()`` imports what was appended since the last
poll. Sources and their mapping: docs/IMPORT.md.
"""

from .follow import Follower
from .registry import SOURCES, Source
from .result import ImportResult
from .runner import import_source

__all__ = ["SOURCES", "Follower", "ImportResult", "Source", "import_source"]
