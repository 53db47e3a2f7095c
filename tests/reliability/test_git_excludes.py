"""Checkpoints leave out what git's other ignore files say: the repository's
``info/exclude`` and ``core.excludesFile`` (docs/attacks-privacy.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from turnback import Store
from turnback.snapshot.gitexclude import config_excludes_file
from wsutil import age_tree, cli_env, run_cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own: the user's real git config is never read."""
    h = tmp_path / "home"
    (h / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    return h


def repo(root: Path) -> Path:
    """A minimal repository at ``root`` (what the scanner looks for: a .git folder)."""
    (root / ".git" / "info").mkdir(parents=True)
    return root


def files(ws: Path) -> set[str]:
    """The paths a new checkpoint of ``ws`` records."""
    with Store.open(ws) as s:
        cp = s.checkpoint()
        return {p for p, _ in s.trees.walk(cp.tree, "")}


def populate(ws: Path) -> None:
    for rel in ("keep.txt", "secret.key", "logs/a.log", "src/b.log", "src/keep.log"):
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel)


def test_info_exclude_of_the_workspace_repository(tmp_path: Path, home: Path) -> None:
    ws = repo(tmp_path / "ws")
    populate(ws)
    (ws / ".git" / "info" / "exclude").write_text("# git's comment\n*.key\nlogs/\n")
    got = files(ws)
    assert "keep.txt" in got and "src/b.log" in got
    assert "secret.key" not in got and "logs/a.log" not in got


def test_gitignore_files_take_precedence_over_info_exclude(tmp_path: Path, home: Path) -> None:
    ws = repo(tmp_path / "ws")
    populate(ws)
    (ws / ".git" / "info" / "exclude").write_text("*.log\n")
    (ws / "src" / ".gitignore").write_text("!keep.log\n")
    got = files(ws)
    assert "src/keep.log" in got
    assert "src/b.log" not in got and "logs/a.log" not in got


def test_patterns_are_relative_to_the_repository_root(tmp_path: Path, home: Path) -> None:
    top = repo(tmp_path / "top")
    ws = top / "sub" / "ws"
    ws.mkdir(parents=True)
    populate(ws)
    # anchored at the repository's root: names the workspace's logs/, not a top-level one
    (top / ".git" / "info" / "exclude").write_text("/sub/ws/logs/\n/keep.txt\n")
    got = files(ws)
    assert "logs/a.log" not in got
    assert "keep.txt" in got  # /keep.txt is the repository root's, not the workspace's


def test_linked_worktree_reads_the_common_info_exclude(tmp_path: Path, home: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    main = tmp_path / "main"
    main.mkdir()

    def run(*args: str) -> None:
        subprocess.run([git, "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=main,
                       check=True, capture_output=True, env=cli_env(GIT_CONFIG_GLOBAL=os.devnull))

    run("init", "-q")
    (main / "f").write_text("f")
    run("add", "f")
    run("commit", "-qm", "x")
    wt = tmp_path / "wt"
    run("worktree", "add", "-q", str(wt))
    assert (wt / ".git").is_file()
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("*.key\n")
    populate(wt)
    got = files(wt)
    assert "keep.txt" in got and "secret.key" not in got


def test_excludes_file_from_the_repository_config(tmp_path: Path, home: Path) -> None:
    ws = repo(tmp_path / "ws")
    populate(ws)
    (home / "my ignores").write_text("*.key\n")
    (ws / ".git" / "config").write_text(
        '[core]\n\trepositoryformatversion = 0\n[Core]\n'
        '\tExcludesFile = "~/my ignores" ; a comment\n')
    got = files(ws)
    assert "secret.key" not in got and "keep.txt" in got


def test_excludes_file_from_the_home_config(tmp_path: Path, home: Path) -> None:
    ws = repo(tmp_path / "ws")
    populate(ws)
    (home / "ign").write_text("logs\n")
    (home / ".gitconfig").write_text("[user]\n\tname = x\n[core]\n\texcludesfile = ~/ign\n")
    assert "logs/a.log" not in files(ws)


def test_excludes_file_default_in_xdg_config_home(tmp_path: Path, home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"  # no repository: the user's global rules still apply
    ws.mkdir()
    populate(ws)
    (home / ".config" / "git").mkdir()
    (home / ".config" / "git" / "ignore").write_text("*.key\n")
    assert "secret.key" not in files(ws)
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "ignore").write_text("*.log\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    got = files(ws)
    assert "secret.key" in got and "src/b.log" not in got


def test_a_new_info_exclude_pattern_reaches_the_next_cli_checkpoint(tmp_path: Path,
                                                                    home: Path) -> None:
    """The stat cache's folder records are trusted only under the same ignore rules:
    a pattern added to info/exclude must not be missed by a fresh process's checkpoint."""
    ws = repo(tmp_path / "ws")
    populate(ws)
    for i in range(300):  # enough files for the scanner's cached and forked paths
        (ws / "many" / f"{i:03}.txt").parent.mkdir(exist_ok=True)
        (ws / "many" / f"{i:03}.txt").write_text(str(i))
    age_tree(ws)
    env = cli_env(HOME=str(home))
    run_cli(ws, "init", env=env)
    run_cli(ws, "checkpoint", env=env)
    run_cli(ws, "checkpoint", env=env)  # the caches now hold every folder
    (ws / ".git" / "info" / "exclude").write_text("secret.key\nmany/1*\n")
    cp = run_cli(ws, "--json", "checkpoint", env=env).stdout
    cid = json.loads(cp)["id"]
    with Store.open(ws) as s:
        got = {p for p, _ in s.trees.walk(s.resolve_checkpoint(cid).tree, "")}
    assert "secret.key" not in got and "many/150.txt" not in got
    assert "keep.txt" in got and "many/050.txt" in got


@pytest.mark.parametrize(("text", "want"), [
    ("[core]\nexcludesfile = a", "a"),
    ("[core]\n\texcludesFile=  spaced  name  \n", "spaced  name"),
    ('[core]\nexcludesfile = "quoted ; not a comment" # comment', "quoted ; not a comment"),
    ('[core]\nexcludesfile = a\\"b\\\\c\\tz', 'a"b\\c\tz'),
    ("[core]\nexcludesfile = first\nexcludesfile = last", "last"),
    ("[core] excludesfile = same-line", "same-line"),
    ("[core]\nexcludesfile = con\\\ntinued", "continued"),
    ('[core "sub"]\nexcludesfile = no', None),
    ("[core.sub]\nexcludesfile = no", None),
    ("[other]\nexcludesfile = no", None),
    ("# [core]\n; excludesfile = no\n[core]\nexcludesfile", None),
    ("[core]\nexcludesfile = ok\n[user]\nexcludesfile = no", "ok"),
    ('[core]\nexcludesfile = "unterminated', None),
    ("[core]\nexcludesfile = bad\\q escape", None),
])
def test_config_parsing(text: str, want: str | None) -> None:
    assert config_excludes_file(text) == want
