"""Watching a workspace folder, its store and the agents' session folders: which paths changed
since the last checkpoint."""
