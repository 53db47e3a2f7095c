"""aider chat history: ``.aider.chat.history.md`` in the workspace.

aider appends Markdown: ``# aider chat started at <time>`` opens a session.
What aider's writer (``aider/io.py``: ``user_input``, ``tool_output``,
``ai_output``, ``append_chat_history``) does, and this parser relies on:

- each line the person typed is ``#### <line>`` ending in a Markdown hard break
  (two spaces): ``linebreak=True`` rstrips the text and adds ``"  \n"``;
- aider's own output is ``> <message>`` (only the first line of a multi-line
  message), its last line also ending in the hard break;
- the model's answer is written whole, as ``"\n" + answer.strip() + "\n\n"``:
  plain text, whose own ``#### Heading`` lines have no hard break, and which
  ends with a blank line.

- a run of consecutive ``#### `` lines is one ``prompt``; a run that is a
  ``/command`` is a ``note`` (aider logs the message it carries again as a
  prompt of its own when it sends it);
- the text between is one ``response`` per block;
- ``> Applied edit to PATH`` → a ``tool_call`` (``apply_edit``) with its
  ``tool_result``; ``> Commit <hash> <msg>`` → a ``note`` with the commit;
  ``> Tokens: …`` → ``usage`` (aider rounds to 0.1k: the figures are approximate);
  other ``> `` lines → one ``note`` per block (aider's output).

Events chain in file order; ids hash the session and the block's first line
number, so an appended history adds only its new blocks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ...events import JSON, Event, Kind, SessionHeader
from ..base import (
    TITLE_FIRST_PROMPT,
    Context,
    EventRecord,
    FileParser,
    MetaRecord,
    RawLine,
    Record,
    SessionRecord,
    derive_id,
    short_title,
)
from ..given_path import file_or_folder
from ..inputs import in_workspace

AGENT = "aider"
HISTORY_FILE = ".aider.chat.history.md"
# Each linear in its line: a history file can come with a cloned repository, and the server
# follows it. "(.+?)\s*$" and a number run matched from every digit of it took time that grows
# with the square of the line (a 50 KB "Tokens:" line of digits: 21.8 s of CPU; 64 MiB lines are
# read): the rest of a line is cut by ``_rest``, and a number starts where its run starts.
_START = "# aider chat started at "
_TOKENS_RE = re.compile(r"(?<![\d.,])([\d.,]+)([kKmM]?) (sent|received|cache write|cache hit)")
_EDIT = "Applied edit to "
_COMMIT_RE = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*)")
# aider announces "Model: X with … edit format", or "Main model: X …" when a weak model differs
_MODEL_RE = re.compile(r"^(?:Main )?[Mm]odel: (\S+)")


def _rest(text: str, prefix: str) -> str | None:
    """What ``^prefix(.+?)\\s*$`` captures, without its backtracking: the text after
    ``prefix`` less its trailing blanks (its first character when it is all blanks)."""
    if not text.startswith(prefix) or len(text) == len(prefix):
        return None
    rest = text[len(prefix):]
    return rest.rstrip() or rest[0]
HARD_BREAK = "  "  # how aider ends every line it writes for the person or for itself


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """PATH, a folder's history file, or the workspace's own history file."""
    if path is None:
        default = in_workspace(ctx.workspace, HISTORY_FILE)
        return [default] if default is not None else []
    return file_or_folder(ctx, path, "**", HISTORY_FILE)


def parse_tokens(text: str) -> JSON | None:
    """Token figures of a ``Tokens: 3.7k sent, 1.5k received. …`` line."""
    found: dict[str, int] = {}
    for number, unit, what in _TOKENS_RE.findall(text):
        try:
            value = float(number.replace(",", ""))
        except ValueError:
            continue
        scale = {"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6}.get(unit, 1)
        found[what] = round(value * scale)
    if "sent" not in found and "received" not in found:
        return None
    return {
        "input": found.get("sent", 0),
        "output": found.get("received", 0),
        "cacheRead": found.get("cache hit", 0),
        "cacheCreation": found.get("cache write", 0),
        "approximate": True,
    }


def _is_own_event(body: str) -> bool:
    """Output lines that become events of their own (not part of a note)."""
    return bool(
        body.startswith("Tokens:") or _rest(body, _EDIT) is not None
        or _COMMIT_RE.match(body)
    )


def _session_id(stamp: str) -> str:
    try:
        when = datetime.strptime(stamp.strip(), "%Y-%m-%d %H:%M:%S")
        return "aider-" + when.strftime("%Y%m%dT%H%M%S")
    except ValueError:
        return "aider-" + derive_id(stamp)


def _iso(stamp: str) -> str:
    """aider writes local time without a zone; it is kept as written, marked local."""
    try:
        return datetime.strptime(stamp.strip(), "%Y-%m-%d %H:%M:%S").strftime(
            "%Y-%m-%dT%H:%M:%S.000"
        )
    except ValueError:
        return ""


@dataclass(slots=True)
class _Block:
    kind: str  # "prompt" | "text" | "output"
    line: int
    lines: list[str] = field(default_factory=list)


class AiderParser(FileParser):
    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.session_id: str | None = None
        self.ts = ""
        self.block: _Block | None = None
        self.last_event: str | None = None
        self.titled = False
        self.model: str | None = None
        self.seen: dict[str, int] = {}  # session ids in this file, to tell repeats apart
        self.in_fence = False
        self.blank_run = 0  # blank lines just read

    def feed(self, line: RawLine) -> Iterator[Record]:
        text = line.data.decode("utf-8", "replace").rstrip("\r\n")
        blank_before = self.blank_run
        self.blank_run = 0 if text.strip() else self.blank_run + 1
        stamp = _rest(text, _START)
        if stamp is not None:
            yield from self._close_block()
            yield from self._start(stamp, line.number)
            return
        if self.session_id is None:
            if text.strip():
                yield self.problem(line.number, "text before the first '# aider chat started at'")
            return
        # A `####` line is the person's only with aider's hard break: an answer's
        # "#### Step 1" heading has none. Inside a code fence of the answer, `> `
        # lines are the answer's unless they end in the hard break (aider's output
        # after an answer whose fence was never closed) or two blank lines precede
        # them (aider ends every answer that way).
        hard = text.endswith(HARD_BREAK)
        free = not self.in_fence or blank_before >= 2 or hard
        if hard and text.startswith("####"):
            self.in_fence = False
            body = text[5:] if text.startswith("#### ") else text[4:]
            yield from self._add("prompt", line.number, body.rstrip())
            return
        if free and (text == ">" or text.startswith("> ")):
            self.in_fence = False
            body = text[2:].rstrip()
            if _is_own_event(body):
                yield from self._close_block()
                yield from self._add("output", line.number, body)
                yield from self._close_block()
            else:
                yield from self._add("output", line.number, body)
            return
        if not text.strip():
            if self.block is not None and self.block.kind != "text":
                yield from self._close_block()
            elif self.block is not None:
                self.block.lines.append("")
            return
        if self.block is not None and self.block.kind == "output":
            self.block.lines.append(text.rstrip())  # a multi-line message aider printed
            return
        if text.lstrip().startswith("```"):
            self.in_fence = not self.in_fence
        yield from self._add("text", line.number, text)

    def finish(self, final: bool) -> Iterator[Record]:
        if not final:
            return
        if self.block is not None and self.block.kind == "text" and self.blank_run == 0:
            # aider writes an answer whole and ends it with a blank line: without one,
            # the file was read mid-write. Holding the answer back (not writing a cut
            # one under the id the whole answer will have) lets a later import or
            # the next line add it whole.
            yield self.problem(self.block.line, "the last answer is cut off (no blank line "
                               "after it: the file was read while aider wrote it); it is "
                               "imported once the file is whole")
            return
        yield from self._close_block()

    def _start(self, stamp: str, number: int) -> Iterator[Record]:
        sid = _session_id(stamp)
        n = self.seen.get(sid, 0) + 1
        self.seen[sid] = n
        if n > 1:
            sid = f"{sid}-{n}"
        self.session_id = sid
        self.ts = _iso(stamp)
        self.last_event = None
        self.titled = False
        self.model = None
        self.in_fence = False
        yield SessionRecord(
            SessionHeader(id=sid, agent=AGENT, started=self.ts, source=AGENT,
                          cwd=str(self.ctx.workspace), extra={"localTime": True})
        )

    def _add(self, kind: str, number: int, text: str) -> Iterator[Record]:
        if self.block is not None and self.block.kind != kind:
            yield from self._close_block()
        if self.block is None:
            self.block = _Block(kind, number)
        self.block.lines.append(text)

    def _close_block(self) -> Iterator[Record]:
        block, self.block = self.block, None
        if block is None or self.session_id is None:
            return
        text = "\n".join(block.lines).strip("\n")
        if block.kind == "prompt":
            yield from self._prompt(block, text)
        elif block.kind == "output":
            yield from self._output(block, text)
        elif text.strip():
            yield self._event(block.line, Kind.RESPONSE, {"text": text})

    def _event(self, number: int, kind: str, data: JSON, part: str = "") -> EventRecord:
        sid = self.session_id
        assert sid is not None
        eid = "a" + derive_id(sid, number, part)[1:]
        ev = Event(eid, sid, self.last_event, self.ts, kind, data)
        self.last_event = eid
        return EventRecord(ev)

    def _prompt(self, block: _Block, text: str) -> Iterator[Record]:
        sid = self.session_id
        assert sid is not None
        first = text.lstrip()
        if first.startswith("/"):
            command = first.split(None, 1)[0]
            yield self._event(block.line, Kind.NOTE, {"text": text, "command": command})
            return
        if not self.titled and short_title(text):
            self.titled = True
            yield MetaRecord(sid, {"title": short_title(text)}, TITLE_FIRST_PROMPT)
        yield self._event(block.line, Kind.PROMPT, {"text": text})

    def _output(self, block: _Block, text: str) -> Iterator[Record]:
        sid = self.session_id
        assert sid is not None
        head = block.lines[0] if block.lines else ""
        if head.startswith("Tokens:"):
            usage = parse_tokens(head)
            if usage is not None:
                yield self._event(block.line, Kind.USAGE, {**usage, "text": head})
                return
        path = _rest(head, _EDIT)
        if path is not None:
            call_id = "edit-" + derive_id(sid, block.line)
            yield self._event(block.line, Kind.TOOL_CALL,
                              {"name": "apply_edit", "input": {"path": path}, "toolUseId": call_id})
            yield self._event(block.line, Kind.TOOL_RESULT,
                              {"toolUseId": call_id, "isError": False, "output": text}, "result")
            return
        commit = _COMMIT_RE.match(head)
        if commit:
            yield self._event(block.line, Kind.NOTE,
                              {"text": text, "commit": commit.group(1),
                               "message": commit.group(2).rstrip()})
            return
        for out_line in block.lines:
            model = _MODEL_RE.match(out_line)
            if model and model.group(1) != self.model:
                self.model = model.group(1)
                yield MetaRecord(sid, {"model": self.model})
        yield self._event(block.line, Kind.NOTE, {"text": text, "output": True})
