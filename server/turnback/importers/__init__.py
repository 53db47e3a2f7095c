"""Importers: turn the sessions other tools write into Turnback sessions.

``import_source(store, "claude-code")`` imports this workspace's Claude Code
sessions; ``discover(workspace)`` lists every agent's sessions of a workspace;
``Follower(store).poll()`` imports what was appended since the last poll.
Sources and their mapping: docs/IMPORT.md.
"""

from .follow import Follower
from .registry import SOURCES, Found, Source, discover
from .result import ImportResult
from .runner import import_source

__all__ = ["SOURCES", "Follower", "Found", "ImportResult", "Source", "discover", "import_source"]
