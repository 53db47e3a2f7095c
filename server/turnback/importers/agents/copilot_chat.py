"""GitHub Copilot Chat sessions, as VS Code keeps them in the workspace's storage.

From the documented / observed layout (no real file was available: tests use
fixtures written to it, docs/IMPORT.md says so). VS Code gives each workspace a
folder ``<editor config>/User/workspaceStorage/<hash>/`` whose ``workspace.json``
names it (``{"folder": "file:///path"}``); chat sessions are
``chatSessions/<session id>.json``: ``{version, sessionId, creationDate,
customTitle?, requests: [{requestId, timestamp, modelId?, message: {text},
response: [...], result: {errorDetails?}}]}``.

A request's ``message.text`` → ``prompt``; its ``response`` items: Markdown
(``{value}`` or ``markdownContent``) → one ``response``, ``thinking`` →
``thinking``, ``toolInvocationSerialized`` → ``tool_call`` (and a ``tool_result``
once complete), ``textEditGroup`` → a ``tool_call`` naming the edited file
(``edits``); ``result.errorDetails`` → a ``note``. Ids derive from the request
ids. Newer VS Code versions write ``chatSessions/*.jsonl`` (a log of changes to
the session): not read.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...events import JSON, Kind, SessionHeader
from ..base import (
    TITLE_FIRST_PROMPT,
    TITLE_SUMMARY,
    Context,
    DocumentParser,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_list,
    as_str,
    derive_id,
    iso_from_epoch,
    safe_id,
    short_title,
    sub_id,
)
from ..chain import Chain
from ..editors import user_folders
from ..given_path import file_or_folder
from ..inputs import find
from ..matching import Matching, same_dir


def storage_roots(ctx: Context) -> list[Path]:
    """The editors' per-workspace storage folders on this machine."""
    return user_folders(ctx, "workspaceStorage")


def folder_of(uri: Any) -> str | None:
    """The path of a ``file://`` URI (what ``workspace.json`` holds), or None."""
    if not isinstance(uri, str) or not uri.startswith("file://"):
        return None
    return urllib.parse.unquote(urllib.parse.urlparse(uri).path) or None


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """PATH (a session file, or a folder of them), or this workspace's chat sessions."""
    if path is not None:
        return file_or_folder(ctx, path, "**", "*.json")
    out: list[Path] = []
    for folder in chat_folders(ctx):
        out.extend(find(folder, "*.json", refused=ctx.refused))
    return out


def chat_folders(ctx: Context) -> list[Path]:
    """The ``chatSessions`` folders of the editors' storage of this workspace (they
    need not exist yet: the first chat makes it)."""
    return [marker.parent / "chatSessions" for marker in STORAGE.locate(ctx)]


def _names_workspace(ctx: Context, marker: Path) -> bool:
    doc = DocumentParser(marker, ctx).load(marker)
    return same_dir(folder_of(doc.get("folder")) if isinstance(doc, dict) else None,
                    ctx.workspace)


# every workspace's storage folder sits in workspaceStorage/; its workspace.json names it
STORAGE = Matching(lambda ctx: [m for root in storage_roots(ctx)
                                for m in find(root, "*", "workspace.json", refused=ctx.refused)],
                   _names_workspace)


def _ms(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    return iso_from_epoch(value / 1000)


def _markdown(item: JSON) -> str | None:
    kind = item.get("kind")
    if kind is None and isinstance(item.get("value"), str):
        return str(item["value"])
    if kind == "markdownContent":
        return as_str(as_dict(item.get("content")).get("value"))
    return None


def _message_text(value: Any) -> str:
    d = as_dict(value)
    if isinstance(d.get("value"), str):
        return str(d["value"])
    return as_str(d.get("text")) or ""


class CopilotChatParser(DocumentParser):
    def on_document(self, doc: JSON) -> Iterator[Record]:
        sid = safe_id(doc.get("sessionId")) or derive_id(self.path.name)
        started = _ms(doc.get("creationDate"))
        yield SessionRecord(SessionHeader(id=sid, agent="copilot-chat", started=started,
                                          source="copilot-chat",
                                          extra={"location": doc.get("initialLocation")}
                                          if isinstance(doc.get("initialLocation"), str) else {}))
        if isinstance(doc.get("customTitle"), str) and doc["customTitle"].strip():
            yield MetaRecord(sid, {"title": short_title(doc["customTitle"], 120)}, TITLE_SUMMARY)
        chain = Chain(sid, started)
        titled = False
        model = None
        for index, raw in enumerate(as_list(doc.get("requests"))):
            req = as_dict(raw)
            rid = safe_id(req.get("requestId"), sid) or "q" + derive_id(sid, index)[1:]
            ts = _ms(req.get("timestamp")) or chain.ts
            if isinstance(req.get("modelId"), str) and req["modelId"] != model:
                model = req["modelId"]
                yield MetaRecord(sid, {"model": model})
            text = as_str(as_dict(req.get("message")).get("text")) or ""
            if not titled and short_title(text):
                titled = True
                yield MetaRecord(sid, {"title": short_title(text)}, TITLE_FIRST_PROMPT)
            yield chain.add(rid, Kind.PROMPT, {"text": text}, ts)
            yield from self._response(chain, rid, as_list(req.get("response")), ts)
            error = as_dict(as_dict(req.get("result")).get("errorDetails"))
            if error:
                yield chain.add(sub_id(rid, "error"), Kind.NOTE, {
                    "text": as_str(error.get("message")) or "error", "level": "error"}, ts)

    def _response(self, chain: Chain, rid: str, items: list[Any], ts: str) -> Iterator[Record]:
        text: list[str] = []
        n = 0

        def flush() -> Iterator[Record]:
            nonlocal n
            if text:
                n += 1
                yield chain.add(sub_id(rid, f"r{n}"), Kind.RESPONSE,
                                {"text": "".join(text), "messageId": rid}, ts)
                text.clear()

        for i, raw in enumerate(items):
            item = as_dict(raw)
            md = _markdown(item)
            if md is not None:
                text.append(md)
                continue
            kind = item.get("kind")
            if kind == "thinking":
                yield from flush()
                yield chain.add(sub_id(rid, f"t{i}"), Kind.THINKING,
                                {"text": _message_text(item) or as_str(item.get("value")) or ""},
                                ts)
            elif kind == "toolInvocationSerialized":
                yield from flush()
                call = as_str(item.get("toolCallId")) or sub_id(rid, i)
                yield chain.add(sub_id(rid, f"c{i}"), Kind.TOOL_CALL, {
                    "name": as_str(item.get("toolId")) or "?",
                    "input": {"message": _message_text(item.get("invocationMessage"))},
                    "toolUseId": call}, ts)
                if item.get("isComplete") is True:
                    details = as_dict(item.get("resultDetails"))
                    yield chain.add(sub_id(rid, f"c{i}r"), Kind.TOOL_RESULT, {
                        "toolUseId": call, "isError": details.get("isError") is True,
                        "output": _message_text(item.get("pastTenseMessage"))}, ts)
            elif kind == "textEditGroup":
                yield from flush()
                uri = as_dict(item.get("uri"))
                path = as_str(uri.get("fsPath")) or as_str(uri.get("path")) or ""
                yield chain.add(sub_id(rid, f"e{i}"), Kind.TOOL_CALL, {
                    "name": "textEditGroup", "input": {"path": path},
                    "toolUseId": sub_id(rid, f"e{i}"), "edits": [path] if path else []}, ts)
        yield from flush()
