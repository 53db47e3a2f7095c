"""A full disk and a read-only store: a clear error, nothing half-written, the store opens.

Where the tests run as root they use the real thing — a tiny tmpfs, a read-only
bind mount; elsewhere a file-size limit (``RLIMIT_FSIZE``) stands in for the full
disk and ``chmod`` makes the store read-only.
"""

from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from turnback import Store
from wsutil import cli_env, journal_left, picture, run_cli, write

from .crashkit import tally

FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def count(case: str) -> None:
    tally("disk full / read-only").add_case(case, True)


def _mount(*args: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextmanager
def tiny_fs(path: Path, size: str) -> Iterator[bool]:
    """A tmpfs of ``size`` at ``path`` when permitted; yields whether it is mounted."""
    path.mkdir(parents=True, exist_ok=True)
    ok = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    try:
        yield ok
    finally:
        if ok:
            subprocess.run(["umount", "-l", str(path)], check=True)


def in_child(fn: Callable[[], None], fsize: int | None = None) -> tuple[int, str]:
    """Run ``fn`` in a forked child (optionally with a file-size limit); (exit code, error)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        os.close(r)
        try:
            if fsize is not None:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes fail with EFBIG instead
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            fn()
        except OSError as exc:
            os.write(w, f"{exc.errno} {exc}".encode())
            code = 1
        except BaseException as exc:
            os.write(w, f"0 {type(exc).__name__}: {exc}".encode())
            code = 2
        os._exit(code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), data.decode()


def _check_intact(ws: Path, store_dir: Path | None, checkpoints: int, events: int) -> Store:
    store = Store.open(ws, store_dir=store_dir)
    rep = store.fsck()
    assert rep.ok, rep.damaged  # stray temp files and unfinished packs are not damage
    assert len(store.checkpoints()) == checkpoints, "a half-written checkpoint is listed"
    assert len(store.session("s").events) == events
    return store


def _fill(ws: Path, n: int, size: int) -> None:
    for i in range(n):
        write(ws, f"data/f{i}.bin", os.urandom(size))  # incompressible


# -- full disk --------------------------------------------------------------------------------

def test_checkpoint_and_append_on_a_full_disk(tmp_path: Path) -> None:
    ws, store_dir = tmp_path / "ws", tmp_path / "store"
    with tiny_fs(store_dir, "3m") as real:
        write(ws, "a.txt", "a\n")
        store = Store.open(ws, store_dir=store_dir)
        s = store.start_session(session_id="s")
        store.append(s.id, "prompt", {"text": "x"})
        store.checkpoint(session_id=s.id)
        _fill(ws, 8, 600_000)  # 4.8 MB: more than the store's disk
        write(ws, "data/huge.bin", os.urandom(1_500_000))  # (larger than the size limit)

        def cp() -> None:
            Store.open(ws, store_dir=store_dir).checkpoint(session_id="s")

        code, err = in_child(cp, fsize=None if real else 1_000_000)
        assert code == 1 and int(err.split()[0]) in FULL, err
        store = _check_intact(ws, store_dir, 1, 2)
        if real:  # the CLI says what is wrong, on stderr, exit 1
            proc = run_cli(ws, "--store", str(store_dir), "checkpoint", check=None)
            assert proc.returncode == 1 and b"No space left on device" in proc.stderr
            assert b"Traceback" not in proc.stderr
            _check_intact(ws, store_dir, 1, 2)
            filler = store_dir / "filler"
            with open(filler, "wb") as f:  # now fill it to the last byte
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError:
                    pass

            def big_append() -> None:
                Store.open(ws, store_dir=store_dir).append("s", "note", {"pad": "z" * 200_000})

            code, err = in_child(big_append)
            assert code == 1 and int(err.split()[0]) == errno.ENOSPC, err
            filler.unlink()
        else:
            def big_append() -> None:
                Store.open(ws, store_dir=store_dir).append("s", "note", {"pad": "z" * 2_000_000})

            code, err = in_child(big_append, fsize=1_000_000)
            assert code == 1 and int(err.split()[0]) in FULL, err
        store = _check_intact(ws, store_dir, 1, 2)  # a torn append is not read back
        shutil.rmtree(ws / "data")
        store.gc()  # the failed checkpoint's whole objects are garbage: gc reclaims them
        nxt = store.append("s", "note", {"text": "space again"})
        assert store.session("s").events[-1].id == nxt.id and not store.session("s").problems
        store.checkpoint(session_id="s")
        _check_intact(ws, store_dir, 2, 4)
    count(f"checkpoint and append on a full disk ({'tmpfs' if real else 'RLIMIT_FSIZE'})")


def test_rewind_on_a_full_disk_puts_the_workspace_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with tiny_fs(ws, "4m") as real:
        store_dir = tmp_path / "store"
        write(ws, ".gitignore", "ballast.bin\n")  # ignored: the rewind never removes it
        write(ws, "keep.txt", "keep\n")
        _fill(ws, 5, 500_000)
        store = Store.open(ws, store_dir=store_dir)
        s = store.start_session(session_id="s")
        big = store.checkpoint(session_id=s.id)
        shutil.rmtree(ws / "data")
        write(ws, "keep.txt", "changed\n")
        _fill(ws, 1, 500_000)
        if real:  # leave less room than the rewind needs
            write(ws, "ballast.bin", os.urandom(2_200_000))
        before = picture(ws)
        store.checkpoint(session_id=s.id)

        def rewind() -> None:
            Store.open(ws, store_dir=store_dir).rewind(big.id)

        code, err = in_child(rewind, fsize=None if real else 300_000)
        assert code in (1, 2) and ("No space" in err or "too large" in err
                                   or int(err.split()[0]) in FULL), err
        after = Store.open(ws, store_dir=store_dir)  # opens: no journal left to replay
        assert not journal_left(store_dir)
        assert picture(ws) == before, "the workspace was left half rewound"
        assert after.fsck().ok
    count(f"rewind on a full disk ({'tmpfs' if real else 'RLIMIT_FSIZE'})")


# -- read-only store ----------------------------------------------------------------------------

@contextmanager
def read_only(path: Path) -> Iterator[str]:
    if _mount("--bind", str(path), str(path)):
        try:
            if not _mount("-o", "remount,ro,bind", str(path)):
                raise RuntimeError("remount read-only failed")
            yield "read-only bind mount"
        finally:
            subprocess.run(["umount", "-l", str(path)], check=True)
    elif os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [path, *path.rglob("*")]}
        for p in modes:
            p.chmod(modes[p] & ~0o222)
        try:
            yield "chmod a-w"
        finally:
            for p, m in modes.items():
                p.chmod(m)
    else:
        pytest.skip("root without mount: cannot make the store read-only")


def test_read_only_store(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "a\n")
    store = Store.open(ws)
    s = store.start_session(session_id="s")
    store.append(s.id, "prompt", {"text": "x"})
    cp = store.checkpoint(session_id=s.id)
    write(ws, "a.txt", "changed\n")
    before = picture(ws)
    # closed first: an open store's folders are held (fs/storeroots.py), and a descriptor held
    # from before the bind mount below still reaches the writable mount under it
    store.close()
    with read_only(store.root) as how:
        ro = Store.open(ws)  # opens
        assert [e.kind for e in ro.session("s").events] == ["prompt", "checkpoint"]
        assert ro.sessions()[1] == 1 and ro.fsck().ok
        assert [c.path for c in ro.changes(cp.id)] == ["a.txt"]
        assert "changed" in ro.diff(cp.id)
        for what, fn in (("append", lambda: ro.append("s", "note", {})),
                         ("checkpoint", lambda: ro.checkpoint()),
                         ("rewind", lambda: ro.rewind(cp.id))):
            with pytest.raises(OSError) as info:
                fn()
            assert info.value.errno in (errno.EROFS, errno.EACCES), what
        assert picture(ws) == before  # the rewind failed before touching the workspace
        proc = run_cli(ws, "record", "note", "--session", "s", "--text", "x", check=None,
                       env=cli_env())
        assert proc.returncode == 1 and (b"Read-only file system" in proc.stderr
                                         or b"Permission denied" in proc.stderr)
        assert b"Traceback" not in proc.stderr
        out = run_cli(ws, "--json", "session", "show", "s").stdout
        assert b'"prompt"' in out
        ro.close()  # its held folders were opened through the read-only mount
    store = Store.open(ws)
    assert len(store.session("s").events) == 2 and store.fsck().ok
    store.append("s", "note", {"text": "writable again"})
    count(f"read-only store ({how})")
