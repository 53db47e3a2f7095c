"""``turnback fsck --repair`` (branch junk35): a log whose junk tail refuses every append
(``NoLastObject``) has that tail moved to a side file beside it, byte for byte; appends,
``gc`` and ``undo`` work again. Before, the refusal said to remove the lines by hand and
``fsck`` had no option to do it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from turnback import Store
from wsutil import run_cli

JUNK = b"x\n" * 1500 + b"{}\n" * 600 + b"[1]\r\n" * 10 + b'{"torn'


def _session(ws: Path) -> tuple[str, Path]:
    run_cli(ws, "init")
    sid = run_cli(ws, "session", "start").stdout.decode().strip()
    run_cli(ws, "record", "note", "--session", sid, "--text", "before")
    return sid, ws / ".turnback" / "sessions" / f"{sid}.jsonl"


def test_repair_moves_a_sessions_junk_tail_aside(ws: Path) -> None:
    sid, path = _session(ws)
    kept = path.read_bytes()
    with open(path, "ab") as f:
        f.write(JUNK)
    refused = run_cli(ws, "record", "note", "--session", sid, "--text", "x", check=None)
    assert refused.returncode != 0 and b"fsck --repair" in refused.stderr
    out = run_cli(ws, "fsck", "--repair", check=None).stdout.decode()
    side = Path(f"{path}.junk-1")
    assert f"into {side}" in out and f"moved {len(JUNK)} bytes" in out
    assert side.read_bytes() == JUNK and path.read_bytes() == kept  # every byte kept
    with Store.open(ws) as st:
        last = st.session(sid).head
    run_cli(ws, "record", "note", "--session", sid, "--text", "after")
    with Store.open(ws) as st:
        log = st.session(sid)
        assert log.events[-1].parent == last and log.head == log.events[-1].id
    again = json.loads(run_cli(ws, "--json", "fsck", "--repair").stdout)
    assert again["ok"] is True and again["setAside"] == []  # idempotent
    assert not Path(f"{path}.junk-2").exists()


def test_repair_lets_gc_and_undo_run_after_oplog_junk(ws: Path) -> None:
    run_cli(ws, "init")
    run_cli(ws, "checkpoint")
    oplog = ws / ".turnback" / "oplog.jsonl"
    with open(oplog, "ab") as f:
        f.write(b"[]\n" * 1100)
    assert run_cli(ws, "gc", check=None).returncode != 0
    assert b"oplog.jsonl" in run_cli(ws, "undo", check=None).stderr
    rep = json.loads(run_cli(ws, "--json", "fsck", "--repair", check=None).stdout)
    assert [m["side"] for m in rep["setAside"]] == [f"{oplog}.junk-1"]
    assert Path(f"{oplog}.junk-1").read_bytes() == b"[]\n" * 1100
    run_cli(ws, "gc")


def test_repair_refuses_while_a_writer_holds_the_lock(ws: Path) -> None:
    fcntl = pytest.importorskip("fcntl")  # the lock's stand-in writer: flock, as Turnback's
    _sid, path = _session(ws)
    with open(path, "ab") as f:
        f.write(JUNK)
    before = path.read_bytes()
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc = run_cli(ws, "fsck", "--repair", check=None)
    finally:
        os.close(fd)
    assert proc.returncode != 0 and f"{path}.lock".encode() in proc.stderr
    assert path.read_bytes() == before and not Path(f"{path}.junk-1").exists()


def test_repair_of_a_run_of_records_that_set_no_head_lets_appends_run(ws: Path) -> None:
    """1,100 copies of the header (or ``meta`` lines naming no head) after the last event:
    ``load`` passes over them, as the head read does, which refuses the file. The repair
    cut after the last of them: "moved 0 bytes", an empty side file each run, appends still
    refused (branch redteam45). It cuts after the last line the head read stops at."""
    sid, path = _session(ws)
    kept = path.read_bytes()
    header = kept.split(b"\n", 1)[0] + b"\n"
    junk = header * 1100 + b'{"type":"meta","title":"planted"}\n' * 10
    with open(path, "ab") as f:
        f.write(junk)
    rep = json.loads(run_cli(ws, "--json", "fsck", "--repair", check=None).stdout)
    assert [(m["side"], m["bytes"]) for m in rep["setAside"]] == [(f"{path}.junk-1", len(junk))]
    assert path.read_bytes() == kept and Path(f"{path}.junk-1").read_bytes() == junk
    run_cli(ws, "record", "note", "--session", sid, "--text", "after")
    again = json.loads(run_cli(ws, "--json", "fsck", "--repair").stdout)
    assert again["setAside"] == [] and not Path(f"{path}.junk-2").exists()


def test_repair_keeps_the_header_of_a_session_with_no_event(ws: Path) -> None:
    """A session of a header only, then junk: the header is the one line kept."""
    run_cli(ws, "init")
    sid = run_cli(ws, "session", "start").stdout.decode().strip()
    path = ws / ".turnback" / "sessions" / f"{sid}.jsonl"
    kept = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b"{}\n" * 1100)
    run_cli(ws, "fsck", "--repair", check=None)
    assert path.read_bytes() == kept
    run_cli(ws, "record", "note", "--session", sid, "--text", "after")
    with Store.open(ws) as st:
        assert [e.data.get("text") for e in st.session(sid).events] == ["after"]


def test_a_link_at_a_sessions_name_is_passed_over_by_the_repair(ws: Path) -> None:
    """A link planted in ``sessions/`` stopped the whole repair at it, before any other
    file was repaired and with no report (branch redteam45): it is left as it is, named by
    the check, and the file it leads to is not touched."""
    sid, path = _session(ws)
    with open(path, "ab") as f:
        f.write(b"{}\n" * 1100)
    victim = ws.parent / "victim.jsonl"
    victim.write_bytes(b'{"a":1}\n' + b"[]\n" * 1100)
    link = path.parent / "00000000T000000-aaaaaa.jsonl"
    os.symlink(victim, link)
    proc = run_cli(ws, "--json", "fsck", "--repair", check=None)
    rep = json.loads(proc.stdout)
    assert proc.returncode == 1 and [m["file"] for m in rep["setAside"]] == [str(path)]
    assert any(str(link) in str(d["problem"]) or d.get("id") == link.stem
               for d in rep["damaged"])
    assert victim.read_bytes() == b'{"a":1}\n' + b"[]\n" * 1100 and os.path.islink(link)
    run_cli(ws, "record", "note", "--session", sid, "--text", "after")


def test_the_side_file_and_its_name_are_on_disk_before_the_log_is_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The side file is new: its folder's entry must be synced too before the log is cut,
    else a power cut could keep the shorter log and lose the side file's name (and the
    bytes it holds). Seen failing without the folder's sync (lead, after junk35)."""
    from turnback.fs import atomic, junk_tail

    log = tmp_path / "s.jsonl"
    log.write_bytes(b'{"type":"session","id":"s"}\n' + b"x\n" * 1100)
    steps: list[str] = []
    real_fsync, real_truncate, real_dir = os.fsync, os.ftruncate, atomic.fsync_dir

    def fsync(fd: int) -> None:
        steps.append("fsync")
        real_fsync(fd)

    def ftruncate(fd: int, length: int) -> None:
        steps.append("cut")
        real_truncate(fd, length)

    def fsync_dir(path: Path) -> None:
        steps.append(f"folder {path.name}")
        real_dir(path)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "ftruncate", ftruncate)
    monkeypatch.setattr(junk_tail, "fsync_dir", fsync_dir)
    moved = junk_tail.set_aside(log)
    assert moved is not None and moved.bytes == 2200
    assert steps.index(f"folder {tmp_path.name}") < steps.index("cut"), steps
    assert steps.index("fsync") < steps.index("cut")


@pytest.mark.parametrize("log", ["oplog.jsonl", "checkpoints.jsonl"])
def test_repair_moves_a_run_of_objects_that_are_no_record(ws: Path, log: str) -> None:
    """1,100 ``{}`` after a log's last record: the repair kept any object, so it moved
    nothing of ``oplog.jsonl``'s (undo still refused) and never looked at
    ``checkpoints.jsonl``'s; the cut is now after the last record (trust36)."""
    run_cli(ws, "init")
    run_cli(ws, "checkpoint")
    path = ws / ".turnback" / log
    kept = path.read_bytes() if path.exists() else b""
    with open(path, "ab") as f:
        f.write(b"{}\n" * 1100)
    rep = json.loads(run_cli(ws, "--json", "fsck", "--repair", check=None).stdout)
    assert [m["side"] for m in rep["setAside"]] == [f"{path}.junk-1"]
    assert Path(f"{path}.junk-1").read_bytes() == b"{}\n" * 1100
    assert path.read_bytes() == kept
    run_cli(ws, "gc")


def test_repair_says_that_moved_meta_lines_no_longer_apply(ws: Path) -> None:
    """``meta`` lines naming no head after a session's last event go to the side file with
    the run after them (redteam45): their title no longer applies, which the repair now
    says (trust36), in words and in ``--json``'s ``meta``."""
    _sid, path = _session(ws)
    with open(path, "ab") as f:
        f.write(b'{"type": "meta", "title": "planted"}\n' * 1100)
    out = run_cli(ws, "fsck", "--repair", check=None).stdout.decode()
    assert "1100 'meta' line(s) among them no longer apply" in out
    with open(path, "ab") as f:
        f.write(b'{"type": "meta", "title": "planted"}\n' * 1100)
    rep = json.loads(run_cli(ws, "--json", "fsck", "--repair", check=None).stdout)
    assert [(m["meta"], m["dropped"]) for m in rep["setAside"]] == [(1100, 0)]
