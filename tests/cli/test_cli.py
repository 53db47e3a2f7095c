"""The CLI through subprocesses: the end-to-end scenario, exit codes, help, JSON."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from turnback.cli.main import cli
from wsutil import picture, run_cli


def j(ws: Path, *args: str, input: bytes | None = None) -> Any:
    """Run with --json and parse stdout."""
    return json.loads(run_cli(ws, "--json", *args, input=input).stdout)


def sh(ws: Path, script: str) -> None:
    subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ws, check=True)


def test_done_when_scenario(ws: Path) -> None:
    """Record a session, checkpoint, change files by shell, rewind, undo — byte-exact."""
    sh(ws, """
        printf 'node_modules/\\n.env\\n' > .gitignore
        printf 'def main():\\n    return 1\\n' > app.py
        printf 'notes\\n' > notes.txt
        printf 'to delete\\n' > doomed.txt
        printf '#!/bin/sh\\necho hi\\n' > run.sh
        mkdir -p lib && printf 'x = 1\\n' > lib/mod.py
        ln -s app.py current
        printf 'SECRET=one\\n' > .env
        mkdir -p node_modules/dep && printf 'dep\\n' > node_modules/dep/index.js
    """)
    init = j(ws, "init")
    assert init["formatVersion"] == 3 and init["store"].endswith(".turnback")
    sid = j(ws, "session", "start", "--title", "fix the app", "--agent", "test-agent",
            "--model", "m1")["id"]
    p = j(ws, "record", "prompt", "--session", sid, "--text", "make main return 2")
    call = j(ws, "record", "tool_call", "--session", sid, "--data",
             json.dumps({"name": "Bash", "input": {"command": "sed -i s/1/2/ app.py"},
                         "toolUseId": "t1"}))
    assert call["parent"] == p["id"]
    res = j(ws, "record", "tool_result", "--session", sid, "--data", "-",
            input=json.dumps({"toolUseId": "t1", "isError": False, "output": ""}).encode())
    assert res["parent"] == call["id"]
    j(ws, "record", "response", "--session", sid, "--text", "done")

    first = j(ws, "checkpoint", "-m", "before edits", "--session", sid)
    assert first["label"] == "before edits" and first["sessionId"] == sid
    at_first = picture(ws)

    sh(ws, """
        sed -i 's/return 1/return 2/' app.py
        printf 'brand new\\n' > created.txt
        mkdir -p newdir/sub && printf 'deep\\n' > newdir/sub/file.txt
        rm doomed.txt
        chmod +x run.sh
        chmod -x lib/mod.py || true
        head -c 4096 /dev/urandom > blob.bin
        printf '\\x00\\x01\\x02\\xff' > lib/data.bin
        rm current && ln -s notes.txt current
        ln -s lib linkdir
        printf 'SECRET=two\\n' > .env
        printf 'changed\\n' > node_modules/dep/index.js
    """)
    second = j(ws, "checkpoint", "-m", "after edits", "--session", sid)
    at_second = picture(ws)
    ignored_now = {k: at_second[k] for k in (b".env", b"node_modules/dep/index.js")}

    changes = {c["path"]: c["status"] for c in j(ws, "changes", first["id"], second["id"])[
        "changes"]}
    assert changes == {"app.py": "modified", "created.txt": "added",
                       "newdir/sub/file.txt": "added", "doomed.txt": "deleted",
                       "run.sh": "modified", "blob.bin": "added", "lib/data.bin": "added",
                       "current": "modified", "linkdir": "added"}
    diff = j(ws, "diff", first["id"], second["id"], "app.py")["diff"]
    assert "-    return 1\n+    return 2\n" in diff
    shown = run_cli(ws, "show", first["id"], "app.py").stdout
    assert shown == b"def main():\n    return 1\n"

    rw = j(ws, "rewind", first["id"])
    assert rw["safetyCheckpoint"] and not rw["dryRun"]
    after_rewind = picture(ws)
    expect = {k: v for k, v in at_first.items() if k not in ignored_now}
    expect.update(ignored_now)  # ignored files keep what they hold now
    assert after_rewind == expect
    assert os.readlink(ws / "current") == "app.py"
    assert not os.access(ws / "run.sh", os.X_OK)

    undo = j(ws, "undo")
    assert "created.txt" in undo["created"] and "doomed.txt" in undo["removed"]
    assert "created.txt" in rw["removed"] and "doomed.txt" in rw["created"]
    assert picture(ws) == at_second

    show = j(ws, "session", "show", sid)
    st = show["stats"]
    assert (st["prompts"], st["responses"], st["toolCalls"], st["toolResults"]) == (1, 1, 1, 1)
    assert st["checkpoints"] >= 2 and st["rewinds"] == 2
    kinds = [e["kind"] for e in show["events"]]
    assert kinds[:4] == ["prompt", "tool_call", "tool_result", "response"]
    ops = j(ws, "log")["operations"]
    assert [o["op"] for o in ops] == ["rewind", "undo"]
    assert j(ws, "fsck")["ok"] is True


def test_human_output_and_dry_run(ws: Path) -> None:
    (ws / "f.txt").write_text("one\n")
    run_cli(ws, "init")
    cp = run_cli(ws, "checkpoint", "-m", "one").stdout.decode().split()[0]
    (ws / "f.txt").write_text("two\n")
    out = run_cli(ws, "rewind", "--dry-run", cp).stdout.decode()
    assert "would overwrite f.txt" in out
    assert (ws / "f.txt").read_text() == "two\n"
    out = run_cli(ws, "changes", cp).stdout.decode()
    assert out.strip() == "M f.txt  +1 -1"
    out = run_cli(ws, "status").stdout.decode()
    assert "checkpoints 1" in out


def test_exit_codes_and_errors_on_stderr(ws: Path) -> None:
    # 1: failed — no store yet
    p = run_cli(ws, "status", check=None)
    assert p.returncode == 1 and b"no Turnback store" in p.stderr and p.stdout == b""
    run_cli(ws, "init")
    (ws / "f").write_text("x")
    cp = json.loads(run_cli(ws, "--json", "checkpoint").stdout)["id"]
    cases: list[tuple[tuple[str, ...], int, bytes]] = [
        (("rewind", "nope1234"), 1, b"no checkpoint 'nope1234'"),
        (("undo",), 1, b"nothing to undo"),
        (("rewind", cp, "../escape"), 1, b"outside the workspace"),
        (("rewind", cp, "/etc/passwd"), 1, b"absolute"),
        (("record", "note", "--session", "nosuch"), 1, b"no session 'nosuch'"),
        (("record", "note", "--session", "../x"), 2, b"session id '../x' is not a valid id"),
        (("session", "start"), 0, b""),
        (("record", "note", "--data", "{not json"), 2, b"--data is not valid JSON"),
        (("record", "note", "--data", "[1]"), 2, b"--data must be a JSON object"),
        (("record", "note", "--data", "{}", "--text", "x"), 2, b"not both"),
        (("rewind", cp, "--mode", "sideways"), 2, b"sideways"),
        (("no-such-verb",), 2, b"no-such-verb"),
        (("checkpoint", "--bogus"), 2, b"--bogus"),
        (("gc", "--keep-last", "-1"), 2, b"-1"),
        (("show", cp, "missing.txt"), 1, b"'missing.txt' does not exist"),
        (("fork", "no-event"), 1, b"no event 'no-event'"),
    ]
    for args, code, msg in cases:
        proc = run_cli(ws, *args, check=None)
        assert proc.returncode == code, (args, proc.returncode, proc.stderr)
        assert msg in proc.stderr, (args, proc.stderr)
        if code:
            assert b"Traceback" not in proc.stderr, args


def test_fsck_exit_code_on_damage(ws: Path) -> None:
    run_cli(ws, "init")
    sid = run_cli(ws, "session", "start").stdout.decode().strip()
    with open(ws / ".turnback" / "sessions" / f"{sid}.jsonl", "ab") as f:
        f.write(b"garbage\n")
    run_cli(ws, "record", "note", "--session", sid, "--text", "after")
    proc = run_cli(ws, "fsck", check=None)
    assert proc.returncode == 1
    assert f"damaged session {sid}".encode() in proc.stdout and b":2:" in proc.stdout
    rep = json.loads(run_cli(ws, "--json", "fsck", check=None).stdout)
    assert rep["ok"] is False and rep["damaged"][0]["what"] == "session"


def test_wrong_format_version_is_a_clear_error(ws: Path) -> None:
    run_cli(ws, "init")
    cfg = ws / ".turnback" / "config.json"
    data = json.loads(cfg.read_text())
    data["formatVersion"] = 99
    cfg.write_text(json.dumps(data))
    proc = run_cli(ws, "status", check=None)
    assert proc.returncode == 1
    assert b"format version 99" in proc.stderr and b"upgrade Turnback" in proc.stderr


def all_verbs() -> list[list[str]]:
    out: list[list[str]] = []

    def walk(group: click.Group, prefix: list[str]) -> None:
        for name, cmd in sorted(group.commands.items()):
            out.append([*prefix, name])
            if isinstance(cmd, click.Group):
                walk(cmd, [*prefix, name])

    walk(cli, [])
    return out


def test_help_on_every_verb(ws: Path) -> None:
    verbs = all_verbs()
    required = {"init", "status", "session", "record", "checkpoint", "checkpoints", "changes",
                "diff", "show", "rewind", "undo", "fork", "gc", "fsck", "log"}
    assert required <= {v[0] for v in verbs}
    # in-process for each verb (fast), then a real process for the entry point itself
    runner = CliRunner()
    for verb in verbs:
        res = runner.invoke(cli, [*verb, "--help"], prog_name="turnback")
        assert res.exit_code == 0, (verb, res.output)
        assert "Usage: turnback" in res.output and len(res.output) > 60, verb
    for args in (["--help"], ["rewind", "--help"], ["session", "start", "-h"]):
        out = run_cli(ws, *args).stdout
        assert b"Usage: turnback" in out
    assert not (ws / ".turnback").exists()  # help opens no store


def test_json_outputs_parse(ws: Path) -> None:
    run_cli(ws, "init")
    (ws / "f").write_text("x")
    run_cli(ws, "checkpoint")
    for args in (["session", "list"], ["checkpoints"], ["log"], ["status"],
                 ["gc", "--dry-run"], ["gc"], ["fsck"]):
        out = j(ws, *args)
        assert isinstance(out, dict) and out, args


@pytest.mark.parametrize("bad", [True, 0, "1", None])
def test_format_version_that_is_no_number_is_a_clear_error(ws: Path, bad: object) -> None:
    run_cli(ws, "init")
    cfg = ws / ".turnback" / "config.json"
    data = json.loads(cfg.read_text())
    data["formatVersion"] = bad
    cfg.write_text(json.dumps(data))
    proc = run_cli(ws, "status", check=None)
    assert proc.returncode == 1
    assert b"is not a version number" in proc.stderr and b"config.json" in proc.stderr
    assert json.loads(cfg.read_text())["formatVersion"] == bad  # left as it was


ODD = {"a\nb.txt": '"a\\nb.txt"', "tab\there.txt": '"tab\\there.txt"',
       "esc\x1b[31mred.txt": '"esc\\033[31mred.txt"', "plain.txt": "plain.txt",
       "bidi\u202etxt.exe": '"bidi\\342\\200\\256txt.exe"'}


def test_text_output_quotes_names_with_control_characters(ws: Path) -> None:
    """A name holding a newline must not print as two lines (a forged entry), nor one
    holding an escape drive the terminal: text output quotes it as git does; JSON keeps
    the name itself."""
    for name in ODD:
        (ws / name).write_text("one\n")
    (ws / "big\nfile.bin").write_bytes(b"x" * 2048)
    run_cli(ws, "init")
    cfg = ws / ".turnback" / "config.json"
    cfg.write_text(cfg.read_text().replace('"size_cap_bytes": 52428800', '"size_cap_bytes": 1024'))
    made = run_cli(ws, "checkpoint", "-m", "one")
    assert 'skipped "big\\nfile.bin": ' in made.stderr.decode()
    cp = made.stdout.decode().split()[0]
    for name in ODD:
        (ws / name).write_text("two\n")
    outputs = {
        "rewind": run_cli(ws, "rewind", "--dry-run", cp).stdout.decode(),
        "changes": run_cli(ws, "changes", cp).stdout.decode(),
        "diff": run_cli(ws, "diff", cp).stdout.decode(),
    }
    for quoted in ODD.values():
        assert f"would overwrite {quoted}\n" in outputs["rewind"]
        assert f"M {quoted}  +1 -1\n" in outputs["changes"]
        header = f'"{cp}/{quoted[1:]}' if quoted.startswith('"') else f"{cp}/{quoted}"
        assert f"--- {header}\n" in outputs["diff"]
    for out in outputs.values():
        assert "\x1b" not in out and "\u202e" not in out and "\t" not in out.replace("\\t", "")
        assert not any(line.startswith(("b.txt", "file.bin")) for line in out.splitlines())
    err = run_cli(ws, "show", cp, "no\nsuch", check=None).stderr.decode()
    assert err == f'turnback: "no\\nsuch" does not exist in checkpoint {cp}\n'
    # --json: the names themselves, JSON-escaped
    got = {c["path"] for c in j(ws, "changes", cp)["changes"]}
    assert got == set(ODD)


@pytest.mark.parametrize("verb", [["status"], ["rewind", "nope1234"]])
def test_auto_init_is_on_for_1_and_off_for_0(ws: Path, verb: list[str]) -> None:
    """``TURNBACK_AUTO_INIT=0`` turned it on, as any non-empty value did: a command in a
    folder without a store made one. ``0`` and empty now leave it off (as
    ``TURNBACK_BACKGROUND=0``), ``1`` on; through click (``status``) and the fast path
    that does a plain rewind line without it (``cli/direct.py``)."""
    from wsutil import cli_env

    for value in ("0", ""):
        p = run_cli(ws, *verb, check=None, env={**cli_env(), "TURNBACK_AUTO_INIT": value})
        assert p.returncode == 1 and b"no Turnback store" in p.stderr, (value, p.stderr)
        assert not (ws / ".turnback").exists()
    run_cli(ws, *verb, check=None, env={**cli_env(), "TURNBACK_AUTO_INIT": "1"})
    assert (ws / ".turnback" / "config.json").is_file()


def test_a_lone_surrogate_planted_in_a_label_is_shown_not_a_traceback(ws: Path) -> None:
    """``\\ud800`` in a record of ``checkpoints.jsonl`` (a store file anyone who can write
    the workspace can plant; no file name decodes to it): ``turnback checkpoints`` ended in
    a ``UnicodeEncodeError`` traceback (``fs/paths.display``). It shows U+FFFD."""
    (ws / "f").write_text("x")
    run_cli(ws, "checkpoint", "-m", "ok")
    index = ws / ".turnback" / "checkpoints.jsonl"
    rec = json.loads(index.read_text().splitlines()[-1])
    rec["label"] = "bad\ud800label"
    rec["id"] = rec["id"][:-1] + ("0" if rec["id"][-1] != "0" else "1")
    with index.open("a") as f:
        f.write(json.dumps(rec) + "\n")
    p = run_cli(ws, "checkpoints", check=None)
    assert p.returncode == 0, p.stderr
    assert "bad\ufffdlabel" in p.stdout.decode("utf-8", "replace")
