"""The modules a checkpoint no longer imports (``rewind.apply``, ``sessions.turns``,
issue 23's branch ``start23c``) are imported by the first rewind or turn listing, long after
the process started: by then the package's files may be gone or another version's (an
upgrade while a server runs). Such a failure is an error that says so and what to do, and it
comes before anything is written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from turnback import Kind, Store
from turnback.errors import CodeChanged, TurnbackError
from wsutil import write


def _blocked(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """``import module`` fails from now on, as for a file removed or made unimportable."""
    monkeypatch.setitem(sys.modules, module, None)


def test_a_rewind_whose_code_cannot_be_imported_is_a_named_error_and_changes_nothing(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    before = len(store.checkpoints())
    _blocked(monkeypatch, "turnback.rewind.apply")
    with pytest.raises(CodeChanged, match=r"turnback\.rewind\.apply.*restart") as err:
        store.rewind(cp.id)
    assert isinstance(err.value, TurnbackError)
    assert (ws / "f").read_text() == "v2"
    assert store.oplog.pending() is None  # no journal left to replay at every open
    assert len(store.checkpoints()) == before  # no safety checkpoint for a refused rewind
    monkeypatch.undo()  # the code back (the server restarted): the rewind goes ahead
    store.rewind(cp.id)
    assert (ws / "f").read_text() == "v1"


def test_turns_whose_code_cannot_be_imported_are_a_named_error(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = store.start_session(title="t", agent="codex").id
    store.append(sid, Kind.PROMPT, {"text": "hello"})
    _blocked(monkeypatch, "turnback.sessions.turns")
    with pytest.raises(CodeChanged, match=r"turnback\.sessions\.turns"):
        store.turns(sid)
    monkeypatch.undo()
    assert len(store.turns(sid)) == 1


@pytest.mark.parametrize("module", ["turnback.rewind.plan", "turnback.fs.winnames"])
def test_the_plan_and_name_checks_imported_late_fail_as_named_errors(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """``cold27`` moved ``rewind.plan`` and ``fs.winnames`` into the rewind's methods
    without ``imported_late``: an upgrade while a server ran made the next rewind a bare
    ``ImportError`` (an internal error, the CLI's traceback) rather than what it is.
    Fails before (redteam35). Still before anything is written."""
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    before = len(store.checkpoints())
    store.windows = True  # the Windows name check runs here too (``_refuse_unportable``)
    _blocked(monkeypatch, module)
    with pytest.raises(CodeChanged, match=module.replace(".", r"\.") + ".*restart"):
        store.rewind(cp.id)
    assert (ws / "f").read_text() == "v2"
    assert store.oplog.pending() is None
    assert len(store.checkpoints()) == before


def test_the_notices_imported_late_fail_as_a_named_error(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """``store.notices`` (imported only when something was set aside): a named error too.
    Fails before (a bare ``ImportError``; redteam35)."""
    _blocked(monkeypatch, "turnback.store.notices")
    with pytest.raises(CodeChanged, match=r"turnback\.store\.notices"):
        store.notices()
    with pytest.raises(CodeChanged, match=r"turnback\.store\.notices"):
        store.untold_notices("server")
