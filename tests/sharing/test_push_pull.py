"""Push and pull through real git remotes (file:// and git daemon), machines as clones with
their own HOME, driven through the CLI as a user would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.errors import InvalidInput
from wsutil import picture, write

from .conftest import Machine, Remote, git

AWS = "AKIAIOSFODNN7EXAMPLE"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
       "-----END OPENSSH PRIVATE KEY-----\n")


def as_json(proc: subprocess.CompletedProcess[bytes]) -> Any:
    return json.loads(proc.stdout)


def work(m: Machine, label: str, files: dict[str, str], prompt: str = "go") -> str:
    """One agent turn on machine ``m``: a prompt, file edits, a checkpoint."""
    with Store.open(m.ws) as s:
        head = s.start_session(title=f"turn {label}", agent="claude-code")
        s.append(head.id, "prompt", {"text": prompt})
        for rel, text in files.items():
            write(m.ws, rel, text)
        return s.checkpoint(label, session_id=head.id).id


def remote_bytes(remote: Remote) -> int:
    return sum(f.stat().st_size for f in (remote.path / "objects").rglob("*") if f.is_file())


def checkpoint_commit(bare: Path, machine: str, cp: str) -> str:
    """The commit of checkpoint ``cp`` on the machine's chain, found as git shows it."""
    log = git("--git-dir", str(bare), "log", "--format=%H %s", f"refs/turnback/{machine}")
    found = [line.split()[0] for line in log.splitlines()
             if line.split()[1:4] == ["turnback", "checkpoint", f"{cp}:"]]
    assert len(found) == 1, log
    return found[0]


def remote_files(remote: Remote, machine: str, cp: str) -> dict[str, bytes]:
    commit = checkpoint_commit(remote.path, machine, cp)
    names = git("--git-dir", str(remote.path), "ls-tree", "-r", "--name-only", "-z",
                commit).split("\0")
    return {n: subprocess.run(["git", "--git-dir", str(remote.path), "cat-file", "blob",
                               f"{commit}:{n}"], capture_output=True,
                              check=True).stdout for n in names if n}


def test_a_teammates_history_arrives_redacted_read_only_and_rewindable(
        machines: list[Machine], remote: Remote) -> None:
    a, b = machines[:2]
    write(a.ws, ".gitignore", "private.local\n.turnback/\n")
    write(a.ws, "private.local", "only on this machine\n")
    write(a.ws, ".turnbackignore", "*.draft\n")
    write(a.ws, "plan.draft", "not for the team\n")
    cp = work(a, "first", {"src/app.py": "print('hi')\n", "config.env": "API_TOKEN=s3cr3tvalue9\n",
                           "deploy/id_ed25519": PEM},
              prompt=f"use the key {AWS} to deploy")

    dry = as_json(a.cli("--json", "push", "--dry-run"))
    assert dry["dryRun"] and dry["bytes"] > 0 and dry["objects"] > 0
    assert git("--git-dir", str(remote.path), "for-each-ref", "refs/turnback/") == ""
    kinds = {(r["where"].split(":")[0], r["kind"]) for r in dry["redactions"]}
    assert (f"checkpoint {cp}", "Secret Keyword") in kinds
    assert (f"checkpoint {cp}", "Private Key") in kinds
    assert any(w.startswith("session ") and k == "AWS Access Key" for w, k in kinds)

    pushed = as_json(a.cli("--json", "push"))
    machine = pushed["machine"]
    files = remote_files(remote, machine, cp)
    assert "private.local" not in files  # ignored: never in a checkpoint, never pushed
    assert "plan.draft" not in files  # .turnbackignore too
    assert not any(n.startswith(".turnback/") for n in files)  # the store
    assert files["src/app.py"] == b"print('hi')\n"
    assert b"s3cr3tvalue9" not in files["config.env"]
    assert b"b3BlbnNzaC1rZXkt" not in files["deploy/id_ed25519"]
    session_blobs = git("--git-dir", str(remote.path), "ls-tree", "-r", "--name-only",
                        f"refs/turnback/{machine}:sessions").split()
    for name in session_blobs:
        text = git("--git-dir", str(remote.path), "cat-file", "blob",
                   f"refs/turnback/{machine}:sessions/{name}")
        assert AWS not in text
    assert as_json(a.cli("--json", "push"))["upToDate"]
    # a normal clone and branch list never see it
    assert "turnback" not in git("ls-remote", "--heads", remote.url)

    write(b.ws, "mine.txt", "b's own work\n")
    before = picture(b.ws)
    pulled = as_json(b.cli("--json", "pull"))
    assert [m["machine"] for m in pulled["machines"]] == [machine]
    assert pulled["machines"][0]["checkpoints"] == 1 and pulled["machines"][0]["refused"] is None
    assert picture(b.ws) == before  # a pull writes nothing into the workspace
    again = as_json(b.cli("--json", "pull"))
    assert again["machines"][0]["checkpoints"] == 0 and again["machines"][0]["events"] == 0

    with Store.open(b.ws) as s:
        theirs = s.resolve_checkpoint(cp)
        assert theirs.origin == machine
        with pytest.raises(Exception, match="no checkpoint"):
            s.resolve_checkpoint("latest")  # a teammate's checkpoint is never "latest"
        pulled_sessions = [x for x in s.sessions()[0] if x.header.source == "pulled"]
        assert pulled_sessions
        sid = next(x.header.id for x in pulled_sessions if x.header.title == "turn first")
        assert sid.endswith("@" + machine)
        assert pulled_sessions[0].to_json()["origin"]["machine"] == machine
        events = s.session(sid).events
        assert any(e.kind == "prompt" and "[redacted:AWS Access Key]" in e.data["text"]
                   for e in events)
        with pytest.raises(InvalidInput, match="read-only"):
            s.append(sid, "note", {"text": "not mine to write"})
        assert s.read_file(cp, "src/app.py") == b"print('hi')\n"

    # rewinding to the teammate's checkpoint: through the safety checkpoint, and undoable
    b.cli("rewind", cp)
    assert (b.ws / "src" / "app.py").read_text() == "print('hi')\n"
    assert not (b.ws / "mine.txt").exists()
    b.cli("undo")
    assert picture(b.ws) == before


def test_a_push_after_more_turns_sends_only_what_is_new(
        machines: list[Machine], remote: Remote) -> None:
    a, b = machines[:2]
    for n in range(30):
        write(a.ws, f"lib/mod{n}.py", os.urandom(2000).hex())  # bytes that do not compress
    work(a, "start", {})
    # the remote keeps every pack it receives as it is (small ones would be unpacked into
    # the objects it lacks, hiding what was sent)
    git("--git-dir", str(remote.path), "config", "receive.unpackLimit", "1")
    first = as_json(a.cli("--json", "push"))
    grew_first = remote_bytes(remote)
    pulled = as_json(b.cli("--json", "pull"))
    assert pulled["machines"][0]["checkpoints"] == 1
    fetched_first = b_fetched(b)
    for turn in range(5):
        work(a, f"turn {turn}", {f"lib/mod{turn}.py": f"# turn {turn}\n"})
    dry = as_json(a.cli("--json", "push", "--dry-run"))
    second = as_json(a.cli("--json", "push"))
    # what the remote received, not only what Turnback counted: git's sparse walk once sent
    # every file of every new checkpoint again
    assert remote_bytes(remote) - grew_first < grew_first / 2
    # the dry run's estimate packs without the remote's objects as delta bases: an upper bound
    assert dry["objects"] == second["objects"] and 0 < second["bytes"] <= dry["bytes"]
    # 5 checkpoints x (1 file + root and lib trees) + the commit, its trees, manifest, sessions
    assert second["objects"] < first["objects"]
    assert second["bytes"] < first["bytes"] / 2
    total = git("--git-dir", str(remote.path), "rev-list", "--objects", "--count",
                f"refs/turnback/{second['machine']}").strip()
    assert second["objects"] < int(total) / 2
    files_read = pulled_files(b)
    pulled = as_json(b.cli("--json", "pull"))
    assert pulled["machines"][0]["checkpoints"] == 5
    # each new lib/ names its 30 files: only the 5 new ones are read and stored
    assert pulled_files(b) - files_read == 5
    # and what the puller fetched: the server packs it with its own settings (pack.useSparse
    # on, git's default), where layout 1, each checkpoint at a path of its own, made git send
    # every file of every new checkpoint again; layout 2's chain shares paths between them
    assert b_fetched(b) - fetched_first < fetched_first / 2


def pulled_files(m: Machine) -> int:
    """How many git blobs a machine's pulls have read into its store (``f`` lines of the
    object map)."""
    text = (m.ws / ".turnback" / "share" / "objmap").read_text()
    return sum(1 for line in text.splitlines() if line.startswith("f"))


def b_fetched(m: Machine) -> int:
    """Bytes of the objects a machine's pulls fetched into its store's sharing repository
    (packs, or loose objects when git unpacked a small fetch)."""
    objects = m.ws / ".turnback" / "share" / "git" / "objects"
    return sum(f.stat().st_size for f in objects.rglob("*") if f.is_file()
               and f.suffix != ".idx")


def test_four_machines_push_at_once(machines: list[Machine], remote: Remote) -> None:
    for n, m in enumerate(machines):
        work(m, f"work of {n}", {f"m{n}.txt": f"machine {n}\n"})
    procs = [subprocess.Popen([sys.executable, "-m",
                               "turnback.cli.main", "--json", "push"], cwd=m.ws, env=m.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for m in machines]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err.decode(errors="replace")
        results.append(json.loads(out))
    refs = git("--git-dir", str(remote.path), "for-each-ref", "--format=%(refname)",
               "refs/turnback/").split()
    assert sorted(refs) == sorted(f"refs/turnback/{r['machine']}" for r in results)
    assert len(set(refs)) == 4
    pulled = as_json(machines[0].cli("--json", "pull"))
    assert len(pulled["machines"]) == 3
    assert all(m["checkpoints"] == 1 and m["refused"] is None for m in pulled["machines"])
    assert git("--git-dir", str(remote.path), "fsck", "--no-progress").strip() == ""


def test_a_push_killed_half_way_leaves_the_remote_consistent(
        machines: list[Machine], remote: Remote, tmp_path: Path) -> None:
    if not remote.url.startswith("file:"):
        pytest.skip("the kill reaches the remote's receive-pack only when git runs it locally")
    a = machines[0]
    cp1 = work(a, "one", {"a.txt": "1\n"})
    first = as_json(a.cli("--json", "push"))
    ref = f"refs/turnback/{first['machine']}"
    old = git("--git-dir", str(remote.path), "rev-parse", ref).strip()
    cp2 = work(a, "two", {"b.txt": "2\n" * 1000})
    # the remote's pre-receive hook runs once every object has arrived, before the ref moves:
    # it says so and waits, and the push (git push and the receive-pack it runs) is killed there
    started = tmp_path / "receiving"
    hook = remote.path / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch '{started}'\nwhile :; do sleep 0.05; done\n")
    hook.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "turnback.cli.main", "push"],
                            cwd=a.ws, env=a.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None, "the push ended before reaching the remote"
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # the hook's own shell was in that process group too
    hook.unlink()
    assert git("--git-dir", str(remote.path), "rev-parse", ref).strip() == old
    assert git("--git-dir", str(remote.path), "fsck", "--no-progress").strip() == ""
    done = as_json(a.cli("--json", "push"))
    assert not done["upToDate"]
    assert git("--git-dir", str(remote.path), "rev-parse", ref).strip() == done["commit"]
    pulled = as_json(machines[1].cli("--json", "pull"))
    assert pulled["machines"][0]["checkpoints"] == 2
    with Store.open(machines[1].ws) as s:
        assert s.read_file(cp2, "b.txt") == b"2\n" * 1000
        assert s.read_file(cp1, "a.txt") == b"1\n"


def test_a_separate_history_remote_and_what_is_where(
        machines: list[Machine], remote: Remote, tmp_path: Path) -> None:
    a, b = machines[:2]
    history = tmp_path / "history.git"
    git("init", "--quiet", "--bare", str(history))
    work(a, "one", {"x.txt": "x\n"})
    shown = as_json(a.cli("--json", "remote", "--set", history.as_uri()))
    assert shown["url"] == history.as_uri() and shown["why"] == "history remote"
    assert shown["machines"] == []
    pushed = as_json(a.cli("--json", "push"))
    assert pushed["url"] == history.as_uri()
    assert git("--git-dir", str(remote.path), "for-each-ref", "refs/turnback/") == ""
    assert git("--git-dir", str(history), "for-each-ref", "refs/turnback/") != ""
    listed = as_json(a.cli("--json", "remote"))["machines"]
    assert [(m["machine"], m["mine"]) for m in listed] == [(pushed["machine"], True)]
    # without a history remote of its own, b pulls from origin (nothing there) or from a URL
    assert as_json(b.cli("--json", "pull"))["machines"] == []
    assert as_json(b.cli("--json", "pull", str(history)))["machines"][0]["checkpoints"] == 1
    assert as_json(a.cli("--json", "remote", "--unset", "--offline"))["remote"] == "origin"
    bad = b.cli("push", "no-such-remote", check=False)
    assert bad.returncode != 0 and b"not a remote" in bad.stderr


def test_every_dry_run_lists_what_the_next_push_sends_redacted(
        machines: list[Machine], remote: Remote) -> None:
    a = machines[0]
    cp = work(a, "keys", {"config.env": "API_TOKEN=s3cr3tvalue9\n", "src/app.py": "x = 1\n"})

    def listed(*args: str) -> set[tuple[str, str]]:
        return {(r["where"], r["kind"]) for r in as_json(a.cli("--json", "push", *args))
                ["redactions"]}

    key = (f"checkpoint {cp}: config.env", "Secret Keyword")
    assert key in listed("--dry-run")
    assert key in listed("--dry-run"), "a second dry run converts nothing, and still lists it"
    assert key in listed(), "the push sends it redacted"
    assert listed("--dry-run") == set(), "sent: nothing is left to list"
    as_json(a.cli("--json", "push", "--delete"))
    assert key in listed("--dry-run"), "after --delete the next push sends it all again"
