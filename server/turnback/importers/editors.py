"""The VS Code family's per-user folders on this machine, where editor extensions keep their
data: Cline's tasks in ``globalStorage``, Copilot Chat's sessions in ``workspaceStorage``."""

from __future__ import annotations

from pathlib import Path

from .base import Context

EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


def user_folders(ctx: Context, name: str) -> list[Path]:
    """Every editor's ``User/<name>``, under the Linux config folder and the macOS one."""
    config = Path(ctx.env.get("XDG_CONFIG_HOME") or ctx.home / ".config")
    roots = []
    for editor in EDITORS:
        roots.append(config / editor / "User" / name)
        roots.append(ctx.home / "Library" / "Application Support" / editor / "User" / name)
    return roots
