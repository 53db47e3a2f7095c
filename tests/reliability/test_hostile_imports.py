"""Hostile agent folders and transcripts: nothing outside is read through a link, nothing
blocks or grows without bound.

A symlinked Claude Code file-history backup must not bring ``~/.ssh/id_ed25519`` into
the store (``turnback show``) nor into the workspace (a rewind); a link, FIFO or device
given as a transcript is refused at once; links inside agents' folders are not walked;
an endless line is skipped with bounded memory. docs/attacks-imports.md lists them.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.importers import import_source
from turnback.importers.agents.claude_code import encode_project_dir
from wsutil import cli_env, picture

from .crashkit import tally

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- not-really-a-key\n"
CLI_TIMEOUT = 30  # a hang (FIFO) or an endless read (/dev/zero) fails instead of hanging


def count(case: str) -> None:
    tally("hostile imports").add_case(case, True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    (d / "src").mkdir(parents=True)
    (d / "src" / "app.py").write_text("print('now')\n")
    (d / "notes.txt").write_text("notes now\n")
    return d


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the workspace and the agent's folder: it must never be read."""
    f = tmp_path / "dot-ssh" / "id_ed25519"
    f.parent.mkdir()
    f.write_bytes(SECRET)
    return f


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def run(ws: Path, *args: str, env: dict[str, str] | None = None,
        limit_memory: bool = False) -> subprocess.CompletedProcess[bytes]:
    """``turnback ARGS`` in a subprocess; an address-space cap keeps an endless read from
    taking the machine down when this runs against code without the bound."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "turnback.cli.main", *args], cwd=ws, capture_output=True,
        env=env or cli_env(), timeout=CLI_TIMEOUT, preexec_fn=cap if limit_memory else None,
    )


def user_line(ws: Path, uuid: str, text: str, parent: str | None = None) -> str:
    return json.dumps({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s-1",
                       "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(ws),
                       "message": {"role": "user", "content": text}}) + "\n"


def claude_session(home: Path, ws: Path, backups: dict[str, str]) -> Path:
    """A Claude Code session of ``ws`` whose file-history snapshot names ``backups``."""
    project = home / ".claude" / "projects" / encode_project_dir(str(ws.resolve()))
    project.mkdir(parents=True)
    tracked = {rel: {"backupFileName": name, "version": 1} for rel, name in backups.items()}
    snap = {"type": "file-history-snapshot", "messageId": "u1", "isSnapshotUpdate": False,
            "snapshot": {"messageId": "u1", "timestamp": "2026-01-01T00:00:00.000Z",
                         "trackedFileBackups": tracked}}
    (project / "s-1.jsonl").write_text(
        user_line(ws, "u1", "edit the files") + json.dumps(snap) + "\n")
    return home / ".claude" / "file-history" / "s-1"


def assert_secret_nowhere(ws: Path, store: Store) -> None:
    for cp in store.checkpoints("s-1"):
        for rel in ("notes.txt", "src/app.py"):
            assert store.read_file(cp.id, rel) != SECRET
    for rel, entry in picture(ws).items():
        assert SECRET not in (entry[1] if isinstance(entry[1], bytes) else b""), rel


# -- links in agents' folders -----------------------------------------------------------------

def test_linked_backup_is_not_read_shown_or_rewound(
    ws: Path, home: Path, secret: Path
) -> None:
    history = claude_session(home, ws, {"src/app.py": "aaaa@v1", "notes.txt": "bbbb@v1"})
    history.mkdir(parents=True)
    (history / "aaaa@v1").write_bytes(b"print('before')\n")
    (history / "bbbb@v1").symlink_to(secret)  # the attack: a backup that is a link

    out = run(ws, "--json", "import", "claude-code", "--home", str(home))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["checkpoints"] == 1
    (problem,) = [p for p in result["problems"] if "bbbb@v1" in p["message"]]
    assert "symbolic link" in problem["message"] and "skipped" in problem["message"]
    assert SECRET not in out.stdout + out.stderr

    with Store.open(ws) as store:
        (cp,) = store.checkpoints("s-1")
        cp_id = cp.id
    shown = run(ws, "show", cp_id, "notes.txt")
    assert SECRET not in shown.stdout and shown.returncode != 0  # not in the checkpoint
    assert run(ws, "show", cp_id, "src/app.py").stdout == b"print('before')\n"
    rewound = run(ws, "rewind", cp_id)
    assert rewound.returncode == 0, rewound.stderr
    assert (ws / "src" / "app.py").read_bytes() == b"print('before')\n"
    assert (ws / "notes.txt").read_bytes() == b"notes now\n"  # left alone, not the secret
    with Store.open(ws) as store:
        assert_secret_nowhere(ws, store)
    count("file-history backup linked to ~/.ssh")


def test_linked_history_folder_is_not_entered(ws: Path, home: Path, secret: Path) -> None:
    history = claude_session(home, ws, {"notes.txt": "id_ed25519"})
    history.parent.mkdir(parents=True)
    history.symlink_to(secret.parent, target_is_directory=True)  # file-history/s-1 -> ~/.ssh
    with Store.open(ws) as store:
        result = import_source(store, "claude-code", home=home)
        assert result.checkpoints == 0
        assert any("symbolic link" in p.message for p in result.problems), result.problems
        assert_secret_nowhere(ws, store)
    count("file-history session folder linked to ~/.ssh")


def test_linked_transcript_named_by_path_is_refused(ws: Path, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "s-1.jsonl"
    real.parent.mkdir()
    real.write_text(user_line(ws, "u1", "from a linked transcript"))
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    for source in ("claude-code", "codex"):
        out = run(ws, "import", source, str(link))
        assert out.returncode == 1, out
        assert b"is a symbolic link" in out.stderr and str(link).encode() in out.stderr
    with Store.open(ws) as store:
        assert store.sessions()[0] == []
    count("transcript named by a link")


def test_links_inside_agent_folders_are_not_walked(ws: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "2026").mkdir(parents=True)
    meta = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "planted", "cwd": str(ws), "timestamp": "2026-01-01T00:00:00Z"}}
    (outside / "2026" / "rollout-planted.jsonl").write_text(json.dumps(meta) + "\n")
    (outside / "agent-x.jsonl").write_text(user_line(ws, "v1", "planted sub task"))
    # Codex: a linked folder among the dated ones, and a linked rollout file.
    sessions = home / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "2026").symlink_to(outside / "2026", target_is_directory=True)
    (sessions / "rollout-link.jsonl").symlink_to(outside / "2026" / "rollout-planted.jsonl")
    # Claude Code: a linked subagents folder and a linked transcript in the project.
    claude_session(home, ws, {})
    project = home / ".claude" / "projects" / encode_project_dir(str(ws.resolve()))
    (project / "s-1").mkdir()
    (project / "s-1" / "subagents").symlink_to(outside, target_is_directory=True)
    (project / "planted.jsonl").symlink_to(outside / "agent-x.jsonl")
    with Store.open(ws) as store:
        codex = import_source(store, "codex", home=home)
        claude = import_source(store, "claude-code", home=home)
        assert codex.sessions == [] and claude.sessions == ["s-1"]
        assert {s.header.id for s in store.sessions()[0]} == {"s-1"}
    assert sorted(Path(p.file).name for p in codex.problems) == ["2026", "rollout-link.jsonl"]
    assert sorted(Path(p.file).name for p in claude.problems) == ["planted.jsonl", "subagents"]
    assert all("symbolic link" in p.message for p in codex.problems + claude.problems)
    count("linked folders and files inside agents' folders")


# -- FIFOs, devices, endless lines -------------------------------------------------------------

@pytest.mark.parametrize("source", ["codex", "claude-code"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_fifo_and_device_are_refused_at_once(
    ws: Path, tmp_path: Path, source: str, kind: str
) -> None:
    if kind == "fifo":
        target = tmp_path / "pipe.jsonl"
        os.mkfifo(target)  # no writer: a blocking open or read would hang forever
        what = b"FIFO"
    else:
        target = Path("/dev/zero")  # endless: reading it whole grows without bound
        what = b"character device"
    out = run(ws, "import", source, str(target), limit_memory=True)
    assert out.returncode == 1, out
    assert what in out.stderr and str(target).encode() in out.stderr, out.stderr
    assert b"not a regular file" in out.stderr
    count(f"{kind} given to import {source}")


def test_endless_line_is_skipped_with_bounded_memory(ws: Path, tmp_path: Path) -> None:
    """70 MiB without a newline, bound 8 MiB: skipped and reported, memory stays near it."""
    big = tmp_path / "rollout-endless.jsonl"
    block = b"A" * (1 << 20)
    with big.open("wb") as f:
        for _ in range(70):
            f.write(block)
    code = (
        "import resource, sys\n"
        "from turnback import Store\n"
        "from turnback.importers import import_source\n"
        "s = Store.open(sys.argv[1])\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = import_source(s, 'codex', sys.argv[2])\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print((after - before) // 1024)\n"
        "print(r.problems[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ws), str(big)], capture_output=True,
                         env=cli_env(TURNBACK_MAX_LINE="8M"), timeout=CLI_TIMEOUT, check=True)
    grew_mib, problem = out.stdout.decode().splitlines()[:2]
    assert problem.startswith(f"{big}:1: line is longer than 8 MiB"), problem
    assert "TURNBACK_MAX_LINE" in problem
    assert int(grew_mib) < 30, f"memory grew by {grew_mib} MiB for an 8 MiB bound"
    count("70 MiB line without a newline")


def test_long_line_is_skipped_and_the_rest_imported(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "s-1.jsonl"
    f.write_text(user_line(ws, "u1", "first") + user_line(ws, "u2", "x" * 5000, "u1")
                 + user_line(ws, "u3", "third", "u1"))
    monkeypatch.setenv("TURNBACK_MAX_LINE", "4K")
    with Store.open(ws) as store:
        result = import_source(store, "claude-code", f)
        assert [e.id for e in store.session("s-1").events] == ["u1", "u3"]
    (problem,) = result.problems
    assert (problem.file, problem.line) == (str(f), 2)
    assert "longer than 4 KiB" in problem.message and "TURNBACK_MAX_LINE" in problem.message
    count("line over the bound among good lines")


def test_whole_document_over_the_bound_is_skipped(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snap = tmp_path / "snap.json"
    msgs = [{"role": "user", "content": "z" * 100} for _ in range(100)]
    snap.write_text(json.dumps({"version": 1, "messages": msgs, "pinned": [False] * 100}))
    monkeypatch.setenv("TURNBACK_MAX_LINE", "4K")
    with Store.open(ws) as store:
        result = import_source(store, "snapshot-json", snap)
        assert result.sessions == [] and store.sessions()[0] == []
    (problem,) = result.problems
    assert "over the 4 KiB" in problem.message and "file skipped" in problem.message
    count("JSON document over the bound")
