"""A rewind's temporary names carry its op's tag and a mark (``fs/rewindnames.py``): a roll-back's
or a recovery's clean-up removes only names of that op whose writer is gone, and the scan
leaves only marked names out. Before (trust24) both went by the shape alone: a user's
``.turnback-tmp-123-deadbeef`` in a folder a rewind wrote was deleted by its roll-back or its
recovery, and a rewind's leftover second name was taken into checkpoints."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs import rewindnames
from wsutil import dead_pid, journal_left, rewind_killed_before_release, rewind_temp, write

LOOK_ALIKE = ".turnback-tmp-123-deadbeef"  # the shape every rewind name had before trust24


def test_a_users_look_alike_survives_a_rolled_back_rewind(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "d/a.txt", "a1\n")
    write(ws, "d/b.txt", "b1\n")
    store = Store.open(ws, create=True)
    cp = store.checkpoint()
    write(ws, "d/a.txt", "a2\n")
    write(ws, "d/b.txt", "b2\n")
    write(ws, f"d/{LOOK_ALIKE}", "my notes, only copy\n")
    real = rw.Applier._put
    calls: list[str] = []

    def disk_full_on_second(self: rw.Applier, *a: object) -> None:
        calls.append(str(a[1]))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(self, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(rw.Applier, "_put", disk_full_on_second)
    with pytest.raises(OSError, match="No space"):
        store.rewind(cp.id)
    assert (ws / "d/a.txt").read_text() == "a2\n"  # rolled back
    assert (ws / f"d/{LOOK_ALIKE}").read_text() == "my notes, only copy\n"
    assert not journal_left(store.root)
    store.close()


def test_a_users_look_alike_survives_a_recovery(ws: Path) -> None:
    rewind_killed_before_release(ws)
    write(ws, f"d/{LOOK_ALIKE}", "mine\n")
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert (ws / f"d/{LOOK_ALIKE}").read_text() == "mine\n"
    assert (ws / "d/a.txt").read_text() == "a1\n"
    assert not [n for n in os.listdir(ws / "d") if n.startswith(rw.TMP_PREFIX)
                and n != LOOK_ALIKE]  # the rewind's own second names: removed


def test_a_recovery_removes_a_killed_writes_leftover_of_its_op(ws: Path) -> None:
    op = rewind_killed_before_release(ws)
    ours = rewind_temp(op, "d/a.txt", dead_pid(), kept=False)
    link = rewind_temp(op, "d/c", dead_pid(), kept=False, kind="l")
    write(ws, f"d/{ours}", "half a file\n")
    os.symlink("a.txt", ws / "d" / link)
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert not os.path.lexists(ws / f"d/{ours}")
    assert not os.path.lexists(ws / f"d/{link}")


def _not_ours(ws: Path, op: str, case: str) -> str:
    """Plant in ``d/`` a name the recovery of ``op`` must leave: the name."""
    dead = dead_pid()
    if case == "wrong mark":
        name = rewind_temp(op, "d/a.txt", dead)
        name = name[:-4] + f"{(int(name[-4:], 16) + 1) % 0x10000:04x}"
    elif case == "another op":
        name = rewind_temp("0" * 26, "d/a.txt", dead)
    elif case == "another path":
        name = rewind_temp(op, "e/a.txt", dead)
    elif case == "live pid":
        name = rewind_temp(op, "d/a.txt", os.getppid())  # the test runner's parent
    elif case == "pid past pid_t":
        name = rewindnames.make(2**31, rw.kept_name(op, "d/a.txt"))
    elif case == "link by a second name's name":
        name = rewind_temp(op, "d/a.txt", dead)
        os.symlink("b.txt", ws / "d" / name)
        return name
    elif case == "folder":
        name = rewind_temp(op, "d/a.txt", dead)
        write(ws, f"d/{name}/x", "mine\n")
        return name
    else:
        assert case == "another user"
        name = rewind_temp(op, "d/a.txt", dead)
        write(ws, f"d/{name}", "theirs\n")
        os.chown(ws / "d" / name, 65534, 65534)
        return name
    write(ws, f"d/{name}", "mine\n")
    return name


@pytest.mark.parametrize("case", [
    "wrong mark", "another op", "another path", "live pid", "pid past pid_t",
    "link by a second name's name", "folder",
    pytest.param("another user", marks=pytest.mark.skipif(
        os.geteuid() != 0, reason="only root can give a file to another user")),
])
def test_a_name_not_certainly_this_rewinds_is_left_by_its_recovery(ws: Path, case: str) -> None:
    op = rewind_killed_before_release(ws)
    name = _not_ours(ws, op, case)
    kept = rewind_temp(op, "d/b.txt", dead_pid())  # a killed rewind's second name of d/b.txt
    write(ws, f"d/{kept}", "b2\n")
    with Store.open(ws) as again:
        assert not journal_left(again.root)
        assert again.journal_problem is None
    assert os.path.lexists(ws / "d" / name), case
    assert not (ws / "d" / kept).exists()  # the very name of this op: removed beside it


def test_the_scan_leaves_out_marked_names_only(ws: Path) -> None:
    op = "0" * 26
    marked = rewind_temp(op, "d/a.txt", dead_pid())
    written = rewind_temp(op, "e/x", 4242, kept=False, kind="l")
    write(ws, "d/a.txt", "a\n")
    write(ws, f"d/{marked}", "a second name's bytes\n")
    write(ws, f"e/{written}", "a killed write's bytes\n")
    write(ws, f"d/{LOOK_ALIKE}", "mine\n")
    write(ws, f"e/{marked}/x", "mine, in a folder so named\n")
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
        taken = set(store.trees.flatten(cp.tree))
    assert taken == {"d/a.txt", f"d/{LOOK_ALIKE}", f"e/{marked}/x"}
