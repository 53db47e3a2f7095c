"""The ground: files and folders, safely — atomic writes, locks, JSON lines, workspace
paths that cannot escape, and the store's private modes. Imports nothing of Turnback
but ``errors``."""
