"""No POSIX-only module or constant at import time: ``import turnback`` (and every module
of the store, the CLI and the server) works where Windows lacks them. Tried here by
importing every module in a child Python whose ``fcntl``, ``termios``, ``pwd``, ``grp``
and ``resource`` cannot be imported and whose ``os`` lacks names Windows' lacks
(``O_NOFOLLOW``, ``O_DIRECTORY``, ``O_CLOEXEC``, ``O_NONBLOCK``, ``getuid``...). It is not
Windows (the standard library still takes its POSIX paths): what it shows is that no
module of Turnback names these at import. The
Linux-only mechanisms (the inotify watcher, the forked pre-check) import what they need
when they run, so they are imported too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import turnback

FAKE_WINDOWS = r"""
import os, sys, pkgutil, importlib
for name in ("fcntl", "termios", "pwd", "grp", "resource"):
    sys.modules[name] = None  # `import fcntl` now raises ImportError, as on Windows
# (the standard library's own POSIX modules need the rest of POSIX's os at import)
for attr in ("O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC", "O_NONBLOCK", "sched_getaffinity",
             "syncfs", "getuid", "geteuid", "fchmod", "O_NOCTTY", "posix_fadvise"):
    if hasattr(os, attr):
        delattr(os, attr)
import turnback
failed = []
for mod in pkgutil.walk_packages(turnback.__path__, "turnback.", onerror=failed.append):
    if mod.name.endswith("__main__"):
        continue  # runs the server
    try:
        importlib.import_module(mod.name)
    except Exception as exc:
        failed.append(f"{mod.name}: {type(exc).__name__}: {exc}")
print("\n".join(failed) if failed else "ok")
"""


def test_every_module_imports_without_posix_only_names() -> None:
    root = Path(turnback.__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", FAKE_WINDOWS], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok", out.stdout


FAKE_WINDOWS_RUN = r"""
import os, sys
for name in ("termios", "pwd", "grp", "resource"):
    sys.modules[name] = None
# what Windows' os lacks or keeps empty: descriptors for folders, O_NOFOLLOW, fork, sync,
# fchmod (before 3.13), POSIX owners; and AF_UNIX in _socket. (fcntl stays: the lock
# module's msvcrt path is tested in test_locks_windows.py with a faked msvcrt.)
for attr in ("O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC", "O_NONBLOCK", "syncfs", "getuid",
             "geteuid", "fchmod", "fork", "sync", "posix_fadvise"):
    if hasattr(os, attr):
        delattr(os, attr)
os.supports_dir_fd.clear()
os.supports_fd.clear()
import _socket
del _socket.AF_UNIX
from turnback.fs import folders, osflags
from turnback import Store
from turnback.cli import handoff
assert not osflags.DESCRIPTORS
ws = sys.argv[1]
os.makedirs(ws + "/src")
open(ws + "/src/a.txt", "w").write("one\n")
s = Store.open(ws)
assert isinstance(folders.open_root(ws), folders.PathFolder)
a = s.checkpoint()
open(ws + "/src/a.txt", "w").write("two\n")
open(ws + "/src/b.txt", "w").write("new\n")
s.checkpoint()
print(sorted(c.path for c in s.changes(a.id)))
print("-one" in s.diff(a.id, path="src/a.txt") and "+two" in s.diff(a.id, path="src/a.txt"))
s.rewind(a.id)
print(open(ws + "/src/a.txt").read() == "one\n", os.path.exists(ws + "/src/b.txt"))
s.undo()
print(open(ws + "/src/a.txt").read() == "two\n", os.path.exists(ws + "/src/b.txt"))
print(handoff.request_for(["checkpoint"]))
from turnback.objects import trees
print(trees.file_mode(0o100666), trees.file_mode(0o100444), trees.file_mode(0o100755))
"""


def test_checkpoint_diff_rewind_undo_with_windows_capabilities(tmp_path: Path) -> None:
    """A store works end to end where ``os`` offers what Windows' does: folders reached by
    path (fs/folders.py), no fork for the pre-check, no sync, no fchmod, the CLI working
    alone (no AF_UNIX), files' modes read as Windows reports them. Still Linux underneath:
    see docs/RELIABILITY.md."""
    root = Path(turnback.__file__).parents[1]
    env = {k: v for k, v in os.environ.items() if k != "TURNBACK_FS_PATHS"}
    out = subprocess.run([sys.executable, "-c", FAKE_WINDOWS_RUN, str(tmp_path / "ws")],
                         capture_output=True, text=True, timeout=120,
                         env={**env, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "['src/a.txt', 'src/b.txt']", "True", "True False", "True True", "None",
        "f p444 f"]  # Windows' stat modes: no mode change against a POSIX checkpoint
