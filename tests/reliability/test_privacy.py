"""The store is private and never committed (docs/attacks-privacy.md).

Every file and folder of a store is its owner's alone whatever the umask; a store made
before is tightened when opened, without following a symlink; git never stages it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Store
from wsutil import cli_env, run_cli

DIR_MODE, FILE_MODE = 0o700, 0o600


def gitignores_all(path: Path) -> bool:
    """``path`` is a gitignore file whose rules ignore everything beside it."""
    lines = [ln.strip() for ln in path.read_text().splitlines()]
    return "*" in lines and not any(ln.startswith("!") for ln in lines)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under the umask given as its parameter; restore the old one."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, str]:
    """Every entry below ``root`` (and root itself) -> its permission bits, octal."""
    out = {".": oct(stat.S_IMODE(os.lstat(root).st_mode))}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = oct(stat.S_IMODE(os.lstat(p).st_mode))
    return out


def not_private(root: Path) -> dict[str, str]:
    """The entries of ``root`` that others could read: not 0700 folders / 0600 files."""
    bad = {}
    for rel, mode in modes(root).items():
        p = root / rel
        if p.is_symlink():
            continue  # a link's own mode is moot: tightening skips links
        want = DIR_MODE if p.is_dir() else FILE_MODE
        if int(mode, 8) != want:
            bad[rel] = mode
    return bad


def busy_store(ws: Path) -> Path:
    """A store that has seen every kind of write: packs, loose and streamed objects,
    sessions, the stat cache, a rewind and its undo, gc; returns its root."""
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("print(1)\n")
    env = ws / ".env"
    env.write_text("SECRET=hunter2\n")
    os.chmod(env, 0o600)
    (ws / "big.bin").write_bytes(os.urandom(600 * 1024))  # a loose object
    with Store.open(ws) as s:
        sid = s.start_session("t", "test").id
        s.append(sid, "prompt", {"text": "hello"})
        cp = s.checkpoint("one", session_id=sid)
        (ws / "src" / "a.py").write_text("print(2)\n")
        (ws / "src" / "b.py").write_text("new\n")
        s.checkpoint("two", session_id=sid)
        s.rewind(cp.id)
        s.undo()
        s.objects.put(b"blob", b"outside a batch")  # a small loose object
        s.gc(keep_last=1)
        root = s.root
    return root


@pytest.mark.parametrize("umask", [0o022, 0o000, 0o002], indirect=True,
                         ids=["umask022", "umask000", "umask002"])
def test_every_store_file_is_private_whatever_the_umask(ws: Path, umask: int) -> None:
    root = busy_store(ws)
    seen = modes(root)
    assert any(k.startswith("objects/pack/") and k.endswith(".pack") for k in seen)
    assert any(k.startswith("sessions/") for k in seen)
    assert not_private(root) == {}
    # the process's umask is left alone (it also writes workspace files)
    assert os.umask(umask) == umask


def test_cli_store_is_private_under_umask_000(ws: Path) -> None:
    (ws / "f.txt").write_text("x\n")
    env = cli_env()
    script = ("import os, sys, runpy; os.umask(0); sys.argv = ['turnback', *sys.argv[1:]]; "
              "runpy.run_module('turnback.cli.main', run_name='__main__')")
    for args in (["init"], ["checkpoint", "-m", "one"], ["session", "start", "--title", "t"]):
        subprocess.run([sys.executable, "-c", script, *args], cwd=ws, env=env, check=True,
                       capture_output=True, timeout=120)
    assert not_private(ws / ".turnback") == {}


def loosen(root: Path) -> None:
    """What a store made before this change looks like under umask 022."""
    for dirpath, dirs, files in os.walk(root):
        for d in dirs:
            os.chmod(Path(dirpath) / d, 0o755)
        for f in files:
            os.chmod(Path(dirpath) / f, 0o644)
    os.chmod(root, 0o755)
    (root / ".gitignore").unlink()


def test_an_old_store_is_tightened_when_opened(ws: Path) -> None:
    root = busy_store(ws)
    loosen(root)
    assert len(not_private(root)) > 10
    Store.open(ws).close()
    assert not_private(root) == {}
    assert gitignores_all(root / ".gitignore")


def test_tightening_never_follows_a_symlink(ws: Path, tmp_path: Path) -> None:
    root = busy_store(ws)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "public.txt").write_text("shared on purpose\n")
    os.chmod(outside / "public.txt", 0o644)
    os.chmod(outside, 0o755)
    loosen(root)
    os.symlink(outside, root / "cache" / "link-to-dir")
    os.symlink(outside / "public.txt", root / "cache" / "link-to-file")
    # (a default store holding a link is refused at open:
    # test_hostile_sharing_hooks_attribution.py; one named with --store may hold links, and
    # its tightening must not follow them)
    Store.open(ws, store_dir=root).close()
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(outside / "public.txt").st_mode) == 0o644
    assert (root / "cache" / "link-to-dir").is_symlink()
    assert not_private(root) == {}


def test_a_tightened_store_is_not_walked_again(ws: Path) -> None:
    from turnback.fs import privacy
    root = busy_store(ws)
    (root / "cache" / "planted").write_text("x")
    os.chmod(root / "cache" / "planted", 0o644)
    assert privacy.keep_private(root) is False  # root at 0700: one lstat, no walk
    assert stat.S_IMODE((root / "cache" / "planted").stat().st_mode) == 0o644


def test_store_has_gitignore_and_git_stages_nothing_of_it(ws: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(ws.parent),
           "XDG_CONFIG_HOME": str(ws.parent / "xdg")}
    subprocess.run([git, "init", "-q"], cwd=ws, env=env, check=True)
    busy_store(ws)
    assert gitignores_all(ws / ".turnback" / ".gitignore")
    subprocess.run([git, "add", "-A"], cwd=ws, env=env, check=True)
    out = subprocess.run([git, "status", "--porcelain", "--untracked-files=all"], cwd=ws,
                         env=env, check=True, capture_output=True, text=True).stdout
    assert ".env" in out  # the workspace's files are staged: git works here
    assert ".turnback" not in out


def test_gitignore_is_added_to_an_old_store(ws: Path) -> None:
    run_cli(ws, "init")
    gi = ws / ".turnback" / ".gitignore"
    gi.unlink()
    run_cli(ws, "status")
    assert gitignores_all(gi)


def test_a_store_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """A cloned repository may ship `.turnback` as a link to any folder of the user's."""
    from turnback import Unsafe

    ws, elsewhere = tmp_path / "ws", tmp_path / "public_html"
    ws.mkdir()
    elsewhere.mkdir()
    (ws / ".turnback").symlink_to(elsewhere)
    with pytest.raises(Unsafe, match=r"symlink.*--store DIR or TURNBACK_STORE"):
        Store.open(ws)
    assert list(elsewhere.iterdir()) == []
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o755 & ~_umask()
    # named on purpose, a linked store folder is the user's choice
    with Store.open(ws, store_dir=ws / ".turnback") as s:
        s.checkpoint()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="making a store of another user needs root")
def test_a_store_of_another_user_is_refused(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from turnback import Unsafe

    ws = tmp_path / "ws"
    ws.mkdir()
    Store.open(ws).close()
    os.chown(ws / ".turnback", 65534, 65534)
    monkeypatch.delenv("SUDO_UID", raising=False)
    with pytest.raises(Unsafe, match="belongs to user id 65534"):
        Store.open(ws)
    monkeypatch.setenv("SUDO_UID", "65534")  # root through sudo, opening that user's store
    Store.open(ws).close()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
