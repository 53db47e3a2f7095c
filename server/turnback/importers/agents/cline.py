"""Cline task folders (and Roo Code / Kilo Code, which keep the same files).

Where: VS Code's global storage of the extension, ``<editor config>/User/
globalStorage/<extension id>/tasks/<task id>/`` — ids ``saoudrizwan.claude-dev``
(Cline), ``rooveterinaryinc.roo-cline`` (Roo Code), ``kilocode.kilo-code`` (Kilo
Code) — with ``api_conversation_history.json`` (what went to the model),
``ui_messages.json`` (what the person saw, in order, with times) and
``task_metadata.json`` (files in context, edits). Cline's CLI keeps
``~/.cline/data/tasks/<id>/``.

A task folder is one session (id: the folder name, Cline's task id, a time in
ms). ``ui_messages.json`` is the timeline read: its ``say`` / ``ask`` messages
map to events (docs/IMPORT.md has the table). Each message keeps its ``ts`` —
Cline rewrites the file and edits a streaming message in place under the same
``ts`` — so ids hash the task and the ``ts``; a last message still ``partial``
is left for the next import (Cline leaves ``partial: true`` on texts a tool
call ended, so only the last one is taken as still streaming).
``checkpoint_created`` carries the commit hash of Cline's shadow git repository:
it is linked (``sourceCheckpoint``), not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...errors import InvalidInput, Unsafe
from ...events import JSON, Kind, SessionHeader
from ..base import (
    TITLE_FIRST_PROMPT,
    Context,
    DocumentParser,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_int,
    as_str,
    derive_id,
    iso_from_epoch,
    safe_id,
    short_title,
)
from ..chain import Chain
from ..editors import user_folders
from ..inputs import find, open_regular, read_regular
from ..matching import Matching, same_dir

UI_FILE = "ui_messages.json"
EXTENSION_IDS = {
    "cline": "saoudrizwan.claude-dev",
    "roo-code": "rooveterinaryinc.roo-cline",
    "kilo-code": "kilocode.kilo-code",
}
# Editors whose global storage may hold the extension (Linux and macOS layouts).
_CWD_RE = re.compile(rb"Current Working Directory \(([^)\\\n]+)\)")
CWD_SCAN = 1 << 20  # bytes of a task read to find its working folder

# tool names (say/ask "tool") whose `path` the agent changed
EDIT_TOOLS = frozenset({"editedExistingFile", "newFileCreated", "fileDeleted", "appliedDiff",
                        "insertContent", "searchAndReplace"})


def storage_roots(ctx: Context) -> list[Path]:
    """The editors' global storage folders on this machine."""
    return user_folders(ctx, "globalStorage")


def task_cwd(folder: Path) -> str | None:
    """The working folder a task ran in (Cline writes it into each request's context)."""
    for name in (UI_FILE, "api_conversation_history.json"):
        try:
            with open_regular(folder / name) as f:
                head = f.read(CWD_SCAN)
        except (OSError, Unsafe):
            continue
        m = _CWD_RE.search(head)
        if m:
            return m.group(1).decode("utf-8", "replace").strip()
    return None


def tasks_folders(ctx: Context, source: str) -> list[Path]:
    """The folders holding ``source``'s task folders (they need not exist yet)."""
    ext = EXTENSION_IDS[source]
    folders = [r / ext / "tasks" for r in storage_roots(ctx)]
    if source == "cline":
        folders.append(ctx.home / ".cline" / "data" / "tasks")
    return folders


def make_locate(source: str) -> Any:

    def locate(ctx: Context, path: Path | None) -> list[Path]:
        """PATH (a task folder, its ui_messages.json, or a folder of tasks), or this
        workspace's tasks."""
        if path is not None:
            if path.is_dir():
                if (path / UI_FILE).exists():
                    return [path]
                return [f.parent for f in find(path, "**", UI_FILE, refused=ctx.refused)]
            return [path.parent] if path.name == UI_FILE else [path]
        return matching(source).locate(ctx)

    return locate


def matching(source: str) -> Matching:
    """Every project's tasks share one ``tasks/`` folder; each task's requests name its
    working folder."""
    def candidates(ctx: Context) -> list[Path]:
        return [ui.parent for folder in tasks_folders(ctx, source)
                for ui in find(folder, "*", UI_FILE, refused=ctx.refused)]

    return Matching(candidates, lambda ctx, task: same_dir(task_cwd(task), ctx.workspace))


def _json_text(text: Any) -> JSON:
    if not isinstance(text, str):
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class ClineParser(DocumentParser):
    agent = "cline"

    def parse(self) -> Iterator[Record]:
        folder = self.path if self.path.is_dir() else self.path.parent
        ui_path = folder / UI_FILE if self.path.is_dir() else self.path
        try:
            loaded = orjson.loads(read_regular(ui_path, self.ctx.max_line))
        except (InvalidInput, Unsafe) as exc:
            yield self.problem(f"{exc.message}; task skipped")
            return
        except orjson.JSONDecodeError as exc:
            yield self.problem(f"{ui_path.name} is not valid JSON ({exc}); task skipped")
            return
        except OSError as exc:
            yield self.problem(f"cannot read {ui_path} ({exc.strerror or exc}); task skipped")
            return
        if not isinstance(loaded, list):
            yield self.problem(f"{ui_path.name} is not a list of messages; task skipped")
            return
        sid = safe_id(folder.name) or derive_id(str(folder))
        first = next((m for m in loaded if isinstance(m, dict)), {})
        started = _ts(first.get("ts")) or ""
        extra: JSON = {"taskFolder": str(folder)}
        cwd = task_cwd(folder)
        yield SessionRecord(SessionHeader(id=sid, agent=self.agent, started=started, cwd=cwd,
                                          source=self.agent, extra=extra))
        yield from self._messages(sid, loaded, started)

    def _messages(self, sid: str, messages: list[Any], started: str) -> Iterator[Record]:
        chain = Chain(sid, started)
        titled = False
        model: str | None = None
        output: tuple[str, list[str], str] | None = None  # a command's output being joined
        for index, raw in enumerate(messages):
            m = as_dict(raw)
            if not m or (m.get("partial") is True and index == len(messages) - 1):
                continue  # still streaming (Cline leaves `partial` on texts a tool call ended)
            ts = _ts(m.get("ts")) or chain.ts
            what = as_str(m.get("say")) or as_str(m.get("ask")) or "?"
            kind_of = "say" if isinstance(m.get("say"), str) else "ask"
            where = index if "ts" not in m else 0
            eid = "k" + derive_id(sid, m.get("ts"), kind_of, what, where)[1:]
            text = as_str(m.get("text")) or ""
            mid = as_str(as_dict(m.get("modelInfo")).get("modelId"))
            if mid and mid != model:
                model = mid
                yield MetaRecord(sid, {"model": mid})
            if what == "command_output":
                if output is None:
                    output = (eid, [], ts)
                output[1].append(text)
                continue
            if output is not None:
                yield self._output(chain, output)
                output = None
            if (what == "text" and index == 0) or what == "user_feedback" or what == "task":
                if not titled and short_title(text):
                    titled = True
                    yield MetaRecord(sid, {"title": short_title(text)}, TITLE_FIRST_PROMPT)
                data: JSON = {"text": text}
                if m.get("images"):
                    data["images"] = len(m["images"]) if isinstance(m["images"], list) else 1
                yield chain.add(eid, Kind.PROMPT, data, ts)
            elif what in ("text", "completion_result") and kind_of == "say":
                yield chain.add(eid, Kind.RESPONSE, {"text": text, "messageId": eid}, ts)
            elif what == "followup":
                question = as_str(_json_text(text).get("question")) or text
                yield chain.add(eid, Kind.RESPONSE, {"text": question, "followup": True,
                                                     "messageId": eid}, ts)
            elif what == "reasoning":
                yield chain.add(eid, Kind.THINKING, {"text": text}, ts)
            elif what == "tool":
                tool = _json_text(text)
                name = as_str(tool.get("tool")) or "tool"
                data = {"name": name, "input": tool, "toolUseId": eid}
                path = as_str(tool.get("path"))
                if name in EDIT_TOOLS and path:
                    data["edits"] = [path]
                yield chain.add(eid, Kind.TOOL_CALL, data, ts)
            elif what == "command":
                yield chain.add(eid, Kind.TOOL_CALL, {"name": "execute_command",
                                                      "input": {"command": text},
                                                      "toolUseId": eid}, ts)
            elif what == "api_req_started":
                yield from self._usage(chain, eid, text, ts)
            elif what == "checkpoint_created":
                yield chain.add(eid, Kind.NOTE, {
                    "text": "checkpoint (shadow git)",
                    "sourceCheckpoint": {"tool": self.agent,
                                         "hash": m.get("lastCheckpointHash")}}, ts)
            elif what in ("error", "api_req_failed", "mistake_limit_reached", "diff_error"):
                yield chain.add(eid, Kind.NOTE, {"text": text, "level": "error", "type": what}, ts)
            elif what in ("task_progress", "info", "completion_result", "resume_task",
                          "resume_completed_task", "api_req_finished"):
                yield chain.add(eid, Kind.NOTE, {"text": text, "type": f"{kind_of}/{what}"}, ts)
            else:
                yield chain.add(eid, Kind.RAW, {"type": f"{kind_of}/{what}", "raw": m}, ts)
        if output is not None:
            yield self._output(chain, output)

    def _output(self, chain: Chain, output: tuple[str, list[str], str]) -> Record:
        eid, chunks, ts = output
        call = chain.last
        return chain.add(eid, Kind.TOOL_RESULT, {"toolUseId": call, "isError": False,
                                                 "output": "".join(chunks)}, ts)

    def _usage(self, chain: Chain, eid: str, text: str, ts: str) -> Iterator[Record]:
        info = _json_text(text)
        if not any(k in info for k in ("tokensIn", "tokensOut")):
            return  # still under way: Cline fills the figures in later, under the same ts
        data: JSON = {
            "input": as_int(info.get("tokensIn")), "output": as_int(info.get("tokensOut")),
            "cacheRead": as_int(info.get("cacheReads")),
            "cacheCreation": as_int(info.get("cacheWrites")), "messageId": eid,
        }
        if isinstance(info.get("cost"), (int, float)):
            data["cost"] = info["cost"]
        yield chain.add(eid, Kind.USAGE, data, ts)


def _ts(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return iso_from_epoch(value / 1000) or None


class RooParser(ClineParser):
    agent = "roo-code"


class KiloParser(ClineParser):
    agent = "kilo-code"
