"""Results as the ``turnback`` command prints them: text, or JSON with ``--json``.

One place for both paths that print them: the CLI working in its own process, and a
running server answering a CLI's hand-off (``server/jobs/handoff.py``), so a hook's output
does not depend on whether an editor happened to be open. Each function returns what
goes to stdout and what goes to stderr.
"""

from __future__ import annotations

import json
import os
from typing import Any

import orjson

from ..errors import InvalidInput, TurnbackError
from ..fs.jsonl import MAX_NESTING, NESTED_TOO_DEEP
from ..fs.paths import one_line, quote
from ..models import jsonable

Printed = tuple[str, str]  # (stdout, stderr)


def json_text(value: Any) -> str:
    plain = _deep(value)
    try:
        data = orjson.dumps(plain, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        # a lone surrogate (a file name that is not UTF-8, in an event or a label): written
        # as its JSON escape, \\udcXX, which orjson refuses (a traceback before)
        text = json.dumps(plain, indent=2, ensure_ascii=False)
        return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"
    return data.decode("utf-8", "replace") + "\n"


def _deep(value: Any, depth: int = MAX_NESTING) -> Any:
    # bounded as the store writes (fs/jsonl.py): a session written before the bound (or
    # planted) may nest past what orjson writes, and this walk would recurse past Python's
    value = jsonable(value)
    if isinstance(value, (dict, list, tuple)) and depth <= 0:
        return NESTED_TOO_DEEP
    if isinstance(value, dict):
        return {k: _deep(v, depth - 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_deep(v, depth - 1) for v in value]
    return value


def checkpoint(cp: dict[str, Any], as_json: bool) -> Printed:
    """``turnback checkpoint``: ``cp`` is ``Checkpoint.to_json()``."""
    if as_json:
        return json_text(cp), ""
    out = f"{cp['id']}  {cp['files']} files, {cp['bytes']} bytes  {one_line(cp['label'])}\n"
    err = "".join(f"skipped {quote(str(s['path']))}: {one_line(str(s['reason']))}\n"
                  for s in cp["skipped"])
    return out, err


def rewind(res: dict[str, Any], verb: str, as_json: bool) -> Printed:
    """``turnback rewind`` and ``undo``: ``res`` is ``RewindResult.to_json()``."""
    if as_json:
        return json_text(res), ""
    lines: list[str] = []
    pre = "would " if res["dryRun"] else ""
    if res["mode"] != "conversation":
        lines += [f"{pre}overwrite {quote(p)}" for p in res["overwritten"]]
        lines += [f"{pre}create    {quote(p)}" for p in res["created"]]
        lines += [f"{pre}delete    {quote(p)}" for p in res["removed"]]
        n = len(res["overwritten"]) + len(res["created"]) + len(res["removed"])
        lines.append(f"{verb}: {n} file(s)" + ("" if res["dryRun"] else
                     f"; safety checkpoint {res['safetyCheckpoint']} (undo with 'turnback undo')"))
    if res["head"]:
        lines.append(f"session head: {res['head']}")
    return "".join(line + "\n" for line in lines), ""


def status(st: dict[str, Any], as_json: bool) -> Printed:
    """``turnback status``: ``st`` is ``Store.status()``."""
    if as_json:
        return json_text(st), ""
    out = (f"workspace   {quote(st['folder'])}\nstore       {quote(st['store'])} (format "
           f"{st['formatVersion']})\nsessions    {st['sessions']}\ncheckpoints "
           f"{st['checkpoints']}\ndisk usage  {size(st['bytes'])}\n")
    last = st.get("lastCheckpoint")
    if last:
        out += f"last        {last['id']}  {last['ts'][:19]}  {one_line(last['label'])}\n"
    if st.get("pendingRewind"):
        out += "an interrupted rewind is pending (it finishes on next open)\n"
    bg = st.get("background")
    if isinstance(bg, dict) and bg.get("pid"):
        out += (f"background  a server watches this workspace (pid {bg['pid']}; "
                "`turnback serve --stop` ends it)\n")
    limit = st.get("watchLimit")
    if isinstance(limit, dict) and limit.get("message"):
        out += f"warning     {limit['message']}\n"
    return out, ""


def size(n: int) -> str:
    f = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if f < 1024 or unit == "GB":
            return f"{f:.0f} {unit}" if unit == "B" else f"{f:.1f} {unit}"
        f /= 1024
    return f"{n} B"


def error(exc: BaseException, verb: str | None = None) -> tuple[int, str] | None:
    """The exit code and stderr line for a failure the CLI reports (2: bad input, 1: it
    failed), or None for one it does not expect (a bug: the traceback is wanted).
    ``verb``: the command that failed, named with a system error (which says what failed,
    not what the command was doing: "No such file or directory" alone told nothing)."""
    if isinstance(exc, InvalidInput):
        return 2, f"turnback: {one_line(exc.message)}\n"
    if isinstance(exc, TurnbackError):
        return 1, f"turnback: {one_line(exc.message)}\n"
    if isinstance(exc, OSError):
        return 1, f"turnback: {one_line(os_error(exc, verb))}\n"
    return None


def os_error(exc: OSError, verb: str | None = None) -> str:
    """A system error as a sentence: what failed, on which path (both, for a rename or a
    link), in which command, and what to do."""
    names = [quote(_name(f)) for f in (exc.filename, exc.filename2) if f not in (None, "")]
    doing = f"'turnback {verb}'" if verb else "the command"
    said = str(exc.strerror or exc)
    if names:
        return (f"{doing} stopped: {said}: {' -> '.join(names)}. Look at that path (removed "
                f"or changed by another program meanwhile?), then run {doing} again")
    return (f"{doing} stopped: {said} (the system named no file). Run it again; if it fails "
            "the same way, 'turnback fsck' checks the store")


def _name(filename: object) -> str:
    if isinstance(filename, int):
        return f"descriptor {filename}"
    return os.fsdecode(filename)  # type: ignore[arg-type]
