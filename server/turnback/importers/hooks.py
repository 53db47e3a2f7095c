"""Agents' own hooks: the configuration that makes an agent run ``turnback hook``.

Following a transcript (``follow.py``) sees a prompt once its line is on disk;
an agent's hook runs *before* the agent acts, and the agent waits for it. Where
an agent has hooks, ``turnback hooks install`` writes this workspace's hook
configuration so the agent itself calls ``turnback hook AGENT EVENT`` at each
new prompt and at each turn's end:

- Claude Code: ``.claude/settings.local.json`` (the workspace's own, not
  committed), ``hooks.UserPromptSubmit`` and ``hooks.Stop``; the hook JSON on
  stdin carries ``session_id``, ``transcript_path``, ``cwd``,
  ``hook_event_name`` (and ``prompt``). Its stdout on ``UserPromptSubmit`` is
  added to the model's context, so ``turnback hook`` prints nothing there.
- Gemini CLI: ``.gemini/settings.json``, ``hooks.BeforeAgent`` and
  ``hooks.AfterAgent``; the same fields on stdin; stdout must be JSON (``{}``).
- Codex: ``[hooks]`` in the workspace's ``.codex/config.toml``,
  ``UserPromptSubmit`` and ``Stop``: the same shape as Claude Code's (matcher
  groups of ``{type = "command", command, timeout}``, timeout in seconds) and the
  same fields on stdin (openai/codex ``codex-rs/config/src/hook_config.rs``,
  ``codex-rs/hooks/schema/generated/user-prompt-submit.command.input.schema.json``).
  Codex runs a hook the user has not reviewed only once it is trusted (its
  ``/hooks`` view writes ``trusted_hash`` into the user's own config): Turnback
  never writes that trust itself, and says so on install. Earlier versions
  installed ``notify`` (turn end only); uninstall removes that too, and
  ``turnback hook codex notify`` still takes its JSON argument.

Installing is idempotent and merges into the user's file (their hooks, keys
and order stay, and so does its mode); uninstalling removes exactly the entries
whose command is Turnback's. A file that is a link, or sits in a folder that is
one (a cloned repository can ship ``.claude -> ~/.claude``), that is not
JSON/TOML, is not an object, or nests past what a parser can hold, is refused,
never rewritten; it never stops ``status`` (nor the follower asking it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from stat import S_IMODE, S_ISREG
from typing import Any

from ..errors import InvalidInput, Unsafe
from ..fs.folders import open_dir, open_root
from ..fs.leftovers import remove_leftovers
from ..fs.replacing import replace_file
from .inputs import read_regular

MAX_CONFIG = 4 << 20  # a settings file larger than this is not one to rewrite

PROMPT, END = "prompt", "end"  # the two moments a hook checkpoints


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One agent's hook configuration: which file, which events mean what."""

    agent: str
    file: str  # relative to the workspace
    events: dict[str, str]  # the agent's event name → PROMPT or END
    kind: str  # "json-hooks" (Claude Code, Gemini CLI) or "toml-hooks" (Codex)
    timeout: int  # in the unit the agent reads (Claude Code: s, Gemini CLI: ms)
    stdout: str = ""  # what a hook prints on success


SPECS: dict[str, HookSpec] = {
    s.agent: s
    for s in (
        HookSpec("claude-code", ".claude/settings.local.json",
                 {"UserPromptSubmit": PROMPT, "Stop": END}, "json-hooks", timeout=30),
        HookSpec("gemini-cli", ".gemini/settings.json",
                 {"BeforeAgent": PROMPT, "AfterAgent": END}, "json-hooks", timeout=30_000,
                 stdout="{}"),
        HookSpec("codex", ".codex/config.toml", {"UserPromptSubmit": PROMPT, "Stop": END},
                 "toml-hooks", timeout=30),
    )
}


def spec(agent: str) -> HookSpec:
    if agent not in SPECS:
        raise InvalidInput(f"no hooks for agent {agent!r}; agents with hooks: {', '.join(SPECS)}")
    return SPECS[agent]


def hook_program() -> list[str]:
    """How an agent runs Turnback: this installation's ``turnback`` (absolute), else by name."""
    env = os.environ.get("TURNBACK_HOOK_PROGRAM")
    if env:
        return shlex.split(env)
    from ..fs.programs import find_program

    # absolute PATH entries only: a relative answer ('' in PATH) named the workspace's own
    found = find_program("turnback")
    return [found] if found else ["turnback"]


def command_for(agent: str, event: str, program: list[str] | None = None) -> str:
    return shlex.join([*(program or hook_program()), "hook", agent, event])


def _is_ours(command: object, agent: str) -> bool:
    """Whether a configured command is a ``turnback hook AGENT ...`` (any install path)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    # exactly "<program> hook AGENT EVENT", as command_for writes it: a user's own command
    # that starts so and goes on ("... Stop && notify-send done") is not ours to remove
    i = len(words) - 4
    return (i >= 0 and words[i + 1] == "hook" and words[i + 2] == agent
            and _names_turnback(words[: i + 1]))


def _names_turnback(program: list[str]) -> bool:
    last = program[-1] if program else ""
    return bool(re.search(r"(^|[/\\])turnback(\.exe)?$", last))


# -- reading and writing the agents' files -----------------------------------------------------
def _read_text(path: Path, under: Path | None = None) -> str | None:
    """The file's text; ``under``: the workspace, below which no folder may be a link."""
    if not os.path.lexists(path):
        return None
    try:
        return read_regular(path, MAX_CONFIG, under).decode("utf-8")
    except Unsafe as exc:
        raise Unsafe(f"{exc.message}; Turnback will not edit it") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; fix or move it, then try again") from None


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON: an agent's parser refuses them, and a number like
    # 1e999 would come back out of json.dumps as one
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is too large to be written back as it was")
    return value


class _KeyTwice(ValueError):
    pass


def _one_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # a key twice in one object: loading keeps the last, so writing back would drop the
    # other (the user's own setting, gone without a word)
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            raise _KeyTwice(f"the key {key[:80]!r} appears twice in one object, and "
                             "rewriting the file would keep only the last")
        seen.add(key)
    return dict(pairs)


def _load_json(path: Path, under: Path | None = None, writing: bool = False
               ) -> dict[str, Any] | None:
    """The file's object; ``writing``: also refuse what could not be written back whole."""
    text = _read_text(path, under)
    if text is None or not text.strip():
        return None
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite,
                          object_pairs_hook=_one_each if writing else None)
    except _KeyTwice as exc:
        raise InvalidInput(f"{path}: {exc}; fix it, then try again") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        why = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidInput(f"{path} is not valid JSON ({why}); fix it, then try again "
                           "(Turnback does not rewrite a file it cannot read)") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} holds a JSON {type(data).__name__}, not an object; "
                           "Turnback will not edit it")
    return data


def _json_text(data: dict[str, Any], indent: int | str) -> str:
    """The file's new text. A ``\\ud800`` escape (a lone surrogate) was read as such: it
    is written back as that escape (raw, it is no UTF-8 at all; before, a traceback)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _indent(path: Path, under: Path) -> int | str:
    """The indentation the file uses (2 when it is new or flat)."""
    text = _read_text(path, under) or ""
    m = re.search(r"\n([ \t]+)\S", text)
    if m is None:
        return 2
    return len(m.group(1)) if " " in m.group(1) else "\t"


def _write(workspace: Path, rel: str, text: str | None) -> None:
    """Replace (or, ``None``, remove) the workspace's file ``rel`` through folder
    descriptors: a folder on the way that is a link (``.claude -> ~/.claude``, or one
    swapped in meanwhile) is refused, never written through; the file keeps its mode."""
    *parts, name = rel.split("/")
    with open_root(str(workspace)) as root:
        if text is None:
            try:
                folder = open_dir(root, parts, create=False)
            except FileNotFoundError:
                return
            with folder:
                try:
                    folder.unlink(name)
                except FileNotFoundError:
                    pass
            try:  # the agent's folder, if installing made it and it is empty
                with open_dir(root, parts[:-1], create=False) as parent:
                    parent.rmdir(parts[-1])
            except (OSError, Unsafe):
                pass
            return
        with open_dir(root, parts, create=True) as folder:
            try:
                st = folder.lstat(name)
                # a link swapped in since the file was read has no mode of the user's to
                # keep (a link's is 0777: the settings would become world-writable)
                mode = S_IMODE(st.st_mode) if S_ISREG(st.st_mode) else None
            except FileNotFoundError:
                mode = None
            # a new file gets what the umask leaves of 0666, as an editor would make it
            replace_file(folder, name, text.encode("utf-8"), mode=mode, fsync=True)
            # a kill of an earlier write between its temporary file and the rename left
            # that file in the user's folder: nothing else would ever remove it
            remove_leftovers(folder, name)


# -- JSON hooks (Claude Code, Gemini CLI) ---------------------------------------------------------
def _json_entries(data: dict[str, Any], s: HookSpec) -> dict[str, bool]:
    hooks = data.get("hooks")
    out = dict.fromkeys(s.events, False)
    if not isinstance(hooks, dict):
        return out
    for event in s.events:
        groups = hooks.get(event)
        # a value of another shape is the user's (or a cloned repository's) to fix: it
        # holds no hook of ours, and install refuses to edit it
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(
                isinstance(h, dict) and _is_ours(h.get("command"), s.agent) for h in inner
            ):
                out[event] = True
    return out


def _json_install(data: dict[str, Any], s: HookSpec, program: list[str]) -> bool:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"'hooks' in {s.file} is not an object; Turnback will not edit it")
    present = _json_entries(data, s)
    changed = False
    for event in s.events:
        if present[event]:
            continue
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"'hooks.{event}' in {s.file} is not a list; "
                               "Turnback will not edit it")
        entry: dict[str, Any] = {"type": "command", "command": command_for(s.agent, event, program),
                                 "timeout": s.timeout}
        if s.agent == "gemini-cli":
            entry["name"] = "turnback"
        groups.append({"hooks": [entry]})
        changed = True
    return changed


def _json_uninstall(data: dict[str, Any], s: HookSpec) -> bool:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    changed = False
    for event in s.events:
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            kept = [h for h in group["hooks"]
                    if not (isinstance(h, dict) and _is_ours(h.get("command"), s.agent))]
            if len(kept) != len(group["hooks"]):
                changed = True
                if not kept:
                    continue  # the group held only Turnback's hook: it was ours
                group["hooks"] = kept
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if changed and not hooks:
        del data["hooks"]
    return changed


# -- Codex: notify in config.toml -------------------------------------------------------------
def _load_toml(path: Path, under: Path | None = None) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    text = _read_text(path, under)
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise InvalidInput(f"{path} is not valid TOML ({exc}); fix it, then try again") from None
    except RecursionError:
        raise InvalidInput(f"{path} nests too deeply for Turnback to rewrite it; fix it, "
                           "then try again") from None


def _notify_ours(doc: Any, agent: str) -> bool:
    notify = doc.get("notify")
    return isinstance(notify, list) and _is_ours(shlex.join(str(w) for w in notify), agent)


# an event an agent's older hook configuration sends (Codex's notify, before its hooks)
LEGACY_EVENTS = {"codex": {"agent-turn-complete": END, "notify": END}}


def _drop_notify(doc: Any, agent: str) -> bool:
    """Remove a ``notify`` an earlier Turnback installed (never the user's own)."""
    if not _notify_ours(doc, agent):
        return False
    del doc["notify"]
    return True


def _codex_trusted(config: Path) -> bool:
    """Whether the user trusted hooks of ``config`` in Codex: its ``/hooks`` review writes
    ``[hooks.state."<config path>:<event>:<group>:<handler>"] trusted_hash`` into the
    user's ``$CODEX_HOME/config.toml``. Until then Codex skips them, so the follower must
    not count on them (a hash Codex would now compute differently is not checked here)."""
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    try:
        state = _load_toml(home / "config.toml").get("hooks", {}).get("state", {})
    except (InvalidInput, Unsafe, OSError, AttributeError):
        return False
    if not isinstance(state, dict):
        return False
    trusted = {k for k, v in state.items() if isinstance(v, dict) and v.get("trusted_hash")}
    where = str(config)
    return all(any(where in k and (event in k or _snake(event) in k) for k in trusted)
               for event in ("UserPromptSubmit", "Stop"))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# -- the operations -------------------------------------------------------------------------
@dataclass(slots=True)
class HookState:
    agent: str
    file: str
    installed: bool  # every event's hook is there
    events: dict[str, bool]
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "file": self.file, "installed": self.installed,
                "events": self.events, "note": self.note}


def status(workspace: Path, agent: str) -> HookState:
    s = spec(agent)
    path = workspace / s.file
    if s.kind == "toml-hooks":
        events = _json_entries(_load_toml(path, workspace), s)
        trusted = all(events.values()) and _codex_trusted(path)
        note = ("" if trusted or not any(events.values()) else
                "Codex runs these hooks once you trust them: review them in Codex (/hooks); "
                "until then Turnback checkpoints Codex's turns by following its sessions")
        return HookState(agent, s.file, trusted, events, note)
    data = _load_json(path, workspace) or {}
    events = _json_entries(data, s)
    return HookState(agent, s.file, all(events.values()), events)


def install(workspace: Path, agent: str, program: list[str] | None = None) -> bool:
    """Write the agent's hooks for this workspace; False when they were there already."""
    s = spec(agent)
    path = workspace / s.file
    program = program or hook_program()
    if s.kind == "toml-hooks":
        import tomlkit

        doc = _load_toml(path, workspace)
        dropped = _drop_notify(doc, agent)  # the hooks replace an earlier install's notify
        if not _json_install(doc, s, program) and not dropped:
            return False
        _write(workspace, s.file, tomlkit.dumps(doc))
        return True
    data = _load_json(path, workspace, writing=True)
    indent = _indent(path, workspace)
    if data is None:
        data = {}
    if not _json_install(data, s, program):
        return False
    _write(workspace, s.file, _json_text(data, indent))
    return True


def uninstall(workspace: Path, agent: str) -> bool:
    """Remove exactly Turnback's hooks; False when there were none."""
    s = spec(agent)
    path = workspace / s.file
    if s.kind == "toml-hooks":
        import tomlkit

        doc = _load_toml(path, workspace)
        dropped = _drop_notify(doc, agent)
        if not _json_uninstall(doc, s) and not dropped:
            return False
        text = tomlkit.dumps(doc)
        _write(workspace, s.file, text if text.strip() else None)
        return True
    data = _load_json(path, workspace, writing=True)
    if data is None:
        return False
    indent = _indent(path, workspace)
    if not _json_uninstall(data, s):
        return False
    _write(workspace, s.file, _json_text(data, indent) if data else None)
    return True


def hooked_agents(workspace: Path) -> set[str]:
    """The agents whose Turnback hooks are installed here (a broken file counts as none)."""
    out = set()
    for agent in SPECS:
        try:
            if status(workspace, agent).installed:
                out.add(agent)
        except (InvalidInput, Unsafe, OSError):
            continue
    return out


# -- a hook's input -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HookCall:
    """What one hook run asks: checkpoint ``workspace`` at ``moment`` of ``session_id``."""

    agent: str
    moment: str  # PROMPT or END
    session_id: str | None
    workspace: Path | None
    prompt: str | None = None
    transcript: Path | None = None  # the agent's session file, when the hook names it


def parse_call(agent: str, event: str, payload: bytes, cwd: Callable[[], Path] = Path.cwd
               ) -> HookCall:
    """The hook JSON an agent passed (stdin, or Codex's argument) as a :class:`HookCall`."""
    s = spec(agent)
    try:
        data = json.loads(payload) if payload.strip() else {}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"the {agent} hook input is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"the {agent} hook input is not a JSON object")
    name = data.get("hook_event_name") or data.get("type") or event
    events = {**LEGACY_EVENTS.get(agent, {}), **s.events}
    moment = events.get(str(name)) or events.get(event)
    if moment is None:
        raise InvalidInput(f"{agent} hook event {name!r} is not one Turnback handles "
                           f"({', '.join(s.events)})")
    sid = data.get("session_id") or data.get("thread-id")
    where = data.get("cwd")
    prompt = data.get("prompt")
    transcript = data.get("transcript_path")
    return HookCall(agent, moment, sid if isinstance(sid, str) and sid else None,
                    Path(where) if isinstance(where, str) and os.path.isabs(where) else cwd(),
                    prompt if isinstance(prompt, str) else None,
                    Path(transcript) if isinstance(transcript, str)
                    and os.path.isabs(transcript) else None)
