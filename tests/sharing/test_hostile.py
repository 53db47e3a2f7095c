"""A hostile history pushed by someone else is refused on pull, with nothing written: no
session, no checkpoint, no workspace file. The histories are crafted with git's plumbing
(names git itself would never write), then pulled by a store with a small size cap."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from turnback import Store
from turnback.sharing import operations
from turnback.sharing.gitobjects import GIT_DIR, GIT_FILE, GitEntry, encode_tree
from wsutil import picture, write

from .conftest import Machine, Remote, git

CAP = 4096
GOOD_SESSION = (b'{"type":"session","format":1,"id":"s1","title":"t","agent":"a"}\n'
                b'{"id":"e1","session":"s1","parent":null,"ts":"2026-01-01T00:00:00.000Z",'
                b'"kind":"prompt","data":{"text":"hi"}}\n')


class Crafter:
    def __init__(self, bare: Path) -> None:
        self.bare = bare

    def _put(self, kind: str, data: bytes) -> str:
        return subprocess.run(["git", "--git-dir", str(self.bare), "hash-object", "-t", kind,
                               "--literally", "-w", "--stdin"], input=data,
                              capture_output=True, check=True).stdout.decode().strip()

    def blob(self, data: bytes) -> str:
        return self._put("blob", data)

    def tree(self, entries: list[GitEntry]) -> str:
        return self._put("tree", encode_tree(entries))

    def files(self, files: dict[bytes, bytes | dict]) -> str:  # type: ignore[type-arg]
        entries = []
        for name, value in files.items():
            if isinstance(value, dict):
                entries.append(GitEntry(GIT_DIR, name, self.files(value)))
            else:
                entries.append(GitEntry(GIT_FILE, name, self.blob(value)))
        return self.tree(entries)

    def history(self, machine: str, tree: str | None = None, *, manifest: dict | None = None,
                session: bytes = GOOD_SESSION, extra_root: list[GitEntry] | None = None,
                cp_entry: GitEntry | None = None) -> None:
        man = {"layout": 1, "machine": machine, "user": "mallory", "host": "evil",
               "sessions": {"s1": {}},
               "checkpoints": [{"id": "c0ffee000001", "label": "x", "ts": "2026-01-01T00:00:00Z",
                                "sessionId": "s1", "eventId": None, "files": 1, "bytes": 1}]}
        man.update(manifest or {})
        cps = [cp_entry or GitEntry(GIT_DIR, b"c0ffee000001", tree or self.files({}))]
        root = self.tree([
            GitEntry(GIT_FILE, b"manifest.json", self.blob(orjson.dumps(man))),
            GitEntry(GIT_DIR, b"sessions", self.tree([GitEntry(GIT_FILE, b"s1.jsonl",
                                                               self.blob(session))])),
            GitEntry(GIT_DIR, b"checkpoints", self.tree(cps)),
            *(extra_root or [])])
        commit = subprocess.run(
            ["git", "--git-dir", str(self.bare), "-c", "user.name=m", "-c", "user.email=m@m",
             "commit-tree", root, "-m", "crafted"], capture_output=True, check=True
        ).stdout.decode().strip()
        git("--git-dir", str(self.bare), "update-ref", f"refs/turnback/{machine}", commit)


    def commit(self, tree: str, message: str, parents: list[str] | None = None) -> str:
        args = ["git", "--git-dir", str(self.bare), "-c", "user.name=m", "-c",
                "user.email=m@m", "commit-tree", tree, "-m", message]
        for p in parents or []:
            args += ["-p", p]
        return subprocess.run(args, capture_output=True, check=True).stdout.decode().strip()

    def history2(self, machine: str, tree: str | None = None, *, record: dict | None = None,
                 message: str | None = None, unlinked: bool = False) -> None:
        """A layout-2 history: one checkpoint commit, then the push commit naming it."""
        rec = {"id": "c0ffee000002", "label": "x", "ts": "2026-01-01T00:00:00Z",
               "sessionId": "s1", "eventId": None, "files": 1, "bytes": 1, **(record or {})}
        cp = self.commit(tree or self.files({b"ok.txt": b"ok\n"}),
                         message if message is not None
                         else "turnback checkpoint x\n\n" + orjson.dumps(rec).decode())
        man = {"layout": 2, "machine": machine, "user": "mallory", "host": "evil",
               "sessions": {"s1": {}}, "chain": cp, "checkpoints": 1}
        root = self.tree([
            GitEntry(GIT_FILE, b"manifest.json", self.blob(orjson.dumps(man))),
            GitEntry(GIT_DIR, b"sessions", self.tree([GitEntry(GIT_FILE, b"s1.jsonl",
                                                               self.blob(GOOD_SESSION))]))])
        push = self.commit(root, "crafted", [] if unlinked else [cp])
        git("--git-dir", str(self.bare), "update-ref", f"refs/turnback/{machine}", push)


CASES = {
    "dotdot": lambda c: c.history("evil-00000001", c.files({b"..": {b"escape.txt": b"x"}})),
    "dotgit": lambda c: c.history("evil-00000002", c.files({b".git": {b"hooks": {
        b"post-checkout": b"#!/bin/sh\ntouch /tmp/pwned\n"}}})),
    "dotgit-case": lambda c: c.history("evil-00000003", c.files({b"sub": {b".GiT": {
        b"config": b"[core]\n"}}})),
    "slash-name": lambda c: c.history("evil-00000004", c.files({b"a/../../b": b"x"})),
    "nul-name": lambda c: c.history("evil-00000005", c.files({b"a\0b": b"x"})),
    "huge-blob": lambda c: c.history("evil-00000006", c.files({b"big.bin": b"\0" * (CAP + 1)})),
    "newer-layout": lambda c: c.history("evil-00000007", manifest={"layout": 99}),
    "other-machine": lambda c: c.history("evil-00000008", manifest={"machine": "victim-12345678"}),
    "bad-event": lambda c: c.history("evil-00000009", session=GOOD_SESSION.replace(
        b'"parent":null', b'"parent":"../../x"')),
    "bad-session-id": lambda c: c.history("evil-0000000a", session=GOOD_SESSION.replace(
        b'"id":"s1"', b'"id":"../s1"', 1)),
    "submodule": lambda c: c.history("evil-0000000b", c.tree([GitEntry(
        "160000", b"mod", "a" * 40)])),
    "no-tree": lambda c: c.history("evil-0000000c", cp_entry=GitEntry(
        GIT_FILE, b"c0ffee000001", c.blob(b"not a tree"))),
    "store-path": lambda c: c.history("evil-0000000d", c.files({b".turnback": {
        b"config.json": b"{}"}})),
    "manifest-not-json": lambda c: c.history("evil-0000000e", manifest={"sessions": []}),
    # layout 2: the same checks on a checkpoint chain's commits, and the chain itself
    "v2-dotdot": lambda c: c.history2("evil-00000021", c.files({b"..": {b"x": b"x"}})),
    "v2-dotgit": lambda c: c.history2("evil-00000022", c.files({b".git": {b"config": b"x"}})),
    # deeper down, where only the entry's own name is checked again: an NTFS short name, and
    # a backslash (a folder separator on Windows) leading into .git
    "v2-short-name": lambda c: c.history2("evil-00000028", c.files({b"src": {b"lib": {
        b"GIT~1": {b"config": b"x"}}}})),
    "v2-backslash": lambda c: c.history2("evil-00000029", c.files({b"src": {
        b".git\\hooks": b"x"}})),
    "v2-huge-blob": lambda c: c.history2("evil-00000023", c.files({b"big": b"\0" * (CAP + 1)})),
    "v2-store-path": lambda c: c.history2("evil-00000024", c.files({b".turnback": {
        b"config.json": b"{}"}})),
    "v2-not-a-parent": lambda c: c.history2("evil-00000025", unlinked=True),
    "v2-no-record": lambda c: c.history2("evil-00000026", message="turnback checkpoint x"),
    "v2-bad-record": lambda c: c.history2("evil-00000027", record={"id": "../../x"}),
}


@pytest.mark.parametrize("remote", ["file"], indirect=True)  # the transport is not the point
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_history_is_refused_with_nothing_written(
        case: str, machines: list[Machine], remote: Remote) -> None:
    a, b = machines[:2]
    # an honest teammate pushes too: the hostile machine must not stop the others
    with Store.open(a.ws) as s:
        write(a.ws, "honest.txt", "ok\n")
        s.checkpoint("honest")
        honest = operations.push(s, remote.url)["machine"]
    CASES[case](Crafter(remote.path))
    write(b.ws, "mine.txt", "b's\n")
    before = picture(b.ws)
    with Store.open(b.ws, config={"size_cap_bytes": CAP}) as s:
        result = operations.pull(s, remote.url)
        by = {m["machine"]: m for m in result["machines"]}
        assert by[honest]["refused"] is None and by[honest]["checkpoints"] == 1
        evil = [m for name, m in by.items() if name.startswith("evil-")]
        assert len(evil) == 1 and evil[0]["refused"], evil
        assert [c.origin for c in s.checkpoints()] == [honest]
        assert not any(x.header.id.endswith("@" + evil[0]["machine"]) for x in s.sessions()[0])
        assert s.fsck().ok
    assert picture(b.ws) == before
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize("case", ["dotdot", "dotgit", "dotgit-case", "nul-name", "slash-name",
                                  "store-path", "v2-dotdot", "v2-dotgit", "v2-store-path",
                                  "v2-short-name", "v2-backslash"])
def test_turnbacks_own_checks_refuse_what_gits_fsck_would(case: str, tmp_path: Path) -> None:
    """git's fsck refuses these names on fetch (above); Turnback's own checks do not rely on
    it (a git built or configured otherwise): the history is crafted straight into the
    store's sharing repository and taken from there."""
    from turnback.sharing.pull import pull_machine
    from turnback.sharing.repo import ShareRepo

    ws = tmp_path / "ws"
    ws.mkdir()
    write(ws, "mine.txt", "kept\n")
    before = picture(ws)
    with Store.open(ws) as s:
        repo = ShareRepo(s.root)
        repo.ensure()
        CASES[case](Crafter(repo.git_dir))
        machine, commit = next(iter(crafted_refs(repo.git_dir).items()))
        result = pull_machine(s, repo, machine, commit)
        assert result.refused, result
        assert s.checkpoints() == [] and s.sessions()[1] == 0
    assert picture(ws) == before


def crafted_refs(bare: Path) -> dict[str, str]:
    out = git("--git-dir", str(bare), "for-each-ref", "--format=%(refname) %(objectname)",
              "refs/turnback/")
    return {ref.removeprefix("refs/turnback/"): sha for ref, sha in
            (line.split() for line in out.splitlines())}


@pytest.mark.parametrize("remote", ["file"], indirect=True)
def test_a_layout_1_history_is_still_pulled_and_its_machine_upgrades_it(
        machines: list[Machine], remote: Remote) -> None:
    """A remote written by an older Turnback (layout 1): pulled as it is; when its machine
    pushes with this one, the new commit descends from the old (no force, nothing of other
    machines touched) and a puller that took the old one takes only what is new."""
    a, b = machines[:2]
    with Store.open(a.ws) as s:
        write(a.ws, "app.py", "v1\n")
        old_cp = s.checkpoint("before the upgrade")
        mine = operations.remote(s, look=False)["machine"]
    man = {"checkpoints": [{**{k: v for k, v in old_cp.to_json().items() if k != "tree"}}],
           "sessions": {}}
    crafter = Crafter(remote.path)
    crafter.history(mine, manifest=man, cp_entry=GitEntry(
        GIT_DIR, old_cp.id.encode(), crafter.files({b"app.py": b"v1\n"})))
    old = git("--git-dir", str(remote.path), "rev-parse", f"refs/turnback/{mine}").strip()
    with Store.open(b.ws) as s:
        first = operations.pull(s, remote.url)["machines"]
        assert [(m["refused"], m["checkpoints"]) for m in first] == [(None, 1)]
        assert s.read_file(old_cp.id, "app.py") == b"v1\n"
    # a's store as the older Turnback left it: its last push is the layout-1 commit
    from turnback.sharing.repo import LOCAL_REF, ShareRepo
    with Store.open(a.ws) as s:
        repo = ShareRepo(s.root)
        git("--git-dir", str(repo.git_dir), "fetch", "-q", str(remote.path),
            f"refs/turnback/{mine}:{LOCAL_REF}")
        write(a.ws, "app.py", "v2\n")
        new_cp = s.checkpoint("after the upgrade")
        pushed = operations.push(s, remote.url)
    assert not pushed["replaces"]
    new = git("--git-dir", str(remote.path), "rev-parse", f"refs/turnback/{mine}").strip()
    assert git("--git-dir", str(remote.path), "merge-base", "--is-ancestor", old, new) == ""
    with Store.open(b.ws) as s:
        second = operations.pull(s, remote.url)["machines"]
        assert [(m["refused"], m["checkpoints"]) for m in second] == [(None, 1)]
        assert s.read_file(new_cp.id, "app.py") == b"v2\n"
        assert sorted(c.label for c in s.checkpoints()) == ["after the upgrade",
                                                            "before the upgrade"]
