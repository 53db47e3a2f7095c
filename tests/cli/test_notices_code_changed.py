"""A command whose notices cannot be shown goes on (trust29; redteam35's open item).

``tell_notices`` runs right after the open, before the command's work; the notices' module
is imported there only when something was set aside (``store.notices``, imported late). After
an upgrade while a server or a long command ran, that import fails as ``CodeChanged``, which
``tell_notices`` (catching ``OSError`` only) let through: the command stopped, its work not
done. Now it says so once on stderr and the command goes on.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.cli import direct
from wsutil import store_with_a_refused_log


def test_a_checkpoint_goes_on_when_the_notices_module_cannot_be_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store_with_a_refused_log(ws)
    (ws / "a.txt").write_text("b\n")
    monkeypatch.setitem(sys.modules, "turnback.store.notices", None)  # as if removed
    # the fast path only runs without a terminal on stderr: capsys's is none
    code = direct.run_argv(["-C", str(ws), "checkpoint", "-m", "second"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count("could not be shown") == 1, err
    assert "turnback.store.notices" in err and "reinstall" in err, err
    assert "Nothing was changed" not in err
    monkeypatch.undo()
    with Store.open(ws) as store:
        assert [c.label for c in store.checkpoints()] == ["first", "second"]
        assert store.read_file(store.checkpoints()[-1].id, "a.txt") == b"b\n"
