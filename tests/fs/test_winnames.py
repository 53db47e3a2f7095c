"""Names Windows cannot hold (``fs/winnames.py``), and a rewind that would write one,
refused on Windows before anything changes (the platform set on the store here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Unsafe
from turnback.fs.winnames import problem
from wsutil import picture, write


@pytest.mark.parametrize("rel", ["CON", "src/aux.c", "Nul.txt", "com1", "LPT9.log",
                                 "COM\u00b9", "con .txt", "notes.", "dir /x", "a:b",
                                 "what?.md", "x\\y", "tab\there"])
def test_names_windows_cannot_hold(rel: str) -> None:
    assert problem(rel, "C:\\w") is not None


@pytest.mark.parametrize("rel", ["console.c", "auxiliary/x", "com10", "lpt", "a.b.c",
                                 "café", ".gitignore", "x/.hidden"])
def test_names_it_can(rel: str) -> None:
    assert problem(rel, "C:\\w") is None


def test_a_path_over_max_path() -> None:
    why = problem("d/" * 130 + "x.txt", "C:\\Users\\me\\work")
    assert why is not None and "LongPathsEnabled" in why


def test_a_rewind_that_writes_one_is_refused_on_windows_before_anything_changes(
        ws: Path) -> None:
    write(ws, "ok.txt", "one\n")
    write(ws, "src/aux.c", "int main;\n")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        os.unlink(ws / "src" / "aux.c")
        write(ws, "ok.txt", "two\n")
        before = picture(ws)
        store.windows = True  # Windows' name rules, tried on Linux
        with pytest.raises(Unsafe) as err:
            store.rewind(cp.id)
        assert "src/aux.c" in err.value.message and "device name" in err.value.message
        assert f"turnback show {cp.id} src/aux.c" in err.value.message
        assert picture(ws) == before
        store.rewind(cp.id, ["ok.txt"])  # the other paths still can
        assert (ws / "ok.txt").read_text() == "one\n"


def test_a_symlink_where_none_may_be_made_is_refused(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    os.symlink("a.txt", ws / "link")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        os.unlink(ws / "link")
        store.windows = True
        store._symlinks = False  # as for a user without Developer Mode
        with pytest.raises(Unsafe, match=r"'link'.*symbolic link"):
            store.rewind(cp.id)
        assert not os.path.lexists(ws / "link")
