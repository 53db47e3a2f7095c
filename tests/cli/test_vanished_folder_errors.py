"""A store folder removed under a command (another program, a clean-up, a second machine's
history deleted): the system error the command stops with must name the path, and the
command. "turnback: No such file or directory" was seen from ``turnback push``
(tests/sharing/test_forget.py, in CI); a call through a folder's descriptor gave the system a
bare name (``objmap.tmp``), and the CLI printed that, or nothing, and no command.

Each case removes one of the store's folders right before the command's first call into it
through a descriptor (an open, a make, a rename), then runs the command in this process."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from turnback import Kind, Store
from turnback.cli.main import cli
from turnback.interchange import cli_text
from wsutil import age_tree, write

# (command line, the store folder removed under it)
CASES = [
    (["checkpoint", "-m", "x"], "objects/log"),
    (["record", "prompt", "--session", "s1", "--text", "x"], "sessions"),
    (["session", "start", "--title", "y"], "sessions"),
    (["session", "end", "s1"], "sessions"),
    (["push", "REMOTE"], "share"),
    (["push", "--delete", "REMOTE"], "share"),
    (["push", "--delete", "REMOTE"], "share/git"),
    (["gc"], "objects/log"),
    (["gc"], "cache"),
    (["rewind", "latest~1"], "objects/log"),
    (["export", "s1"], "sessions"),
    (["fsck"], "objects/log"),
    (["status"], "cache"),
]


def _store(ws: Path) -> None:
    write(ws, "a.txt", "one\n")
    age_tree(ws)
    with Store.open(ws, create=True) as store:
        store.start_session(title="t", session_id="s1")
        store.append("s1", Kind.PROMPT, {"text": "x"})
        store.checkpoint(session_id="s1")
        write(ws, "a.txt", "two\n")
        age_tree(ws)
        store.checkpoint(session_id="s1")


def _in(folder: Path, path: object, fd: object) -> bool:
    """Whether a call on ``path`` (through the folder of descriptor ``fd``) reaches into
    ``folder``."""
    if isinstance(fd, int):
        try:
            return os.readlink(f"/proc/self/fd/{fd}") == str(folder)
        except OSError:
            return False
    if isinstance(path, (str, Path)):
        text = os.path.abspath(path)
        return text.startswith(str(folder) + os.sep)
    return False


def _remove_at_first_use(monkeypatch: pytest.MonkeyPatch, folder: Path) -> list[bool]:
    """``folder`` removed right before the first ``os.*`` call into it (through a
    descriptor on it, ``dir_fd``, or by a path below it), as another program would between
    the command's look at the store and its use of that folder."""
    removed: list[bool] = []
    fd_names = {"open": "dir_fd", "mkdir": "dir_fd", "unlink": "dir_fd", "rename": "src_dir_fd",
                "replace": "src_dir_fd", "link": "src_dir_fd", "lstat": "dir_fd",
                "stat": "dir_fd"}
    for name, key in fd_names.items():
        real = getattr(os, name)

        def wrapped(*args: Any, _real: Any = real, _key: str = key, **kw: Any) -> Any:
            if not removed and _in(folder, args[0] if args else None, kw.get(_key)):
                removed.append(True)
                shutil.rmtree(folder)
            return _real(*args, **kw)

        monkeypatch.setattr(os, name, wrapped)
    return removed


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to name a descriptor")
@pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                    reason="folders reached by path: no descriptor to remove under")
@pytest.mark.parametrize(("args", "sub"), CASES, ids=[f"{'-'.join(a[:2])}-{s}" for a, s in CASES])
def test_a_folder_removed_under_a_command_is_named_with_the_command(
        ws: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], sub: str) -> None:
    _store(ws)
    if "REMOTE" in args:  # a bare repository beside, pushed to once already
        remote = ws.parent / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        args = [str(remote) if a == "REMOTE" else a for a in args]
        first = CliRunner().invoke(cli, ["-C", str(ws), "push", str(remote)])
        assert first.exit_code == 0, first.output
    root = ws / ".turnback"
    folder = (root / sub).resolve()
    removed = _remove_at_first_use(monkeypatch, folder)
    result = CliRunner().invoke(cli, ["-C", str(ws), *args])
    monkeypatch.undo()
    if not removed:
        pytest.skip(f"'{' '.join(args)}' made no call through {sub}/ (nothing removed)")
    if result.exit_code == 0:
        return  # it needed nothing there, or made it again: nothing to name
    err = result.stderr if result.stderr_bytes is not None else result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: {result.exception!r}")
    if "No such file or directory" in err or "Errno" in err:
        # a system error: it names the path in full (not a bare name) and the command
        assert str(folder) in err, f"{args}: the path is not named: {err!r}"
        verb = " ".join(args[:2]) if args[0] == "session" else args[0]
        assert f"'turnback {verb}'" in err, f"{args}: the command is not named: {err!r}"


def test_a_system_error_that_names_no_file_names_the_command_and_what_to_do() -> None:
    code, text = cli_text.error(FileNotFoundError(2, "No such file or directory"),
                                "push") or (0, "")
    assert code == 1
    assert "'turnback push'" in text and "No such file or directory" in text, text
    assert "Run it again" in text and "turnback fsck" in text, text


def test_a_rename_s_error_names_both_paths() -> None:
    exc = FileNotFoundError(2, "No such file or directory", "/s/share/objmap.tmp", None,
                            "/s/share/objmap")
    _code, text = cli_text.error(exc, "push") or (0, "")
    assert "/s/share/objmap.tmp -> /s/share/objmap" in text, text
    assert "'turnback push'" in text, text
