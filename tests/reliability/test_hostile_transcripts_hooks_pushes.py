"""A red-team pass over the inputs earlier passes covered least: agents' transcripts (nesting,
session ids that name another tool's session), the hook settings Turnback rewrites, and
what a push does with what it finds (docs/RELIABILITY.md, "redteam9"). The attacker writes
files in the agents' folders in ``~`` or in the workspace; the store is this user's.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from turnback import Store
from turnback.errors import InvalidInput, TurnbackError
from turnback.events import Kind, SessionHeader
from turnback.fs.jsonl import MAX_NESTING, NESTED_TOO_DEEP
from turnback.importers import hooks
from turnback.importers.agents.claude_code import encode_project_dir
from turnback.importers.runner import import_source
from turnback.interchange import cli_text
from turnback.interchange.export import export_jsonl, export_markdown
from turnback.objects import packs as packs_mod
from turnback.sharing import operations

from .crashkit import tally

SID = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"


def count(case: str) -> None:
    tally("hostile input").add_case(case, True)


def nested(depth: int) -> str:
    """A JSON value ``depth`` containers deep (written by hand: json.dumps stops near 1,000)."""
    return "[" * (depth - 1) + '{"x": 1}' + "]" * (depth - 1)


def depth_of(value: Any) -> int:
    most, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (dict, list)):
            most = max(most, d)
            todo += [(x, d + 1) for x in (v.values() if isinstance(v, dict) else v)]
    return most


def transcript(path: Path, sid: str, deep: str = "1") -> Path:
    """A Claude Code transcript: a prompt, a tool call whose input holds ``deep``, a prompt."""
    def uuid(n: int) -> str:
        return f"{sid[:8]}-0000-4000-8000-{n:012d}"

    def line(n: int, parent: int | None, body: dict[str, Any]) -> str:
        return json.dumps({"parentUuid": None if parent is None else uuid(parent),
                           "sessionId": sid, "cwd": "/elsewhere", "uuid": uuid(n),
                           "timestamp": f"2026-02-10T22:57:5{n}.000Z", **body})

    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash",
           "input": {"command": "ls", "deep": "DEEP"}}
    path.write_text("\n".join([
        line(1, None, {"type": "user", "message": {"role": "user", "content": "first"}}),
        line(2, 1, {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                                                     "model": "m", "content": [use]}}
             ).replace('"DEEP"', deep),
        line(3, 2, {"type": "user", "message": {"role": "user", "content": "second"}}),
    ]) + "\n")
    return path


def everything_reads(store: Store, sid: str, remote: Path) -> dict[str, Any]:
    """What a user does with a session: list it as JSON, export it both ways, push the
    store. Each must work; the tool call's input as the JSONL export holds it."""
    log = store.session(sid)
    cli_text.json_text({"session": sid, "events": [e.to_json() for e in log.events]})
    jsonl = io.BytesIO()
    export_jsonl(store, sid, jsonl)
    export_markdown(store, sid, io.StringIO())
    out = operations.push(store, remote.as_uri())
    assert out["sessions"] >= 1
    for raw in jsonl.getvalue().splitlines():
        obj = orjson.loads(raw)
        if obj.get("kind") == Kind.TOOL_CALL:
            return dict(obj["data"]["input"])
    raise AssertionError("no tool call exported")


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    path = tmp_path / "team.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)
    return path


# -- nesting ---------------------------------------------------------------------------------
@pytest.mark.parametrize("depth", [300, 1015])
def test_an_imported_event_nested_past_what_orjson_writes_is_bounded(
        store: Store, tmp_path: Path, bare: Path, depth: int) -> None:
    """orjson reads 1,024 levels and writes 254; the standard library stops near 1,000.
    Before: 300 levels were imported, then ``session show --json``, both exports and every
    push of the store failed (``TypeError: Recursion limit reached``); 1,015 levels failed
    the whole file's import (``RecursionError``), leaving an empty session."""
    res = import_source(store, "claude-code", transcript(tmp_path / "t.jsonl", SID,
                                                         nested(depth)))
    assert res.events >= 3  # the prompt after it too
    kinds = [e.kind for e in store.session(SID).events]
    assert kinds.count(Kind.PROMPT) == 2 and Kind.TOOL_CALL in kinds
    for e in store.session(SID).events:
        assert depth_of(e.to_json()) <= MAX_NESTING
    kept = everything_reads(store, SID, bare)
    assert kept["command"] == "ls"  # the rest of the event is as it was
    assert NESTED_TOO_DEEP in json.dumps(kept["deep"])
    count(f"transcript nested {depth} deep")


def test_a_session_line_written_before_the_bound_still_lists_exports_and_pushes(
        store: Store, bare: Path) -> None:
    """A session file holding a line 300 deep (what this version wrote through its
    standard-library fallback, or a planted store): readable, exported, pushed."""
    store.start_session(title="old", agent="a", session_id="old1")
    store.append("old1", Kind.PROMPT, {"text": "hi"})
    path = store.root / "sessions" / "old1.jsonl"
    line = ('{"id":"e2","session":"old1","parent":null,"ts":"2026-01-01T00:00:00.000Z",'
            '"kind":"tool_call","data":{"name":"Bash","input":{"deep":' + nested(300) + '}}}')
    with open(path, "a") as f:
        f.write(line + "\n")
    assert depth_of(store.session("old1").events[-1].to_json()) > 254  # as it is on disk
    kept = everything_reads(store, "old1", bare)
    assert NESTED_TOO_DEEP in json.dumps(kept["deep"])
    count("session line nested 300 deep, written before the bound")


def test_a_line_nested_past_orjsons_reach_with_a_surrogate_escape_is_one_bad_line(
        store: Store) -> None:
    """A session line orjson refuses (nested 1,100 deep) that holds ``\\ud800`` besides, so
    the reader tries the standard library's ``json`` (for names that are not UTF-8). Before:
    its ``RecursionError`` escaped every session listing, load and ``fsck`` of the store
    (``turnback session list`` printed a traceback). After: one bad line, named."""
    store.start_session(title="t", agent="a", session_id="s1")
    store.append("s1", Kind.PROMPT, {"text": "hi"})
    with open(store.root / "sessions" / "s1.jsonl", "a") as f:
        f.write('{"id":"e2","session":"s1","parent":null,"ts":"2026-01-01T00:00:00.000Z",'
                '"kind":"note","data":{"x":"\\ud800","y":' + nested(1100) + "}}\n")
    assert [e.data for e in store.session("s1").events] == [{"text": "hi"}]
    assert [s.header.id for s in store.sessions()[0]] == ["s1"]
    (bad,) = store.fsck().damaged
    assert "s1.jsonl:3" in str(bad)
    count("session line nested 1100 deep with a surrogate escape")


def test_the_servers_answer_holding_a_line_nested_1015_deep_is_written() -> None:
    """A store from before the bound (or planted) holding a session line 1,015 deep (orjson
    reads it): the server's answer that carries it. Before: orjson refused it, pygls's
    ``json.dumps`` raised ``RecursionError``, which pygls logs, and no answer was written:
    the client's request waited for ever. After: written, bounded as the store writes."""
    from pygls.protocol import JsonRPCResponseMessage

    from turnback.server.transport.wire import _plain_body

    deep = orjson.loads(nested(1015))
    body = _plain_body(JsonRPCResponseMessage(id=7, jsonrpc="2.0",
                                              result={"events": [{"data": deep}]}))
    assert body is not None
    answer = orjson.loads(body)
    assert answer["id"] == 7 and NESTED_TOO_DEEP in json.dumps(answer)
    # a usual answer is orjson's bytes exactly, as before
    plain = JsonRPCResponseMessage(id=8, jsonrpc="2.0", result={"a": [1, {"b": None}]})
    assert _plain_body(plain) == orjson.dumps({"id": 8, "jsonrpc": "2.0",
                                               "result": {"a": [1, {"b": None}]}})
    count("server answer nested 1015 deep")


def test_a_failed_push_names_its_cause_not_a_broken_pipe(
        ws: Path, store: Store, bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A push that fails after it has sent a file to ``git fast-import`` (here: a store
    missing the objects of its second checkpoint, in packs as large checkpoints write them).
    Before: "turnback: Broken pipe" (closing the killed process's stdin raised over the
    error)."""
    monkeypatch.setattr(packs_mod, "LOG_BYTES", 0)
    (ws / "a.txt").write_text("a\n")
    store.checkpoint(label="one")
    packs = set(os.listdir(store.root / "objects" / "pack"))
    (ws / "b.txt").write_text("b\n")
    store.checkpoint(label="two")
    for name in set(os.listdir(store.root / "objects" / "pack")) - packs:
        os.unlink(store.root / "objects" / "pack" / name)
    with pytest.raises(TurnbackError, match="missing"):
        operations.push(store, bare.as_uri())
    count("push over a store missing objects")


def test_a_planted_object_map_line_does_not_stop_every_pull(tmp_path: Path) -> None:
    """``share/objmap`` is a store file (a copied or synced store's may say anything). A
    ``g`` line naming a tree this store holds, with a byte count that is no number. Before:
    taken as a tree converted before, then a ValueError traceback from this pull and every
    later one; after: converted again, the pulled checkpoint whole."""
    bare = tmp_path / "team.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    (tmp_path / "a" / "sub").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    with Store.open(tmp_path / "a", create=True) as a, \
            Store.open(tmp_path / "b", create=True) as b:
        (tmp_path / "a" / "sub" / "f.txt").write_text("f\n")
        (tmp_path / "a" / "top.txt").write_text("1\n")
        a.checkpoint(label="one")
        operations.push(a, bare.as_uri())
        operations.pull(b, bare.as_uri())
        objmap = b.root / "share" / "objmap"
        lines = objmap.read_text().splitlines()
        assert any(line.startswith("g") for line in lines)
        objmap.write_text("".join((line.rsplit(",", 2)[0] + ",x,1" if line.startswith("g")
                                   else line) + "\n" for line in lines))
        (tmp_path / "a" / "top.txt").write_text("2\n")  # sub/ unchanged: its tree is known
        a.checkpoint(label="two")
        operations.push(a, bare.as_uri())
        (got,) = operations.pull(b, bare.as_uri())["machines"]
        assert got["refused"] is None and got["checkpoints"] == 1
        two = next(c for c in b.checkpoints() if c.label == "two")
        assert b.read_file(two.id, "sub/f.txt") == b"f\n"
        assert not b.fsck().damaged
    count("object map line with a bad count")


def test_names_that_are_not_utf8_are_pushed_and_pulled_as_they_are(tmp_path: Path) -> None:
    """A workspace file named with a byte that is not UTF-8 reaches Python as a lone
    surrogate (``os.fsdecode``), and so a tool call's input, a checkpoint's label, a
    session's title; the store writes such lines with ``\\udcXX`` escapes. Before: every
    push of that store failed (``UnicodeEncodeError`` from the redaction automaton, then
    orjson's refusal), a traceback, and so did ``--json`` output and the Markdown export.
    After: pushed; pulled back exactly (a string where a secret was found is redacted with
    each such character as '?'); shown as its escape, ``\\udce9``."""
    bare = tmp_path / "team.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    odd = os.fsdecode(b"caf\xe9.txt")
    with Store.open(tmp_path / "a", create=True) as a, \
            Store.open(tmp_path / "b", create=True) as b:
        a.start_session(title=f"edit {odd}", agent="a", session_id="s1")
        a.append("s1", Kind.TOOL_CALL, {"name": "Read", "input": {
            "path": odd, "note": f"AKIAIOSFODNN7EXAMPLE {odd}"}})
        (tmp_path / "a" / "x.txt").write_text("x\n")
        a.checkpoint(label=f"after {odd}", session_id="s1")
        operations.push(a, bare.as_uri())
        (got,) = operations.pull(b, bare.as_uri())["machines"]
        assert got["refused"] is None and got["checkpoints"] == 1
        (sid,) = [s.header.id for s in b.sessions()[0] if s.header.id.startswith("s1@")]
        pulled = b.session(sid)
        assert pulled.header.title == f"edit {odd}"
        call = next(e for e in pulled.events if e.kind == Kind.TOOL_CALL)
        assert call.data["input"]["path"] == odd
        assert call.data["input"]["note"].startswith("[redacted:")
        assert [c.label for c in b.checkpoints()] == [f"after {odd}"]
        # and what a user reads of it: --json and the Markdown export (tracebacks before)
        assert '"caf\\udce9.txt"' in cli_text.json_text(call.to_json())
    from click.testing import CliRunner

    from turnback.cli.main import cli

    md = CliRunner().invoke(cli, ["-C", str(tmp_path / "a"), "export", "s1", "--format",
                                  "markdown"])
    assert md.exit_code == 0, md.output
    assert b"caf\\udce9.txt" in md.stdout_bytes
    count("names not UTF-8 through push and pull")


# -- session ids ------------------------------------------------------------------------------
def other_session(store: Store, case: str) -> str:
    if case == "workspace":
        store.checkpoint(label="mine")  # the store's own session, "workspace"
        return "workspace"
    sid = {"codex": "0199a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b", "pulled": "s1@laptop-0a1b2c3d"}[case]
    store.ensure_session(SessionHeader(sid, "theirs", "codex", None, "2026-01-01T00:00:00Z",
                                       None, "codex" if case == "codex" else "pulled"))
    if case == "codex":
        store.append(sid, Kind.PROMPT, {"text": "codex's own prompt"})
    return sid


@pytest.mark.parametrize("case", ["workspace", "codex", "pulled"])
def test_a_transcript_cannot_write_into_another_sources_session(
        store: Store, tmp_path: Path, case: str) -> None:
    """A transcript in ``~/.claude/projects`` (anyone who can write ``~``) whose
    ``sessionId`` is the store's own session, another agent's or a pulled (read-only) one.
    Before: its prompts were appended to that session, which took its title."""
    sid = other_session(store, case)
    before = store.session(sid)
    res = import_source(store, "claude-code", transcript(tmp_path / "t.jsonl", sid))
    after = store.session(sid)
    assert [e.id for e in after.events] == [e.id for e in before.events]
    assert after.header.title == before.header.title
    assert res.events == 0
    assert any(sid in p.message and "names the same id" in p.message for p in res.problems)
    count(f"transcript naming the {case} session")


def test_the_same_transcript_again_still_adds_its_new_lines(store: Store, tmp_path: Path
                                                           ) -> None:
    """The check above compares sources: a grown transcript of the same agent goes on."""
    path = transcript(tmp_path / "t.jsonl", SID)
    first = import_source(store, "claude-code", path).events
    with open(path, "a") as f:
        f.write(json.dumps({"parentUuid": f"{SID[:8]}-0000-4000-8000-000000000003",
                            "sessionId": SID, "uuid": f"{SID[:8]}-0000-4000-8000-000000000004",
                            "timestamp": "2026-02-10T22:58:00.000Z", "type": "user",
                            "message": {"role": "user", "content": "third"}}) + "\n")
    res = import_source(store, "claude-code", path)
    assert first >= 3 and res.events >= 1 and not res.problems


# -- checkpoint paths ---------------------------------------------------------------------------
@pytest.mark.parametrize("parts", [512, 513, 2000])
def test_a_backup_path_nesting_past_what_the_store_walks_is_not_imported(
        ws: Path, store: Store, tmp_path: Path, parts: int) -> None:
    """A Claude Code file-history snapshot (``~/.claude``: anyone who can write ``~``) whose
    tracked path has ``parts`` components, its backup file present. Before: 513 made a
    checkpoint ``fsck`` calls damaged ("nests more than 512 folders deep"), 2,000 a
    ``RecursionError`` out of the import (none of the file's events were taken). The store's
    ``import_checkpoint`` refuses such a path (next test), which the importer reports."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / encode_project_dir(str(ws.resolve()))
    project.mkdir(parents=True)
    history = home / ".claude" / "file-history" / SID
    history.mkdir(parents=True)
    (history / "b@v1").write_bytes(b"before\n")
    rel = "a/" * (parts - 1) + "x.txt"
    snap = {"type": "file-history-snapshot", "messageId": "u1", "isSnapshotUpdate": False,
            "snapshot": {"messageId": "u1", "timestamp": "2026-01-01T00:00:00.000Z",
                         "trackedFileBackups": {rel: {"backupFileName": "b@v1", "version": 1}}}}
    prompt = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": SID,
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(ws),
              "message": {"role": "user", "content": "edit"}}
    (project / f"{SID}.jsonl").write_text(json.dumps(prompt) + "\n" + json.dumps(snap) + "\n")
    res = import_source(store, "claude-code", home=home)
    assert res.events >= 1
    assert not store.fsck().damaged
    if parts <= 512:  # as deep as a checkpoint holds: taken, and readable
        (cp,) = store.checkpoints(SID)
        assert store.read_file(cp.id, rel) == b"before\n"
    else:
        assert store.checkpoints(SID) == []
        assert any("nests more than 512 folders" in p.message for p in res.problems)
    count(f"file-history path of {parts} components")



@pytest.mark.parametrize("parts", [512, 513, 2000])
def test_the_stores_import_checkpoint_refuses_a_path_nesting_past_what_it_walks(
        store: Store, parts: int) -> None:
    """Any caller of the API (a script, an importer to come): before, 600 components made a
    checkpoint ``fsck`` calls damaged and 2,000 a ``RecursionError``, with nothing stored."""
    rel = "a/" * (parts - 1) + "x.txt"
    sid = store.start_session().id
    if parts <= 512:
        cp = store.import_checkpoint({rel: b"deep\n"}, sid)
        assert store.read_file(cp.id, rel) == b"deep\n"
    else:
        with pytest.raises(InvalidInput, match="nests more than 512 folders"):
            store.import_checkpoint({rel: b"deep\n"}, sid)
        assert store.checkpoints() == []
    assert store.fsck().ok

# -- expressions over long lines ------------------------------------------------------------------
OLD_START = re.compile(r"^# aider chat started at (.+?)\s*$")
OLD_TOKENS = re.compile(r"([\d.,]+)([kKmM]?) (sent|received|cache write|cache hit)")
OLD_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*?)\s*$")
OLD_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.S)
TRICKY = ["", " ", "x", "x ", " x", "x  y  ", "x\t\u00a0", "\u2003", "  \t ", "2024-01-01 00:00:00",
          "a b\u3000", "Tokens: 3.7k sent, 1.5k received. Cost: $0.01 message, $0.02 session.",
          "1,234 sent 12.5M received ..5 cache hit x1.2k cache write 7 k sent", "1.2.3k sent"]


def test_the_linear_line_readers_find_what_the_expressions_found() -> None:
    """The aider and Claude Code readers that replaced backtracking expressions (below) give
    what those expressions gave, on blanks of every kind, empty rests, runs of numbers."""
    from turnback.importers.agents import aider, claude_code

    for rest in TRICKY:
        for prefix in (aider._START, aider._EDIT):
            old = re.match("^" + re.escape(prefix) + r"(.+?)\s*$", prefix + rest)
            assert aider._rest(prefix + rest, prefix) == (old.group(1) if old else None), rest
        assert aider._TOKENS_RE.findall(rest) == OLD_TOKENS.findall(rest), rest
        line = f"Commit abc1234 {rest}"
        old_c, new_c = OLD_COMMIT.match(line), aider._COMMIT_RE.match(line)
        assert old_c is not None and new_c is not None
        assert new_c.group(2).rstrip() == old_c.group(2), rest
    for text in ["", "<command-name>/x</command-name>",
                 "<command-name>a<command-name>b</command-name>",
                 "<command-name>\n/y\n</command-name><command-args>z",
                 "</command-name><command-name>", "<command-name><command-name>",
                 "pre <command-name>/c</command-name> <command-args> 1 </command-args>"]:
        old = OLD_COMMAND.search(text)
        assert claude_code._between(text, "command-name") == (old.group(1) if old else None)
        assert claude_code.prompt_title(text) == claude_code.short_title(
            text if old is None else f"{old.group(1).strip()} " + (
                m.group(1).strip() if (m := re.search(r"<command-args>(.*?)</command-args>",
                                                      text, re.S)) else ""))
    count("line readers against the expressions they replaced")


def test_long_lines_cost_time_in_proportion_to_their_length(ws: Path, store: Store,
                                                            tmp_path: Path) -> None:
    """A cloned repository ships ``.aider.chat.history.md`` (the server follows it), or a
    transcript in ``~`` holds such a prompt: a "Tokens:" line of 2 MiB of digits, a start line
    and an "Applied edit to" line padded with 2 MiB of blanks, a prompt of 150,000 opening
    ``<command-name>`` tags. Before: time growing with the square of the line (50 KB of
    digits: 21.8 s of CPU for ``turnback import aider``; these would take days: this test hit
    pytest's timeout). After: each read at once; what they hold is imported."""
    pad = " " * (2 << 20)
    (ws / ".aider.chat.history.md").write_text(
        f"# aider chat started at 2024-01-01 00:00:00{pad}\n\n#### hi\n\n"
        f"> Tokens: {'1' * (2 << 20)}\n\n#### again\n\n> Applied edit to a.txt{pad}x\n")
    res = import_source(store, "aider")
    assert res.events >= 3 and res.sessions
    text = "<command-name>" * 150_000
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"parentUuid": None, "sessionId": SID, "type": "user",
                                "uuid": f"{SID[:8]}-0000-4000-8000-000000000001",
                                "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(ws),
                                "message": {"role": "user", "content": text}}) + "\n")
    assert import_source(store, "claude-code", path).events == 1
    count("long lines for the aider and Claude Code readers")


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
PUTTY = "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1\nAAAA\nPrivate-MAC: 0a1b2c\n"


def test_a_file_of_opening_key_lines_is_redacted_in_time_proportional_to_it() -> None:
    """A workspace file (a cloned repository's: every first push converts it) of 4 MiB of
    "-----BEGIN RSA PRIVATE KEY-----" lines and none closing, or PuTTY headers with no MAC.
    Before: each opening line's lazy match ran to the content's end (128 KB: 1.6 s of CPU;
    4 MiB: about half an hour, past pytest's timeout). After: at once, nothing redacted."""
    from turnback.sharing.redact import redact_bytes

    for opening in (b"-----BEGIN RSA PRIVATE KEY-----\n", b"PuTTY-User-Key-File-2: x\n"):
        data = opening * ((4 << 20) // len(opening))
        assert redact_bytes(data) == (data, [])
        # one key at the end: the openings before it are the key's, as the expression says
        got, found = redact_bytes(data + (PEM if b"BEGIN" in opening else PUTTY).encode())
        assert got == b"[redacted:Private Key]\n" and len(found) == 1
    # a secret-like name over and over in one word, a token's start over and over, `//` over
    # and over beside `_authToken` (each tried again from every occurrence: 64 KB, 8.2, 0.57
    # and 1.8 s of CPU; 1 MiB: minutes)
    for unit in (b"token0", b"eyJA", b"_authToken////////"):
        data = unit * ((1 << 20) // len(unit))
        assert redact_bytes(data) == (data, [])
    count("a file of 4 MiB of opening key lines")


def test_key_redaction_bounded_at_the_last_closing_line_finds_what_it_found(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard of the bounds above: the same redactions with and without them."""
    import dataclasses

    from turnback.sharing import redact

    bounded_rules = redact._rules()
    # as before: no closing bound, no run skipped, the JSON Web Token searched everywhere
    unbounded = tuple(dataclasses.replace(
        r, end=None, end_bytes=None, run=None, run_bytes=None,
        **({"forward": 0, "locator": None, "locator_bytes": None}
           if r.kind == "JSON Web Token" else {})) for r in bounded_rules)
    begin, end = "-----BEGIN EC PRIVATE KEY-----", "-----END EC PRIVATE KEY-----"
    samples = [PEM, PUTTY, PEM + PEM, begin + "\n" + PEM, PEM + begin, "x" + PEM[:-30],
               begin + "-----END" + "\n" + end, end + begin + end, f"{begin}{end}-----END",
               PUTTY + "Private-MAC: ", PUTTY.replace("0a1b2c", "zz"), "a" + PUTTY + PUTTY,
               begin + "\n-----END OPENSSH PRIVATE KEY BLOCK-----tail", "nothing here",
               "token0token_PASSWORD='abcdefgh12'", "xTOKENtoken = \"s3cr3tvalue9\"",
               "api_keyAPI_KEY=abcdefgh99 # x", "secret0secret=\n'abcdefgh12'",
               "eyJAeyJhbGciOi.eyJzdWIiOiIx.sig", "eyJ.eyJhbGc.x eyJhbGciOi.eyJzdWIiOiIx",
               "eyJ-eyJ=eyJ_eyJ.eyJ", "aeyJhbGciOi.eyJzdWIiOiIx.sig+/="]
    for text in samples:
        for value in (text, text.encode()):
            got = redact.redact_bytes(value) if isinstance(value, bytes) \
                else redact.redact_text(value)
            monkeypatch.setattr(redact, "_rules", lambda: unbounded)
            want = redact.redact_bytes(value) if isinstance(value, bytes) \
                else redact.redact_text(value)
            monkeypatch.setattr(redact, "_rules", lambda: bounded_rules)
            assert got == want, text
    # the npm rule, found from where a token can follow: the expression's own matches, on
    # random strings of the pieces that matter to it (20,000 here, as str and as bytes)
    npm = next(r for r in bounded_rules if r.str_re.pattern == redact._NPM)
    pieces = ["//", "/", ":", "/:_authToken=", "_authToken=", "npm_", "x", " ", "\n", "\t",
              "0123456789abcdef0123456789abcdef0123", "abc-", "-", "\u2003"]
    rnd = random.Random(9)
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 14)))
        for value in (text, text.encode()):
            rx = npm.bytes_re if isinstance(value, bytes) else npm.str_re
            assert redact._npm_matches(rx, value, 1) == [m.span(1) for m in rx.finditer(value)]
    count("key redaction bound against the unbounded expressions")


# -- hook settings -----------------------------------------------------------------------------
def test_hooks_install_writes_a_lone_surrogate_escape_back_as_it_was(tmp_path: Path) -> None:
    """``"\\ud800"`` is valid JSON (json.loads reads it as a lone surrogate). Before: a
    traceback (``UnicodeEncodeError``) from ``hooks install``; after: the escape is written
    back, so the file means what it did, with the hooks."""
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"X": "\\ud800 \\u00e9"}}\n')
    assert hooks.install(tmp_path, "claude-code", ["/opt/tb/bin/turnback"])
    back = json.loads(settings.read_text(encoding="utf-8"))
    assert back["env"] == {"X": "\ud800 \u00e9"} and "hooks" in back
    assert hooks.uninstall(tmp_path, "claude-code")
    assert json.loads(settings.read_text(encoding="utf-8")) == {"env": {"X": "\ud800 \u00e9"}}
    count("settings holding a lone surrogate escape")


def test_hooks_install_refuses_a_key_twice_and_leaves_the_file(tmp_path: Path) -> None:
    """A settings file with a key twice in one object. Before: install kept the last and
    wrote the file back without the other (the user's setting gone, no word said)."""
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    text = '{"permissions": {"allow": ["A"]}, "permissions": {"allow": ["B"]}}\n'
    settings.write_text(text)
    for op in (hooks.install, hooks.uninstall):
        with pytest.raises(InvalidInput, match="'permissions' appears twice"):
            op(tmp_path, "claude-code", ["/opt/tb/bin/turnback"]) if op is hooks.install \
                else op(tmp_path, "claude-code")
        assert settings.read_text() == text
    assert hooks.status(tmp_path, "claude-code").installed is False  # reading still works
    count("settings holding a key twice")
