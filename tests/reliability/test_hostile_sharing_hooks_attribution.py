"""A red-team pass over the surfaces of the sharing, hand-off, attribution and hooks rounds.

Each test is one attack (docs/RELIABILITY.md, "A red-team pass over the new surfaces"):
the attacker can write any file in the workspace (a cloned repository), in the agents'
folders, or the store a repository ships.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import orjson
import pytest

from turnback import Store
from turnback.attribution import saved
from turnback.attribution.blame import Walker, blame_now
from turnback.attribution.history import load_history
from turnback.errors import InvalidInput, Unsafe
from turnback.importers import hooks
from wsutil import journal_left

from .crashkit import tally

PROGRAM = ["/opt/tb/bin/turnback"]


def count(case: str) -> None:
    tally("hostile input").add_case(case, True)


# -- hooks installers ---------------------------------------------------------------------------
@pytest.mark.parametrize("agent", list(hooks.SPECS))
def test_hooks_install_never_writes_through_a_linked_agent_folder(tmp_path: Path,
                                                                   agent: str) -> None:
    """A cloned repository ships ``.claude`` (``.gemini``, ``.codex``) as a link to a folder
    outside the workspace: install and uninstall refuse it and write nothing there."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    rel = Path(hooks.spec(agent).file)
    (ws / rel.parent).symlink_to(outside, target_is_directory=True)
    with pytest.raises(Unsafe, match="symlink"):
        hooks.install(ws, agent, PROGRAM)
    assert hooks.uninstall(ws, agent) is False  # nothing there: nothing to remove
    assert os.listdir(outside) == []
    # with the file there (the user's own config, reached through the link, holding
    # Turnback's hooks): neither rewritten nor removed
    assert hooks.install(tmp_path, agent, PROGRAM)  # written in a plain folder first
    (outside / rel.name).write_bytes((tmp_path / rel).read_bytes())
    before = (outside / rel.name).read_bytes()
    for op in (hooks.install, hooks.uninstall, hooks.status):
        with pytest.raises(Unsafe, match="symbolic link"):
            op(ws, agent, PROGRAM) if op is hooks.install else op(ws, agent)
    assert (outside / rel.name).read_bytes() == before
    assert sorted(os.listdir(outside)) == [rel.name]
    assert hooks.hooked_agents(ws) == set()
    count(f"hooks install through a linked agent folder ({agent})")


@pytest.mark.parametrize("agent", list(hooks.SPECS))
def test_hooks_install_and_uninstall_keep_the_files_mode(tmp_path: Path, agent: str) -> None:
    rel = hooks.spec(agent).file
    f = tmp_path / rel
    f.parent.mkdir()
    f.write_text('{"keep": 1}\n' if rel.endswith(".json") else 'model = "x"\n')
    f.chmod(0o644)
    assert hooks.install(tmp_path, agent, PROGRAM)
    assert stat.S_IMODE(f.stat().st_mode) == 0o644
    f.chmod(0o640)
    assert hooks.uninstall(tmp_path, agent)
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert [n for n in os.listdir(f.parent) if n != f.name] == []  # no temporary left
    count(f"hooks install keeps the file's mode ({agent})")


@pytest.mark.parametrize("agent", list(hooks.SPECS))
def test_a_link_swapped_in_after_hooks_read_the_file_gives_no_mode(
        tmp_path: Path, agent: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings file replaced by a link between install's read and its write (a sync,
    the agent itself): the mode kept was the link's, 0777, so the settings were written
    world-writable. Now the link is replaced (never written through) by a file of the
    umask's mode, as an editor makes one."""
    rel = hooks.spec(agent).file
    f = tmp_path / rel
    f.parent.mkdir()
    f.write_text('{"keep": 1}\n' if rel.endswith(".json") else 'model = "x"\n')
    f.chmod(0o600)
    target = tmp_path / "elsewhere"
    target.write_text("mine")
    real_open_dir = hooks.open_dir

    def open_dir(root: object, parts: list[str], create: bool = False) -> object:
        if create:  # the write's: the file was read already
            f.unlink()
            f.symlink_to(target)
        return real_open_dir(root, parts, create=create)  # type: ignore[arg-type]

    monkeypatch.setattr(hooks, "open_dir", open_dir)
    umask = os.umask(0o022)
    try:
        assert hooks.install(tmp_path, agent, PROGRAM)
    finally:
        os.umask(umask)
    assert not f.is_symlink() and target.read_text() == "mine"
    assert stat.S_IMODE(f.stat().st_mode) == 0o644, oct(f.stat().st_mode)
    count(f"hooks install over a link swapped in after its read ({agent})")


def test_a_store_cache_replaced_in_its_folder_is_0600_whatever_the_umask(
        tmp_path: Path) -> None:
    """The store's caches replaced through its folders (``fs/replacing.py``, shared with the
    hooks since trust7) are 0600 exactly: before, 0600 less the umask (0400 under 0277)."""
    from turnback.fs.folders import open_root
    from turnback.fs.replacing import replace_file

    umask = os.umask(0o277)
    try:
        with open_root(str(tmp_path)) as folder:
            replace_file(folder, "counts.json", b"{}")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "counts.json").stat().st_mode) == 0o600


@pytest.mark.parametrize("text", [
    '{"hooks": {"BeforeAgent": 1}}',
    '{"hooks": {"BeforeAgent": [{"hooks": 5}]}}',
    '{"hooks": {"AfterAgent": "x"}}',
    "[" * 100_000,
    '{"a": ' * 100_000,
], ids=["event not a list", "group hooks not a list", "event a string", "deep array",
        "deep object"])
def test_a_malformed_agent_config_never_stops_status(tmp_path: Path, text: str) -> None:
    """A cloned repository's ``.gemini/settings.json`` of an unexpected shape: status (which
    the server's follower asks before every turn's checkpoint) says no hooks; install
    refuses naming the file, or keeps what the user wrote beside Turnback's hooks."""
    f = tmp_path / ".gemini" / "settings.json"
    f.parent.mkdir()
    f.write_text(text)
    assert hooks.hooked_agents(tmp_path) == set()
    try:
        assert hooks.status(tmp_path, "gemini-cli").installed is False
    except InvalidInput as exc:
        assert "settings.json" in exc.message
    try:
        hooks.install(tmp_path, "gemini-cli", PROGRAM)
    except InvalidInput as exc:
        assert "settings.json" in exc.message
        assert f.read_text() == text
    else:
        old, new = json.loads(text)["hooks"], json.loads(f.read_text())["hooks"]
        assert all(new[k][: len(v)] == v for k, v in old.items())
        assert hooks.hooked_agents(tmp_path) == {"gemini-cli"}
    count("malformed agent hooks config")


def test_a_deeply_nested_codex_config_is_refused_not_a_crash(tmp_path: Path) -> None:
    f = tmp_path / ".codex" / "config.toml"
    f.parent.mkdir()
    text = "x = " + "[" * 50_000 + "]" * 50_000 + "\n"
    f.write_text(text)
    assert hooks.hooked_agents(tmp_path) == set()
    with pytest.raises(InvalidInput, match=r"config\.toml"):
        hooks.install(tmp_path, "codex", PROGRAM)
    assert f.read_text() == text
    count("deeply nested codex config")


@pytest.mark.parametrize("number", ["1e999", "-1e400", "NaN", "Infinity"])
def test_hooks_install_never_writes_json_an_agent_cannot_read(tmp_path: Path,
                                                              number: str) -> None:
    """``1e999`` read by Python is ``inf``, and ``json.dumps`` writes it ``Infinity``: the
    agent's own file would no longer parse. Refused, the file unchanged."""
    f = tmp_path / ".claude" / "settings.local.json"
    f.parent.mkdir()
    text = f'{{"cleanupPeriodDays": {number}}}\n'
    f.write_text(text)
    with pytest.raises(InvalidInput, match=r"settings\.local\.json"):
        hooks.install(tmp_path, "claude-code", PROGRAM)
    assert f.read_text() == text
    count(f"non-finite number in agent config ({number})")


def test_hooks_json_round_trip_stays_json(tmp_path: Path) -> None:
    """A guard: what install writes parses as strict JSON."""
    f = tmp_path / ".claude" / "settings.local.json"
    f.parent.mkdir()
    f.write_text('{"n": 1.5e300, "big": 123456789012345678901234567890}\n')
    assert hooks.install(tmp_path, "claude-code", PROGRAM)
    data = json.loads(f.read_text(), parse_constant=lambda c: pytest.fail(c))
    assert data["big"] == 123456789012345678901234567890 and data["n"] == 1.5e300


# -- saved blame walks --------------------------------------------------------------------------
def _saved_walk(store: Store, ws: Path) -> Path:
    f = ws / "f.txt"
    f.write_text("a\nb\n")
    store.checkpoint(label="1")
    f.write_text("a\nb\nc\n")
    store.checkpoint(label="2")
    h = load_history(store)
    w = Walker(store, "f.txt")
    blame_now(store, h, "f.txt", w)
    saved.save(store, h, w)
    (file,) = (store.root / "cache" / "blame").iterdir()
    return file


@pytest.mark.parametrize("count_", [10**12, 2**62])
def test_a_saved_walk_with_a_huge_run_is_a_miss_not_an_allocation(store: Store, ws: Path,
                                                                  count_: int) -> None:
    """A shipped store's ``cache/blame/*.json`` says one run of 10^12 lines: the loader
    built that list before comparing it with the file's three lines (MemoryError, or the
    server killed for memory). It is a miss, found before anything is allocated."""
    file = _saved_walk(store, ws)
    body = orjson.loads(file.read_bytes())
    file.write_bytes(orjson.dumps({**body, "runs": [[count_, 0]]}))
    assert saved.load(store, load_history(store), "f.txt") is None
    count("saved blame walk with a huge run")


@pytest.mark.parametrize("inner", ["sessions", "cache", "cache/blame", "objects", "index",
                                   "locks", "objects/ab"])
def test_a_shipped_store_with_a_linked_folder_is_refused(tmp_path: Path, inner: str) -> None:
    """A store that came with a repository (or a synced folder) whose ``sessions/`` (or
    ``cache/blame/``, ``objects/ab/``…) is a link to a folder outside: sessions, the stat
    cache, saved blame walks and objects were written there (and read back). The store
    is refused at open, naming the link; nothing is written outside."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / "f.txt").write_text("a\n")
    with Store.open(ws) as s:
        s.checkpoint(label="1")
    link = ws / ".turnback" / inner
    if link.exists():
        shutil.rmtree(link)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    (ws / ".turnback").chmod(0o755)  # as a clone makes it
    with pytest.raises(Unsafe, match=r"symbolic link.*--store DIR"):
        Store.open(ws)
    assert list(outside.iterdir()) == []
    # the user's own choice: a store named with --store may hold links (objects on
    # another disk)
    with Store.open(ws, store_dir=ws / ".turnback") as s:
        s.checkpoint(label="2")
    # a link to nothing yet: its target may be made later by anyone who can write there
    link.unlink()
    link.symlink_to(outside / "not-yet", target_is_directory=True)
    with pytest.raises(Unsafe, match=r"symbolic link.*--store DIR"):
        Store.open(ws)
    assert not (outside / "not-yet").exists()
    count(f"shipped store with a linked {inner}/")


# -- a remote that hangs ------------------------------------------------------------------------
def test_a_remote_that_accepts_and_never_answers_stops_the_pull(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A git:// remote (127.0.0.1 here) that accepts the connection and sends nothing: git
    has no timeout of its own there, and ``turnback pull`` waited for ever — over the
    server, holding the folder's writes (every checkpoint) with it. git is stopped once it
    has said nothing for TURNBACK_GIT_STALL seconds; the store is unchanged and its sharing
    lock free (a second pull is stopped the same way, not blocked)."""
    from turnback.sharing import operations
    from turnback.sharing.gitrun import GitStalled

    monkeypatch.setenv("TURNBACK_GIT_STALL", "0.5")
    (ws / "f.txt").write_text("a\n")
    with socket.socket() as silent, Store.open(ws) as s:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes the connections; nothing is ever sent
        url = f"git://127.0.0.1:{silent.getsockname()[1]}/team.git"
        for _ in range(2):
            with pytest.raises(GitStalled, match=r"sent nothing for 0\.5 s"):
                operations.pull(s, url)
        assert s.checkpoints() == [] and s.sessions()[1] == 0
    count("a remote that never answers")


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_stall_setting_is_named(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from turnback.sharing.gitrun import stall_seconds

    monkeypatch.setenv("TURNBACK_GIT_STALL", value)
    with pytest.raises(InvalidInput, match="TURNBACK_GIT_STALL"):
        stall_seconds()


# -- symlink targets no file system takes ---------------------------------------------------------
@pytest.mark.parametrize("target", [b"a\0b", b""], ids=["NUL", "empty"])
def test_a_pulled_symlink_with_an_impossible_target_is_refused(tmp_path: Path,
                                                               target: bytes) -> None:
    """A teammate's history whose tree holds a link to ``a\\0b`` was pulled; rewinding to it
    raised os.symlink's ValueError past the roll-back, and the journal it left made every
    later open of the store fail the same way. The history is refused on pull."""
    from sharing.test_hostile import Crafter, crafted_refs
    from turnback.sharing.gitobjects import GIT_FILE, GitEntry
    from turnback.sharing.pull import pull_machine
    from turnback.sharing.repo import ShareRepo

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "mine.txt").write_text("kept\n")
    with Store.open(ws) as s:
        repo = ShareRepo(s.root)
        repo.ensure()
        c = Crafter(repo.git_dir)
        c.history2("evil-00000031", c.tree([GitEntry("120000", b"lnk", c.blob(target)),
                                            GitEntry(GIT_FILE, b"ok.txt", c.blob(b"ok\n"))]))
        machine, commit = next(iter(crafted_refs(repo.git_dir).items()))
        result = pull_machine(s, repo, machine, commit)
        assert result.refused and "symlink" in result.refused
        assert s.checkpoints() == []
    count(f"pulled symlink target {target!r}")


@pytest.mark.parametrize("target", [b"a\0b", b""], ids=["NUL", "empty"])
def test_a_stored_symlink_with_an_impossible_target_leaves_the_store_openable(
        ws: Path, target: bytes) -> None:
    """The same link in a shipped store's crafted tree: the rewind is refused (Unsafe) and
    rolled back, no journal is left, the store opens again."""
    from turnback.errors import TurnbackError
    from turnback.objects.objectstore import BLOB, TREE

    from .test_hostile import crafted_checkpoint, raw_tree

    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as s:
        s.checkpoint(label="mine")
        (ws / "a.txt").write_text("changed\n")
        blob = s.objects.put(BLOB, b"x\n")
        link = s.objects.put(BLOB, target)
        tree_entries = [("f", blob, 2, b"a.txt"), ("l", link, len(target), b"lnk")]
        assert s.objects.put(TREE, raw_tree(tree_entries))
        cid = crafted_checkpoint(s, tree_entries, "evil00000031")
        before = sorted(p.name for p in ws.iterdir())
        with pytest.raises(TurnbackError, match="symlink"):
            s.rewind(cid)
    assert not journal_left(ws / ".turnback")
    with Store.open(ws):
        pass
    assert sorted(p.name for p in ws.iterdir()) == before
    assert (ws / "a.txt").read_text() == "changed\n"
    count(f"stored symlink target {target!r}")


# -- pulled sessions: forged ids, read-only --------------------------------------------------
def _with_pulled_twin(store: Store) -> tuple[str, str]:
    """A local session with event ``e1``, and a pulled one holding an event ``e1`` too."""
    from turnback.events import Event, Kind, SessionHeader

    local = store.start_session(agent="claude-code").id
    store.append(local, Kind.PROMPT, {"text": "mine"}, event_id="e1", parent=None)
    pulled = "s1@evil-00000041"
    store.ensure_session(SessionHeader(pulled, "t", "claude-code", source="pulled"))
    store.append_events(pulled, [Event("e1", pulled, None, "2026-01-01T00:00:00.000Z",
                                       Kind.PROMPT, {"text": "theirs"})])
    return local, pulled


def test_a_pulled_event_with_a_local_id_never_shadows_the_local_one(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A teammate's pushed session may reuse a local event's id (forged, or the same
    transcript imported on two machines): ``continue``/``session fork`` of that id took the
    pulled session's when the store's folder listed it first."""
    local, _pulled = _with_pulled_twin(store)
    ids = store.backend.ids
    monkeypatch.setattr(store.backend, "ids", lambda: sorted(ids(), key=lambda s: "@" not in s))
    assert store.find_event("e1").session == local
    assert store.fork("e1") == (local, "e1")
    count("pulled event id colliding with a local one")


def test_a_pulled_session_is_not_forked(store: Store) -> None:
    """A pulled session is read-only: moving its head wrote a line into it."""
    _local, pulled = _with_pulled_twin(store)
    path = store.root / "sessions" / f"{pulled}.jsonl"
    before = path.read_bytes()
    with pytest.raises(InvalidInput, match="read-only"):
        store.fork("e1", pulled)
    assert path.read_bytes() == before
    count("fork of a pulled session")


# -- Agent Trace: a commit's own lines --------------------------------------------------
def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True,
                          capture_output=True).stdout.decode()


def test_an_added_line_shaped_like_a_file_header_is_not_a_file(tmp_path: Path) -> None:
    """``-U0`` patches prefix an added line with ``+``: a line ``++ b/forged.txt`` reads
    ``+++ b/forged.txt``, and was taken for a new file's header — the commit's next hunk of
    ``a.txt`` was traced (and written into the git note) as lines of ``forged.txt``."""
    from turnback.attribution.gitcommit import read_commit

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q")
    lines = [f"line {i}\n" for i in range(1, 11)]
    (tmp_path / "a.txt").write_text("".join(lines))
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-qm", "one")
    lines[1] = "++ b/forged.txt\n"
    lines[7] = "changed\n"
    (tmp_path / "a.txt").write_text("".join(lines))
    _git(tmp_path, "commit", "-qam", "two")
    got = read_commit(tmp_path)
    assert [(f.path, f.added) for f in got.files] == [("a.txt", [2, 8])]
    count("a commit's added line shaped like a file header")


# -- ids ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["x\n", "e1\n"])
def test_an_id_with_a_final_newline_is_refused(store: Store, bad: str) -> None:
    """``re``'s ``$`` matches before a final newline: ``check_id("x\\n")`` passed, so a
    session (from an importer's file name, a client's argument) got a file ``x\\n.jsonl``
    that the store's own listing (``is_id``) then passed over — not in find_event, fsck or a
    push — and an id that prints as two lines."""
    from turnback.events import Kind, SessionHeader

    with pytest.raises(InvalidInput, match="not a valid id"):
        store.start_session(agent="a", session_id=bad)
    with pytest.raises(InvalidInput, match="not a valid id"):
        store.ensure_session(SessionHeader(bad, agent="a"))
    sid = store.start_session(agent="a").id
    with pytest.raises(InvalidInput, match="not a valid id"):
        store.append(sid, Kind.PROMPT, {"text": "x"}, event_id=bad)
    assert all("\n" not in n for n in os.listdir(store.root / "sessions"))
    count(f"id with a final newline ({bad!r})")


# -- a pulled session of many tiny events ----------------------------------------------------------
def test_a_pulled_session_of_many_tiny_events_is_taken_a_batch_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session blob of tiny events compresses to almost nothing in git, but every line
    became a dict and an Event, all of every session held at once until written: a 256 MiB
    session (the bound) is gigabytes in a teammate's language server. Checked, then taken a
    batch at a time: memory follows the blob's bytes, not its event count."""
    import tracemalloc

    from sharing.test_hostile import Crafter, crafted_refs
    from turnback.sharing import pull as pull_mod
    from turnback.sharing.pull import pull_machine
    from turnback.sharing.repo import ShareRepo

    monkeypatch.setattr(pull_mod, "EVENT_BATCH", 1000)
    n = 60_000
    lines = [b'{"type":"session","format":1,"id":"s1","title":"t","agent":"a"}']
    lines += [b'{"id":"e%d","session":"s1","parent":null,"ts":"","kind":"k"}' % i
              for i in range(n)]
    blob = b"\n".join(lines) + b"\n"
    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as s:
        repo = ShareRepo(s.root)
        repo.ensure()
        Crafter(repo.git_dir).history("evil-00000051", session=blob)
        machine, commit = next(iter(crafted_refs(repo.git_dir).items()))
        tracemalloc.start()
        try:
            result = pull_machine(s, repo, machine, commit)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert result.refused is None and result.events == n
        assert s.session_summary(f"s1@{machine}").events == n
    # the blob is 3.8 MB: holding every event at once peaked at 40.6 MB (10.6 times it),
    # a batch at a time at 11.6 MB (3 times: the blob read for the check and the write)
    assert peak < 6 * len(blob), (peak, len(blob))
    count("a pulled session of many tiny events")


@pytest.mark.parametrize("name", [b".git ", b"GIT~1", b".git::$INDEX_ALLOCATION",
                                  ".g\u200cit".encode(), b".GIT.", b"TURNBA~1"])
def test_a_pulled_tree_naming_git_in_another_spelling_is_refused(tmp_path: Path,
                                                                 name: bytes) -> None:
    """Held: the spellings Windows and macOS take for ``.git`` (or the store), straight
    into the store's sharing repository (git's own fsck on fetch not relied on)."""
    from sharing.test_hostile import Crafter, crafted_refs
    from turnback.sharing.pull import pull_machine
    from turnback.sharing.repo import ShareRepo

    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as s:
        repo = ShareRepo(s.root)
        repo.ensure()
        c = Crafter(repo.git_dir)
        c.history2("evil-00000061", c.files({name: {b"config": b"[core]\n"}}))
        machine, commit = next(iter(crafted_refs(repo.git_dir).items()))
        assert pull_machine(s, repo, machine, commit).refused
        assert s.checkpoints() == []
    count(f"pulled tree entry {name!r}")


def test_hooks_uninstall_keeps_a_users_command_that_only_starts_like_ours(
        tmp_path: Path) -> None:
    """``turnback hook claude-code Stop && notify-send done`` is the user's own command (it
    runs Turnback's hook and more): uninstall removed it as if Turnback had written it."""
    f = tmp_path / ".claude" / "settings.local.json"
    f.parent.mkdir()
    mine = "/opt/tb/bin/turnback hook claude-code Stop && notify-send done"
    f.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command",
                                                           "command": mine}]}]}}))
    assert hooks.install(tmp_path, "claude-code", PROGRAM)
    assert hooks.uninstall(tmp_path, "claude-code")
    assert json.loads(f.read_text()) == {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": mine}]}]}}
    count("hooks uninstall of a user's command starting like Turnback's")


# -- what another machine wrote, printed -----------------------------------------------------------
def test_text_from_another_machine_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A pushed manifest's user (``\\x1b[2J``: clear the screen), a session entry named with
    an escape, and a pulled session's agent were printed raw by ``pull`` and ``session
    list``: a teammate's push could write to the user's terminal (OSC 52 sets the
    clipboard). Printed C-escaped, as labels and names already were."""
    import sys

    from sharing.test_hostile import GOOD_SESSION, Crafter
    from turnback.sharing.gitobjects import GIT_DIR, GIT_FILE, GitEntry

    bare = tmp_path / "team.git"
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    c = Crafter(bare)
    c.history("evil-00000071", manifest={"user": "u\x1b[2J", "host": "h\x1b]52;c;ZXZpbA==\x07"},
              session=GOOD_SESSION.replace(b'"agent":"a"', b'"agent":"a\\u001b[31m"'))
    man = {"layout": 1, "machine": "evil-00000072", "user": "m", "host": "h",
           "sessions": {}, "checkpoints": []}
    root = c.tree([GitEntry(GIT_FILE, b"manifest.json", c.blob(orjson.dumps(man))),
                   GitEntry(GIT_DIR, b"sessions", c.tree([GitEntry(
                       GIT_FILE, b"x\x1b[31m.jsonl", c.blob(GOOD_SESSION))]))])
    _git(tmp_path, "--git-dir", str(bare), "update-ref", "refs/turnback/evil-00000072",
         c.commit(root, "crafted"))
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")}
    env.update(TURNBACK_BACKGROUND="0", HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), GIT_CONFIG_GLOBAL=os.devnull,
               PYTHONPATH=str(Path(__file__).resolve().parents[2] / "server"))

    def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "turnback.cli.main", *args], cwd=ws,
                              env=env, capture_output=True, timeout=120)

    pulled = cli("pull", str(bare))
    listed = cli("session", "list")
    assert b"evil-00000071" in pulled.stdout and b"evil-00000072" in pulled.stderr
    assert b"s1@evil-00000071" in listed.stdout, listed
    for out in (pulled.stdout, pulled.stderr, listed.stdout):
        assert b"\x1b" not in out and b"\x07" not in out, out
    count("terminal escapes in another machine's history")


# -- attribution and pulled checkpoints ------------------------------------------------------------
@pytest.mark.parametrize("when", ["between", "2099-01-01T00:00:00.000Z"])
def test_pulled_checkpoints_do_not_rewrite_this_folders_attribution(store: Store, ws: Path,
                                                                    when: str) -> None:
    """A teammate's pulled checkpoint (their workspace, their clock — or a crafted ts) was
    walked between this folder's own: every line became a person's at the step back from
    it, and one dated 2099 became the checkpoint "as it is now" is compared with."""
    from turnback.models import Checkpoint
    from turnback.objects.objectstore import BLOB, TREE

    from .test_hostile import raw_tree

    f = ws / "f.txt"
    f.write_text("a\nb\n")
    c1 = store.checkpoint(label="1")
    f.write_text("a\nb\nc\n")
    store.checkpoint(label="2")
    before = [repr(o) for o in blame_now(store, load_history(store), "f.txt").origins]
    blob = store.objects.put(BLOB, b"x\n")
    tree = store.objects.put(TREE, raw_tree(
        [("f", blob, 2, b"f.txt")]))
    theirs = Checkpoint("feed00000001", "theirs", c1.ts if when == "between" else when, tree,
                        None, None, origin="evil-00000081")
    store.index.add(theirs, fsync=False)
    after = [repr(o) for o in blame_now(store, load_history(store), "f.txt").origins]
    assert after == before
    count(f"a pulled checkpoint in this folder's attribution ({when})")


# -- agents' files kept in the workspace ----------------------------------------------------------
@pytest.mark.parametrize(("source", "folder", "name", "data"), [
    ("crush", ".crush", "crush.db", b"SQLite format 3\x00" + b"\x00" * 200),
    ("opencode-go", ".opencode", "opencode.db", b"SQLite format 3\x00" + b"\x00" * 200),
    ("ralph", ".ralph", "history.jsonl", b'{"x": 1}\n'),
])
def test_an_agents_folder_linked_to_another_project_is_not_read(
        tmp_path: Path, source: str, folder: str, name: str, data: bytes) -> None:
    """A cloned repository's ``.crush`` (``.opencode``, ``.ralph``) linked to another
    project's (``../secret/.crush``): the follower and ``import`` found that project's
    database through the link, and its sessions came into this store — and with the next
    push, went to this repository's remote."""
    from turnback.importers import registry
    from turnback.importers.base import Context

    ws, other = tmp_path / "ws", tmp_path / "secret" / folder
    ws.mkdir()
    other.mkdir(parents=True)
    (other / name).write_bytes(data)
    (ws / folder).symlink_to(other, target_is_directory=True)
    ctx = Context(workspace=ws, home=tmp_path / "home", env={})
    assert registry.get(source).locate(ctx, None) == []
    # its own folder, as the agent keeps it: found
    (ws / folder).unlink()
    (ws / folder).mkdir()
    (ws / folder / name).write_bytes(data)
    assert registry.get(source).locate(ctx, None) == [ws / folder / name]
    count(f"{source} folder linked to another project's")
