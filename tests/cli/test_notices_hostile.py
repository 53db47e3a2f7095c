"""``tell_notices`` against a notices module half-written by an upgrade, and a planted
``cache/notices-told`` (redteam38's pass over trust29).

trust29 let a command go on after ``CodeChanged`` from the notices' late import; a module
file half-written by an upgrade while the command ran fails as ``SyntaxError`` instead (no
``ImportError``, so no ``CodeChanged``): the command stopped with a traceback, its work not
done. The told-file is input: a FIFO or a huge file planted there neither blocks nor stops
the command (probed: sound before and after).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

import pytest

from turnback import Store
from turnback.cli import direct
from wsutil import store_with_a_refused_log

NOTICES = "turnback.store.notices"


class _HalfWritten(importlib.abc.MetaPathFinder):
    """The notices' module as a file cut short by an upgrade: its compile fails."""

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> None:
        if name == NOTICES:
            raise SyntaxError("'(' was never closed", ("notices.py", 40, 1, "def current("))
        return None


class _FileOf(importlib.abc.MetaPathFinder):
    """The notices' module read from ``file`` (compiled by Python itself, as an upgraded
    file would be)."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name != NOTICES:
            return None
        loader = importlib.machinery.SourceFileLoader(name, str(self.file))
        return importlib.util.spec_from_file_location(name, self.file, loader=loader)


def _checkpoint(ws: Path, capsys: pytest.CaptureFixture[str]) -> str:
    (ws / "a.txt").write_text("b\n")
    code = direct.run_argv(["-C", str(ws), "checkpoint", "-m", "second"])
    err = capsys.readouterr().err
    assert code == 0, err
    with Store.open(ws) as store:
        assert [c.label for c in store.checkpoints()] == ["first", "second"]
    return err


def test_a_half_written_notices_module_lets_the_command_go_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store_with_a_refused_log(ws)
    monkeypatch.delitem(sys.modules, NOTICES, raising=False)
    monkeypatch.setattr(sys, "meta_path", [_HalfWritten(), *sys.meta_path])
    err = _checkpoint(ws, capsys)  # SyntaxError raised past before: no checkpoint
    assert err.count("could not be shown") == 1, err
    assert "notices.py, line 40" in err and "reinstall" in err, err


def test_a_zero_filled_notices_module_lets_the_command_go_on_on_any_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A crash mid-write leaves the module's tail zeros: 3.10 raises ``ValueError`` for it
    (only ``SyntaxError`` was caught, 3.11's), the command stopped there."""
    ws = tmp_path / "ws"
    ws.mkdir()
    store_with_a_refused_log(ws)
    cut = tmp_path / "notices.py"
    cut.write_bytes(b'"""Notices."""\n\nimport os\n' + bytes(4096))
    monkeypatch.delitem(sys.modules, NOTICES, raising=False)
    monkeypatch.setattr(sys, "meta_path", [_FileOf(cut), *sys.meta_path])
    err = _checkpoint(ws, capsys)
    assert err.count("could not be shown") == 1, err
    assert f"{cut} holds NUL bytes" in err and "reinstall" in err, err


def test_a_bugs_value_error_in_the_notices_module_is_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``ValueError`` that is not a file's NUL bytes is a bug's: raised, not told away."""
    ws = tmp_path / "ws"
    ws.mkdir()
    store_with_a_refused_log(ws)
    buggy = tmp_path / "notices.py"
    buggy.write_text('raise ValueError("a bug at import")\n')
    monkeypatch.delitem(sys.modules, NOTICES, raising=False)
    monkeypatch.setattr(sys, "meta_path", [_FileOf(buggy), *sys.meta_path])
    (ws / "a.txt").write_text("b\n")
    with pytest.raises(ValueError, match="a bug at import"):
        direct.run_argv(["-C", str(ws), "checkpoint", "-m", "second"])


@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_a_planted_told_file_neither_blocks_nor_stops_the_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store_with_a_refused_log(ws)
    told = ws / ".turnback" / "cache" / "notices-told"
    told.parent.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(told)  # an open for reading that waited would hang here
    else:
        with open(told, "wb") as f:
            f.truncate(1 << 32)  # 4 GiB, sparse: read at most MAX_BYTES
    err = _checkpoint(ws, capsys)
    assert "holds frames no Turnback writes" in err, err  # still told
