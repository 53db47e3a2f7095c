"""Helpers shared by the store's tests: exact pictures of a workspace, and the CLI.

``picture`` records every file and symlink below a folder by its raw bytes
(names, contents, link targets, the executable bit), so two pictures are equal
exactly when a rewind restored the workspace byte for byte.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnback.snapshot.nodes import ScanResult

REPO = Path(__file__).resolve().parents[1]  # the checkout (tests/ is one level down)
STORE_DIR = b".turnback"

# rel path (bytes) -> ("f", content, executable) | ("l", target)
Picture = dict[bytes, tuple[Any, ...]]


def plain_scan(ws: Path) -> ScanResult:
    """A full scan of ``ws`` that trusts no cache and stores nothing."""
    from turnback import Store

    with Store.memory(ws) as fresh:
        return fresh.scanner.scan(write=False)


def picture(root: Path | str, skip: tuple[bytes, ...] = (STORE_DIR,)) -> Picture:
    """Every file and symlink below ``root`` (folders are implied by their files)."""
    out: Picture = {}
    base = os.fsencode(str(root))

    def walk(rel: bytes) -> None:
        full = os.path.join(base, rel) if rel else base
        for name in sorted(os.listdir(full)):
            r = os.path.join(rel, name) if rel else name
            if not rel and name in skip:
                continue
            p = os.path.join(base, r)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[r] = ("l", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                walk(r)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    out[r] = ("f", f.read(), st.st_mode & 0o777)
            else:
                out[r] = ("other", stat.S_IFMT(st.st_mode))

    walk(b"")
    return out


def write(root: Path, rel: str | bytes, data: bytes | str = b"", exec_: bool = False) -> Path:
    """Create ``rel`` (parents too) with ``data``; return its path."""
    p = Path(os.fsdecode(os.path.join(os.fsencode(str(root)), os.fsencode(rel))))
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    os.chmod(p, 0o755 if exec_ else 0o644)
    return p


def age(path: Path, seconds: float = 10.0) -> None:
    """Set a file's mtime into the past, so the stat cache may trust it (racy-clean rule)."""
    st = os.lstat(path)
    t = st.st_mtime - seconds
    os.utime(path, (t, t), follow_symlinks=False)


def age_tree(root: Path, seconds: float = 10.0) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            if not p.is_symlink():
                try:
                    age(p, seconds)
                except FileNotFoundError:
                    pass  # a store's temporary file, gone since the listing (another thread's)


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TURNBACK_")}
    env["PYTHONPATH"] = str(REPO / "server")
    env["TURNBACK_BACKGROUND"] = "0"  # no server left behind (tests/cli/test_background.py)
    env.update(extra)
    return env


def run_cli(cwd: Path, *args: str, input: bytes | None = None,
            env: dict[str, str] | None = None, check: bool | None = True
            ) -> subprocess.CompletedProcess[bytes]:
    """Run ``turnback ARGS`` in ``cwd`` through the interpreter running the tests.

    ``check=True`` expects exit 0; ``check=None`` accepts any exit code.
    """
    proc = subprocess.run(
        [sys.executable, "-m", "turnback.cli.main", *args],
        cwd=cwd, input=input, capture_output=True, env=env or cli_env(), timeout=120,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"turnback {' '.join(args)} exited {proc.returncode}\n"
            f"stdout: {proc.stdout.decode(errors='replace')}\n"
            f"stderr: {proc.stderr.decode(errors='replace')}"
        )
    return proc


# -- damaging stored objects, loose or packed ------------------------------------------------

def object_file(store: Any, name: str) -> tuple[Path, int, int]:
    """(file, offset, length) of the bytes that hold object ``name`` on disk.

    A loose object is a whole file; a packed one is the compressed block of its pack
    that holds it (damaging that block damages every object sharing it).
    """
    objs = store.objects
    loose = objs.path(name)
    if loose.exists():
        return loose, 0, loose.stat().st_size
    objs.packs.refresh()
    loc = objs.packs.locate(name)
    if loc is None:
        raise AssertionError(f"object {name[:12]} is not stored")
    return objs.packs.path_of(loc.pack), loc.block_off, loc.block_len


def corrupt_object(store: Any, name: str) -> None:
    """Flip bytes in the middle of the object's stored bytes (size unchanged)."""
    path, off, length = object_file(store, name)
    with open(path, "r+b") as f:
        f.seek(off + length // 2)
        b = f.read(4)
        f.seek(off + length // 2)
        f.write(bytes(x ^ 0xFF for x in b))


def truncate_object(store: Any, name: str) -> None:
    """Cut the object's stored bytes in half (as a torn write would)."""
    path, off, length = object_file(store, name)
    os.truncate(path, off + length // 2)


def remove_object(store: Any, name: str) -> None:
    """Make the object disappear: delete a loose file, drop it from its pack index, or
    move its log's objects to a pack without it."""
    objs = store.objects
    loose = objs.path(name)
    if loose.exists():
        loose.unlink()
        return
    from turnback.objects import packs
    objs.packs.refresh()
    loc = objs.packs.locate(name)
    assert loc is not None, name
    if loc.pack.startswith("log-"):
        # a log frame's rows are hashed with it: its objects go to a pack, all but this one
        objs.repack({n for n in objs.packs.names() if n != name}, fsync=False)
        assert objs.packs.locate(name) is None
        return
    idx = objs.root / "pack" / f"{loc.pack}.idx"
    rows = sorted((n, lc) for n, lc in packs.read_index(idx).items() if n != name)
    body = b"".join(packs._ENTRY.pack(bytes.fromhex(n), lc.block_off, lc.block_len, lc.off,
                                      lc.length) for n, lc in rows)
    idx.write_bytes(packs.IDX_MAGIC + len(rows).to_bytes(4, "big") + body)


def write_codex_rollout(path: Path, sid: str) -> None:
    """A Codex rollout of three turns (no real transcript here has more than one)."""
    import orjson

    lines = [{"timestamp": "2025-01-02T10:00:00Z", "type": "session_meta",
              "payload": {"id": sid, "timestamp": "2025-01-02T10:00:00Z", "cwd": "/w"}}]
    for i, text in enumerate(["first ask", "second ask", "third ask"]):
        ts = f"2025-01-02T10:0{i + 1}:00Z"
        lines += [
            {"timestamp": ts, "type": "turn_context", "payload": {"cwd": "/w", "model": "m"}},
            {"timestamp": ts, "type": "event_msg",
             "payload": {"type": "user_message", "message": text}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": f"answer {i}"}]}},
        ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def journal_left(store_dir: Path) -> bool:
    """Whether the store's rewind journal holds anything. Since format 3 its file stays
    between rewinds, emptied when a rewind ends (docs/FORMAT.md)."""
    journal = store_dir / "journal.json"
    return journal.exists() and journal.stat().st_size > 0


def second_names(top: Path) -> list[Path]:
    """The rewind's second names of replaced files (``.turnback-tmp-*``) below ``top``,
    the store's own aside."""
    return sorted(p for p in top.rglob(".turnback-tmp-*") if ".turnback/" not in p.as_posix())


def makes_hard_links(ws: Path) -> bool:
    """Whether the file system under ``ws`` makes hard links (the FUSE one of
    scripts/test-portable.sh has none); asked of the system, not of ``fs/hardlinks``."""
    probe, second = ws / "link-probe", ws / "link-probe-2"
    probe.write_bytes(b"")
    try:
        os.link(probe, second)
    except OSError:
        return False
    else:
        second.unlink()
        return True
    finally:
        probe.unlink()


def keeps_replaced(ws: Path) -> bool:
    """Whether a rewind keeps replaced files by second names here: folders held by
    descriptors, and a file system with hard links."""
    from turnback.fs.osflags import DESCRIPTORS

    return makes_hard_links(ws) and DESCRIPTORS


def swaps_names(ws: Path) -> bool:
    """Whether a rewind swaps its write into place here (``fs/exchange.py``), not renames:
    second names kept (``keeps_replaced``) and a file system that swaps two names."""
    from turnback.fs.exchange import exchange

    if not keeps_replaced(ws):
        return False
    a, b = ws / "swap-probe-a", ws / "swap-probe-b"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    fd = os.open(ws, os.O_RDONLY)
    try:
        return exchange(fd, str(ws), a.name, b.name)
    finally:
        os.close(fd)
        a.unlink()
        b.unlink()


class Crash(BaseException):
    """Stands for the process dying at that point (not an ``Exception``: nothing catches it)."""


def rewind_killed_before_release(ws: Path) -> str:
    """A store whose rewind of ``d/`` (two files) died once its files were in place, before
    it released their second names: the journal left, the store closed; its op id."""
    import pytest

    import turnback.rewind.apply as rw
    from turnback import Store

    write(ws, "d/a.txt", "a1\n")
    write(ws, "d/b.txt", "b1\n")
    store = Store.open(ws, create=True)
    cp = store.checkpoint()
    write(ws, "d/a.txt", "a2\n")
    write(ws, "d/b.txt", "b2\n")

    def die(*_a: object, **_k: object) -> None:
        raise Crash

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rw.Applier, "release", die)
        with pytest.raises(Crash):
            store.rewind(cp.id)
    pending = store.oplog.pending()
    assert pending is not None
    store.close()
    return str(pending["id"])


def killed_at(child: str, target: Path, scratch: Path, step: str) -> tuple[str, int]:
    """Run ``child`` (Python source taking ``target`` and a file to write when it has
    reached ``step``, then blocking) and SIGKILL it there: what it wrote, and its pid."""
    import signal
    import time

    ready = scratch / "ready"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", child, str(target), str(ready)],
                            stdin=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (ready.exists() and ready.read_text()):  # a condition, not a fixed wait
            assert proc.poll() is None, f"the child ended before its {step}"
            assert time.monotonic() < deadline, f"the child never reached its {step}"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
        assert proc.stdin is not None
        proc.stdin.close()
    return ready.read_text(), proc.pid


def dead_pid() -> int:
    """The pid of a process that has ended (reaped): a killed writer's, for a name."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, check=True, text=True)
    return int(proc.stdout)


def rewind_temp(op: str, path: str, pid: int, kept: bool = True, kind: str = "f") -> str:
    """The temporary name rewind ``op``'s process ``pid`` gives in ``path``'s folder: the
    second name of ``path``'s replaced file (``kept``), or a file (``kind`` ``f``) or link
    (``l``) being written there (``rewind/apply.py``)."""
    from turnback.fs import rewindnames
    from turnback.rewind.apply import kept_name, write_tag

    folder = path.rpartition("/")[0]
    tag = kept_name(op, path) if kept else write_tag(op, folder, kind, pid, "beef")
    return rewindnames.make(pid, tag)


REFUSED_LOG = "log-1-0123456789abcdef"


def plant_refused_log(ws: Path) -> None:
    """A pack log that ``ws``'s own store refuses (50 frames naming no object) planted in
    it as ``REFUSED_LOG``: a set-aside notice for the next command to tell."""
    from turnback.objects.packlog import LOG_MAGIC, encode

    planted = ws / ".turnback" / "objects" / "log" / REFUSED_LOG
    planted.write_bytes(LOG_MAGIC + encode(8, [], b"", b"") * 50)


def store_with_a_refused_log(ws: Path) -> None:
    """``ws`` with ``a.txt``, its own store with one checkpoint ("first"), and
    ``plant_refused_log``'s log in it."""
    from turnback import Store

    (ws / "a.txt").write_text("a\n")
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="first")
    plant_refused_log(ws)
