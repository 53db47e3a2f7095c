"""Where each followable source writes: the folders a live follower watches.

A source is followed live when its registry entry (``registry.Source``) has a
``watch`` function: given the workspace's :class:`Context`, it names the
folders in which this workspace's session files are created and grow, as
:class:`WatchRoot` (they need not exist yet — ``~/.claude/projects/<slug>`` is
made by Claude Code's first session here). The follower watches them, reads a
file that changed there if ``locate`` listed it, and runs ``locate`` again when
a file it does not know appears. So a new source plugs in by registering
``watch=`` beside its ``locate`` and ``parser``; nothing else changes.

An input is not always the file that changes: an SQLite database grows in its
``-wal``, a Cline task folder changes in its ``ui_messages.json``
(:func:`input_files` says which files stand for an input), and an OpenCode
session changes in its message files (a root's ``owner`` maps such a file to
the session it belongs to).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from .agents import cline, continue_dev, copilot_chat, copilot_cli, crush, gemini, opencode
from .agents.claude_code import encode_project_dir
from .base import Context


@dataclass(frozen=True, slots=True)
class WatchRoot:
    """A folder to watch; ``recursive`` for sources that file sessions by date.

    ``pattern`` (a file-name glob) says which of its files may be sessions, so a
    change to another file there (aider's history sits among the workspace's own
    files) wakes nothing. ``owner`` maps a changed file that is not an input
    itself to the input it belongs to (None: none, or the source looks again).
    """

    path: Path
    recursive: bool = False
    pattern: str = "*"
    owner: Callable[[Path], Path | None] | None = None
    # A lookout: nothing in it is read; a change there (a new storage folder, a
    # project registry written) means the roots must be worked out again, since
    # where this workspace's sessions go is only known once it is written.
    lookout: bool = False

    def holds(self, path: Path) -> bool:
        """Whether a change to ``path`` can concern this root."""
        if path == self.path:
            return True  # the root itself: it appeared (files may be in it already)
        if self.lookout:  # its new folders are watched too (agent_watch): any depth
            if path.parent == self.path:
                return fnmatchcase(path.name, self.pattern) or path.is_dir()
            return self.path in path.parents
        if path.parent != self.path and not (self.recursive and self.path in path.parents):
            return False
        return fnmatchcase(path.name, self.pattern) or (self.recursive and path.is_dir())


def claude_code_roots(ctx: Context) -> list[WatchRoot]:
    # subagents/ transcripts sit one level down: <session>/subagents/agent-*.jsonl
    return [WatchRoot(ctx.claude_dir / "projects" / encode_project_dir(str(ctx.workspace)),
                      recursive=True, pattern="*.jsonl")]


def codex_roots(ctx: Context) -> list[WatchRoot]:
    return [WatchRoot(ctx.codex_dir / "sessions", recursive=True,  # sessions/YYYY/MM/DD/
                      pattern="rollout-*.jsonl")]


def aider_roots(ctx: Context) -> list[WatchRoot]:
    """aider writes its history into the workspace itself."""
    return [WatchRoot(ctx.workspace, pattern=".aider.chat.history.md")]


def input_files(path: Path) -> tuple[Path, ...]:
    """The files whose change means the input ``path`` must be read again.

    A database: itself and its write-ahead log (SQLite in WAL mode writes there
    and copies into the ``.db`` only at a checkpoint). A folder (a Cline task):
    its ``ui_messages.json``, the one file its parser reads the turns from. Else
    the file itself.
    """
    if path.suffix == ".db":
        return (path, path.with_name(path.name + "-wal"))
    if path.is_dir() and not path.is_symlink():
        return (path / cline.UI_FILE,)
    return (path,)


def input_of(path: Path) -> Path:
    """The input a changed file stands for: a Cline task folder for its
    ``ui_messages.json``, a database for its ``-wal``; else the file itself
    (the inverse of :func:`input_files`)."""
    if path.name == cline.UI_FILE:
        return path.parent
    if path.name.endswith(".db-wal"):
        return path.with_name(path.name[:-4])
    return path


def _gemini_family(env_var: str, dirname: str) -> Callable[[Context], list[WatchRoot]]:
    def roots(ctx: Context) -> list[WatchRoot]:
        # chats/session-*.json (rewritten whole), session-*.jsonl and <sub>/*.jsonl
        # (appended); a project named in projects.json later gets a slug-named folder
        return [*(WatchRoot(f, recursive=True, pattern="*.json*")
                  for f in gemini.chat_folders(ctx, env_var, dirname)),
                WatchRoot(gemini.gemini_home(ctx, env_var, dirname), pattern="projects.json",
                          lookout=True)]
    return roots


gemini_roots = _gemini_family("GEMINI_CLI_HOME_DIR", ".gemini")
qwen_roots = _gemini_family("QWEN_HOME_DIR", ".qwen")


def _tasks_roots(source: str) -> Callable[[Context], list[WatchRoot]]:
    def roots(ctx: Context) -> list[WatchRoot]:
        # tasks/<id>/ui_messages.json: recursive, so a task folder made later is seen
        return [WatchRoot(f, recursive=True, pattern=cline.UI_FILE)
                for f in cline.tasks_folders(ctx, source)]
    return roots


cline_roots = _tasks_roots("cline")
roo_code_roots = _tasks_roots("roo-code")
kilo_code_roots = _tasks_roots("kilo-code")


def _database_roots(source: str) -> Callable[[Context], list[WatchRoot]]:
    folder, name = crush.DB_NAMES[source]

    def roots(ctx: Context) -> list[WatchRoot]:
        # the .db and its -wal (the -shm and -journal wake a look that finds no change)
        return [WatchRoot(ctx.workspace / folder, pattern=name + "*")]
    return roots


crush_roots = _database_roots("crush")
opencode_go_roots = _database_roots("opencode-go")


def copilot_cli_roots(ctx: Context) -> list[WatchRoot]:
    return [WatchRoot(copilot_cli.copilot_dir(ctx) / "history-session-state",
                      pattern="*.json")]


def opencode_roots(ctx: Context) -> list[WatchRoot]:
    """``session/<project>/<id>.json`` and ``message/<id>/<msg>.json``.

    ``part/`` is not watched (a folder per message of every project would cost a
    watch each): a message's parts are read when its message file is written,
    which OpenCode does as each step ends.
    """
    storage = opencode.storage_root(ctx)
    sessions = storage / "session"

    def owner(path: Path) -> Path | None:
        sid = path.parent.name  # message/<session id>/<message id>.json
        if path.parent.parent != storage / "message" or sid.startswith("."):
            return None
        try:
            projects = [p for p in sessions.iterdir() if p.is_dir() and not p.is_symlink()]
        except OSError:
            return None
        return next((p / f"{sid}.json" for p in projects if (p / f"{sid}.json").is_file()),
                    None)

    return [WatchRoot(sessions, recursive=True, pattern="*.json"),
            WatchRoot(storage / "message", recursive=True, pattern="*.json", owner=owner)]


def copilot_chat_roots(ctx: Context) -> list[WatchRoot]:
    # the editors' workspaceStorage: a storage folder made for this workspace later
    # (its workspace.json names it) brings a chatSessions folder to watch
    return [*(WatchRoot(f, pattern="*.json") for f in copilot_chat.chat_folders(ctx)),
            *(WatchRoot(r, lookout=True) for r in copilot_chat.storage_roots(ctx))]


def continue_roots(ctx: Context) -> list[WatchRoot]:
    return [WatchRoot(continue_dev.continue_dir(ctx) / "sessions", pattern="*.json")]
