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
