"""The start-up walk's second core (``server/startwalk.py``): a child forked before the
server's threads watches and checks half the folders on the watcher's own inotify
instance. Run in a fresh process each (the test process has threads: no fork there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.server import inotify_watch
from turnback.snapshot import prescan

if not inotify_watch.available() or not sys.platform.startswith("linux"):  # pragma: no cover
    pytest.skip("inotify and fork: Linux only", allow_module_level=True)

SERVER = Path(__file__).resolve().parents[2] / "server"

# In the fresh process: the child, after it checks each folder, writes a new file there
# (after its listing: only its watch can tell); then the server's way of a first walk,
# and a second checkpoint, which must hold every such file.
SCRIPT = r"""
import json, os, sys
from pathlib import Path
ws = Path(sys.argv[1])
from turnback.snapshot import prescan
real = prescan.verify_one
parent = os.getpid()
def verify_one(root_fd, rel, want):
    got = real(root_fd, rel, want)
    if os.getpid() != parent and got is not None:
        (ws / rel / "from-child.txt").write_text(rel)
    return got
prescan.verify_one = verify_one
from turnback.server import startwalk
startwalk.begin()
made = startwalk._made is not None
from turnback import Store
from turnback.server.dirty import DirtyTracker
from turnback.server.folders import Folder, with_dirty
from turnback.server.inotify_watch import InotifyWatcher
from turnback.server.settings import Settings
tracker = DirtyTracker()
w = InotifyWatcher(ws, ws / ".turnback", tracker, lambda s, c: None)
w.walk_lays = True
w.start()
assert w.wait_ready(10)
store = Store.open(ws)
folder = Folder(ws.as_uri(), ws, Settings())
folder.tracker, folder.watcher, folder.store = tracker, w, store
first, t1 = with_dirty(folder, lambda d: store.checkpoint(dirty=d))
written = sorted(str(p.parent.relative_to(ws)) for p in ws.rglob("from-child.txt"))
second, t2 = with_dirty(folder, lambda d: store.checkpoint(dirty=d))
held = [rel for rel in written if store.read_file(second.id, f"{rel}/from-child.txt")
        == rel.encode()]
out = {"made": made, "first_walked": t1.paths is None, "second_walked": t2.paths is None,
       "written": written, "held": held, "folders": len(w.watched_folders()),
       "orphans": len(w._orphans)}
w.stop()
store.close()
print(json.dumps(out))
"""


def test_the_childs_watches_report_what_changed_after_it_checked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for d in range(40):
        for f in range(prescan.FORK_MIN_FILES // 40 + 5):
            p = ws / f"d{d}" / f"f{f}.txt"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"{d}/{f}")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        store.checkpoint()  # records every folder: what the child checks
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    env.pop("TURNBACK_START_WORKER", None)
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(ws)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["made"], "the child was forked before any thread"
    assert got["first_walked"] and not got["second_walked"]
    assert got["written"], "the child checked some folders"
    assert got["held"] == got["written"], "a change after the child's listing is an event"
    assert got["folders"] == 41
    assert got["orphans"] == 0
