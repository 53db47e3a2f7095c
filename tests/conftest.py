"""Set-up of every test: the user's own git configuration and TURNBACK_* variables stay out
of it; a fresh workspace (``ws``) and its store (``store``) for the unit tests.

Checkpoints honour ``core.excludesFile`` (gitexclude.py): a developer's global ignore
rules must not change what the tests' workspaces record. Tests of those rules point
``HOME``/``XDG_CONFIG_HOME``/``GIT_CONFIG_GLOBAL`` at their own files.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Store


def pytest_unconfigure(config: pytest.Config) -> None:
    """pytest removes a passing run's folders (``tmp_path_retention_policy = "failed"``) but
    keeps its per-user root ``pytest-of-<user>``, empty: removed here, after pytest's own
    clean-up, so that a passing run of any suite leaves nothing in the temporary folder. Only
    an empty root goes (``rmdir``): a failed run's folders stay for a look, and their root."""
    factory = getattr(config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    if basetemp is None or getattr(factory, "_given_basetemp", None) is not None:
        return  # no folder made, or one the caller named (--basetemp): not pytest's root
    root = Path(basetemp).parent
    if root.name.startswith("pytest-of-"):
        with contextlib.suppress(OSError):  # not empty, or gone: left as it is
            root.rmdir()


@pytest.fixture(autouse=True, scope="session")
def _no_user_git_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME",
                                            "XDG_STATE_HOME")}
    os.environ["GIT_CONFIG_GLOBAL"] = os.devnull
    # a CLI run by a test leaves no background server behind (tests that want one say so)
    saved["TURNBACK_BACKGROUND"] = os.environ.get("TURNBACK_BACKGROUND")
    os.environ["TURNBACK_BACKGROUND"] = "0"
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg-config"))
    # the key that signs rewind journals (rewind/signing.py) is the tests' own
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("xdg-state"))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="session")
def _casefold_mount(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path | None]:
    """With TURNBACK_TEST_FS=casefold, every ``ws`` lives on a case-insensitive,
    normalization-insensitive FUSE mount (``casefs.py``), as on macOS:
    ``scripts/test-portable.sh`` runs the core and trust tests so."""
    if os.environ.get("TURNBACK_TEST_FS") != "casefold":
        yield None
        return
    from casefs_mount import mounted, why_not

    reason = why_not()
    if reason is not None:
        pytest.skip(f"TURNBACK_TEST_FS=casefold, but {reason}")
    backing = tmp_path_factory.mktemp("casefs-backing")
    with mounted(backing, tmp_path_factory.mktemp("casefs")) as mnt:
        yield mnt


# The unit tests' workspace and store (a suite's own conftest may define its own).
@pytest.fixture
def ws(tmp_path: Path, _casefold_mount: Path | None) -> Path:
    """An empty workspace folder (the store goes to ``ws/.turnback``)."""
    if _casefold_mount is not None:
        d = Path(tempfile.mkdtemp(prefix="ws-", dir=_casefold_mount))
        return d
    d = tmp_path / "ws"
    d.mkdir()
    return d


@pytest.fixture
def store(ws: Path) -> Iterator[Store]:
    s = Store.open(ws)
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _no_turnback_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's TURNBACK_* variables must not redirect the tests' stores."""
    for name in ("TURNBACK_STORE", "TURNBACK_SESSION", "TURNBACK_AUTO_INIT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_link_answer_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fs/hardlinks`` keeps a device's "no links" for a minute: a test whose hook refuses
    every ``link`` (the probe's too) would tell the later tests' rewinds that the tests'
    disk makes no links, and their second names would not be made. And the probe goes into
    any open store's root on its device (``fs/probeplace``): a store an earlier test left
    open (closed only when collected) would take the probes of a test that looks for them
    in its own store or folder (seen in full runs: which test's store was still open
    depended on the collector's moment), so each test starts with none listed."""
    from turnback.fs import hardlinks, probeplace

    monkeypatch.setattr(hardlinks, "_by_device", {})
    monkeypatch.setattr(hardlinks, "_asked", {})
    monkeypatch.setattr(probeplace, "_OPEN", {})
