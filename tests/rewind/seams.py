"""Set-ups shared by the rewind's seam tests: a workspace a rewind creates a file in or
replaces files of, a hook at a seam of the create or of the replacement, and the skips
where the file system lacks what a seam needs (``RENAME_NOREPLACE``, hard links).

A hook fires where the rewind's code is the same before and after the fixes the tests
guard (the write's ``chmod``, ``Applier._keep_replaced``, ``Applier._check_replaced``),
so each test still fails on the code it was written against."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs import exchange
from turnback.fs.folders import Folder
from wsutil import journal_left, write

N1 = b"n1, in the checkpoint\n"  # the file a rewind creates
W1 = b"z3, written through a descriptor held open, before the rename\n"  # a late write
BY_PATH = os.environ.get("TURNBACK_FS_PATHS") == "1"


class Killed(BaseException):
    """The process dies here: no roll-back, the journal stays for the next open."""


def no_replace_here(where: Path) -> bool:
    """Whether a rename in ``where`` can refuse to replace (``RENAME_NOREPLACE``, folders
    held by descriptors): else the create is a plain rename."""
    if BY_PATH:
        return False
    (where / "p1").write_bytes(b"1")
    fd = os.open(where, os.O_RDONLY)
    try:
        return exchange.rename_no_replace(fd, str(where), "p1", "p2")
    finally:
        os.close(fd)
        for n in ("p1", "p2"):
            if (where / n).exists():
                (where / n).unlink()


def skip_without_hard_links(ws: Path) -> None:
    """Skip where the file system has no hard links (the case-folding test mount): no
    second name is made there, so there is nothing to put back."""
    probe = ws / "probe"
    probe.write_bytes(b"")
    try:
        os.link(probe, ws / "probe2")
        os.unlink(ws / "probe2")
    except OSError:
        pytest.skip("no hard links on this file system: no second names, no put back")
    finally:
        probe.unlink()


def removed_since(ws: Path, name: str = "n.txt") -> tuple[Store, str]:
    """A checkpoint holding ``name`` (N1) and a.txt; ``name`` removed and a.txt changed
    since: a rewind to it creates ``name`` and writes a.txt."""
    write(ws, "a.txt", "a1\n")
    (ws / name).write_bytes(N1)
    store = Store.open(ws)
    cp = store.checkpoint().id
    write(ws, "a.txt", "a2\n")
    (ws / name).unlink()
    return store, cp


def changed_since(ws: Path, extra: dict[str, str] | None = None) -> tuple[Store, str]:
    """A checkpoint holding a.txt and z.txt (and ``extra``), both changed since: a rewind
    to it replaces both."""
    write(ws, "a.txt", "a1\n")
    write(ws, "z.txt", "z1\n")
    for path, text in (extra or {}).items():
        write(ws, path, text)
    store = Store.open(ws)
    cp = store.checkpoint().id
    write(ws, "a.txt", "a2\n")
    write(ws, "z.txt", "z2\n")
    return store, cp


def saved_over(ws: Path, data: bytes, name: str = "z.txt") -> None:
    """An editor's save: ``data`` written beside ``name``, then renamed over it."""
    (ws / f"{name}.swp").write_bytes(data)
    os.replace(ws / f"{name}.swp", ws / name)


def set_aside(ws: Path, message: str) -> tuple[dict[str, bytes], set[str]]:
    """The files set aside in ``ws`` (``.turnback-saved-<hex>`` names, with their
    content), and the names of such files that ``message`` gives."""
    held = {p.name: p.read_bytes() for p in ws.iterdir() if "turnback-saved-" in p.name}
    named = {Path(p).name for p in re.findall(r"'([^']*turnback-saved-[0-9a-f]{8})'", message)}
    return held, named


def before_the_create(monkeypatch: pytest.MonkeyPatch, then: Callable[[], None]) -> None:
    """``then`` runs once, when the created file's write (N1) is whole at its temporary
    name: after the create's look at its path, before the rename into place."""
    real = rw.chmod_fd
    fired: list[int] = []

    def chmod_then(fd: int, where: str, mode: int) -> None:
        real(fd, where, mode)
        with open(where, "rb") as f:
            if f.read() == N1 and not fired:
                fired.append(fd)
                then()

    monkeypatch.setattr(rw, "chmod_fd", chmod_then)


def late_write(monkeypatch: pytest.MonkeyPatch, fd: int) -> None:
    """W1 lands in z.txt through ``fd`` right before its replacement (after its look):
    the file kept by its second name holds it, to be put back."""
    real_keep = rw.Applier._keep_replaced

    def before_the_rename(self: rw.Applier, dfd: Folder, name: str, *rest: str) -> str | None:
        if name == "z.txt":
            os.pwrite(fd, W1, 0)
        return real_keep(self, dfd, name, *rest)

    monkeypatch.setattr(rw.Applier, "_keep_replaced", before_the_rename)


def killed_at_the_look(monkeypatch: pytest.MonkeyPatch, name: str = "z.txt") -> None:
    """The process dies (``Killed``) after ``name``'s replacement, before the look at the
    file it replaced (the late write still held by its second name)."""
    real_check = rw.Applier._check_replaced

    def killed(dfd: Folder, at: str, *rest: object) -> None:
        if at == name:
            raise Killed
        real_check(dfd, at, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(rw.Applier, "_check_replaced", staticmethod(killed))


def refuse_put_back(monkeypatch: pytest.MonkeyPatch, ws: Path, name: str) -> None:
    """Every way a late write's file goes back to ``name`` fails (EIO): the rename over
    the rewind's own write (z1 in place) and the link once that write is moved aside."""
    real_rename = rw.FdFolder.rename
    real_link = rw.FdFolder.link

    def refused_back(self: rw.FdFolder, src: str, dst: str) -> None:
        if dst == name and src.startswith(rw.TMP_PREFIX) and (ws / name).read_text(
                ) == "z1\n":  # the put back, once the rewind's own write is in place
            raise OSError(5, "Input/output error")
        real_rename(self, src, dst)

    def refused_link(self: rw.FdFolder, src: str, dst: str) -> None:
        # the put back links the file kept in place once the rewind's write is moved aside
        if dst == name and src.startswith(rw.TMP_PREFIX) and not (ws / name).exists():
            raise OSError(5, "Input/output error")
        real_link(self, src, dst)

    monkeypatch.setattr(rw.FdFolder, "rename", refused_back)
    monkeypatch.setattr(rw.FdFolder, "link", refused_link)


def late_write_then_kill(ws: Path, monkeypatch: pytest.MonkeyPatch, store: Store,
                         cp: str) -> None:
    """Rewind to ``cp``; W1 lands in z.txt before its rename; the process dies after the
    rename, before the look at the replaced file: the rewind's write (z1) in place, the late
    write held by its second name, the journal left for the next open; ``store`` closed."""
    fd = os.open(ws / "z.txt", os.O_WRONLY)
    late_write(monkeypatch, fd)
    killed_at_the_look(monkeypatch)
    try:
        with pytest.raises(Killed):
            store.rewind(cp)
    finally:
        os.close(fd)
        monkeypatch.undo()
    assert (ws / "z.txt").read_text() == "z1\n"  # the rewind's write, the late one held
    assert journal_left(store.root)
    store.close()
