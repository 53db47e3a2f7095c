"""Which files an agent's tool call changed: the ``filesEdited`` stat.

Each agent names its editing tools differently; this is the one list. A tool
call whose ``data.edits`` lists paths (importers set it where the source says
so, e.g. Cline) is taken at its word; otherwise the tool's name and input tell.
Reading, searching and shell commands are not edits (a shell command's changes
are not knowable from the call; checkpoints catch them).
"""

from __future__ import annotations

import functools
import re
from typing import Any

# tool name → the input keys that hold the path it writes
_PATH_TOOLS: dict[str, tuple[str, ...]] = {
    # Claude Code
    "Edit": ("file_path",), "MultiEdit": ("file_path",), "Write": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    # aider (importer's name), Gemini CLI / Qwen Code
    "apply_edit": ("path",), "write_file": ("file_path", "path"), "replace": ("file_path",),
    "edit": ("file_path", "filePath", "path"),
    # Crush / OpenCode
    "write": ("file_path", "filePath", "path"), "multiedit": ("file_path", "filePath"),
    # Cline / Roo / Kilo (say "tool")
    "editedExistingFile": ("path",), "newFileCreated": ("path",), "fileDeleted": ("path",),
    "appliedDiff": ("path",),
    # Continue
    "edit_existing_file": ("filepath",), "create_new_file": ("filepath",),
    "single_find_and_replace": ("filepath",), "multi_edit": ("filepath",),
    # Copilot Chat
    "insert_edit_into_file": ("filePath",), "create_file": ("filePath",),
    "replace_string_in_file": ("filePath",),
}
# Copilot CLI's str_replace_editor: only these commands change the file
_EDITOR_COMMANDS = frozenset({"create", "str_replace", "insert", "undo_edit"})
MAX_PATH = 4096


@functools.cache
def _patch_re() -> re.Pattern[str]:
    """Compiled at the first patch met, then kept (not ``re``'s cache, which a server's
    many ignore patterns may turn over): not in every fresh checkpoint's imports."""
    return re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$",
                      re.MULTILINE)


def edited_paths(data: dict[str, Any]) -> list[str]:
    """The paths a ``tool_call`` event's tool changed (empty for anything else)."""
    edits = data.get("edits")
    if isinstance(edits, list):
        return [p for p in edits if isinstance(p, str) and 0 < len(p) <= MAX_PATH]
    name = data.get("name")
    args = data.get("input")
    if not isinstance(name, str):
        return []
    if name in ("apply_patch", "patch"):
        return _patch_paths(args)
    if name in ("shell", "exec_command", "local_shell", "bash") and _has_patch(args):
        return _patch_paths(args)  # Codex's apply_patch run through the shell
    if not isinstance(args, dict):
        return []
    if name == "str_replace_editor" and args.get("command") not in _EDITOR_COMMANDS:
        return []
    keys = _PATH_TOOLS.get(name, ("path",) if name == "str_replace_editor" else ())
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and 0 < len(value) <= MAX_PATH:
            return [value]
    return []


def _text(args: Any) -> str:
    if isinstance(args, str):
        return args
    if isinstance(args, dict):
        for key in ("input", "patch", "patch_text", "patchText", "command", "cmd"):
            value = args.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list):
                return "\n".join(v for v in value if isinstance(v, str))
    return ""


def _has_patch(args: Any) -> bool:
    return "*** Begin Patch" in _text(args)


def _patch_paths(args: Any) -> list[str]:
    out = []
    for m in _patch_re().finditer(_text(args)):
        path = m.group(1) or m.group(2)
        if path and len(path) <= MAX_PATH and path not in out:
            out.append(path)
    return out
