"""Taking history back: a session forgotten (this machine's history on the remote replaced
by one without it, its checkpoints too), and a machine's whole history deleted — with other
machines and this machine's own pushes running at the same time."""

from __future__ import annotations

import json
import subprocess
import sys

from turnback import Store

from .conftest import Machine, Remote, git
from .test_push_pull import as_json, work


def reachable(remote: Remote, machine: str) -> str:
    """Every commit subject and object name the machine's ref reaches on the remote."""
    ref = f"refs/turnback/{machine}"
    return (git("--git-dir", str(remote.path), "log", "--format=%s", ref)
            + git("--git-dir", str(remote.path), "rev-list", "--objects", ref))


def session_of(m: Machine, cp: str) -> str:
    with Store.open(m.ws) as s:
        sid = s.resolve_checkpoint(cp).session_id
    assert sid is not None
    return sid


def test_a_forgotten_session_leaves_the_remote_while_others_push(
        machines: list[Machine], remote: Remote) -> None:
    a, b, c, d = machines
    secret_cp = work(a, "secret", {"plan.txt": "the private plan\n"}, prompt="private prompt")
    kept_cp = work(a, "kept", {"src/app.py": "print(1)\n"})
    secret = session_of(a, secret_cp)
    first = as_json(a.cli("--json", "push"))
    machine = first["machine"]
    assert secret_cp in reachable(remote, machine)
    assert len(as_json(b.cli("--json", "pull"))["machines"]) == 1  # b has a copy: it stays
    work(c, "c's", {"c.txt": "c\n"})
    work(a, "more", {"src/app.py": "print(2)\n"})

    # a forgets while c pushes and a second push of a's own runs: no interleaving in a's
    # store, no push of c lost, and whichever of a's runs last, the secret stays off
    runs = [(a, ["push", "--forget", secret]), (a, ["push"]), (c, ["push"])]
    procs = [subprocess.Popen([sys.executable, "-m", "turnback.cli.main", "--json", *args],
                              cwd=m.ws, env=m.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for m, args in runs]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err.decode(errors="replace")
        results.append(json.loads(out))
    assert results[0]["forgotten"] == [secret]
    listed = reachable(remote, machine)
    assert secret_cp not in listed and kept_cp in listed
    assert secret not in git("--git-dir", str(remote.path), "ls-tree", "-r", "--name-only",
                             f"refs/turnback/{machine}")
    # (the old commits stay on the server, unreachable, until it collects garbage)
    assert git("--git-dir", str(remote.path), "fsck", "--no-progress", "--no-dangling"
               ).strip() == ""

    pulled = {m["machine"]: m for m in as_json(d.cli("--json", "pull"))["machines"]}
    assert pulled[machine]["refused"] is None and pulled[machine]["checkpoints"] == 2
    assert pulled[results[2]["machine"]]["checkpoints"] == 1
    with Store.open(d.ws) as s:
        assert not any(x.header.id.startswith(secret) for x in s.sessions()[0])
        assert [cp.label for cp in s.checkpoints() if cp.origin == machine] == ["kept", "more"]

    # later pushes go on from the new history (a fast-forward) and never bring it back
    work(a, "after", {"src/app.py": "print(3)\n"})
    again = as_json(a.cli("--json", "push"))
    assert not again["replaces"] and again["newCheckpoints"] == 1
    assert secret_cp not in reachable(remote, machine)
    # b, which pulled before the forgetting, pulls on: the new checkpoints, nothing twice
    later = {m["machine"]: m for m in as_json(b.cli("--json", "pull"))["machines"]}
    assert later[machine]["refused"] is None and later[machine]["checkpoints"] == 2
    # the local store keeps the forgotten session: only what is sent changed
    with Store.open(a.ws) as s:
        assert s.resolve_checkpoint(secret_cp).session_id == secret


def test_deleting_a_machines_history_and_pushing_it_again(
        machines: list[Machine], remote: Remote) -> None:
    a, b = machines[:2]
    cp = work(a, "one", {"x.txt": "x\n"})
    machine = as_json(a.cli("--json", "push"))["machine"]
    gone = as_json(a.cli("--json", "push", "--delete"))
    assert gone["deleted"] and gone["ref"] == f"refs/turnback/{machine}"
    assert git("--git-dir", str(remote.path), "for-each-ref", "refs/turnback/") == ""
    assert as_json(a.cli("--json", "remote"))["machines"] == []
    assert not as_json(a.cli("--json", "push", "--delete"))["deleted"]
    assert as_json(b.cli("--json", "pull"))["machines"] == []
    again = as_json(a.cli("--json", "push"))  # an explicit push sends it all again
    assert not again["upToDate"] and again["newCheckpoints"] == 1
    assert cp in reachable(remote, machine)
    assert as_json(b.cli("--json", "pull"))["machines"][0]["checkpoints"] == 1


def test_forget_refuses_what_is_not_a_session_of_this_machine(
        machines: list[Machine], remote: Remote) -> None:
    a = machines[0]
    work(a, "one", {"x.txt": "x\n"})
    for bad in ("../x", "s1@other-12345678"):
        proc = a.cli("push", "--forget", bad, check=False)
        assert proc.returncode != 0 and b"not a session id of this machine" in proc.stderr
    proc = a.cli("push", "--forget", "s1", "--dry-run", check=False)
    assert proc.returncode != 0 and b"no dry run" in proc.stderr
    assert git("--git-dir", str(remote.path), "for-each-ref", "refs/turnback/") == ""
