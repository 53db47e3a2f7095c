"""A red-team pass over the incremental reads, the held stat cache, the redaction gate and
the sharing repository's configuration (docs/RELIABILITY.md, "A red-team pass over the
incremental reads and sharing's repository"). Each test is one attack."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Unsafe
from turnback.sharing import sharing

from .crashkit import tally


def count(case: str) -> None:
    tally("hostile input").add_case(case, True)


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _shared(tmp_path: Path) -> tuple[Store, Path]:
    """A workspace whose origin is a bare repository, one checkpoint pushed to it."""
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", str(remote))
    ws = tmp_path / "ws"
    _git("init", "-q", str(ws))
    _git("remote", "add", "origin", str(remote), cwd=ws)
    (ws / "a.txt").write_text("a\n")
    store = Store.open(ws, create=True)
    store.checkpoint()
    sharing.push(store)
    return store, remote


# -- a store's sharing repository configured to run a command -----------------------------
@pytest.mark.parametrize("case", ["insteadOf ext::", "sshCommand", "include.path",
                                  "credential.helper"])
@pytest.mark.parametrize("verb", ["push", "pull"])
def test_a_shipped_sharing_repository_config_runs_nothing(tmp_path: Path, case: str,
                                                          verb: str) -> None:
    store, remote = _shared(tmp_path)
    try:
        marker = tmp_path / "ran"
        config = store.root / "share" / "git" / "config"
        command = f"sh -c 'touch {marker}' >&2"
        lines = {
            "insteadOf ext::": [("url.ext::sh -c touch% " + str(marker) + "% >&2.insteadOf",
                                 str(remote)), ("protocol.ext.allow", "always")],
            "sshCommand": [("core.sshCommand", command)],
            "include.path": [("include.path", str(tmp_path / "more"))],
            "credential.helper": [("credential.helper", "!" + command)],
        }[case]
        if case == "include.path":  # the keys in a file the store's config includes
            _git("config", "-f", str(tmp_path / "more"),
                 "url.ext::sh -c touch% " + str(marker) + "% >&2.insteadOf", str(remote))
            _git("config", "-f", str(tmp_path / "more"), "protocol.ext.allow", "always")
        for key, value in lines:
            _git("config", "-f", str(config), key, value)
        (store.workspace / "b.txt").write_text("b\n")
        store.checkpoint()
        with pytest.raises(Unsafe, match="never writes there"):
            sharing.push(store) if verb == "push" else sharing.pull(store)
        assert not marker.exists()
        count(f"sharing repository config: {case} ({verb})")
    finally:
        store.close()


def test_the_sharing_repository_turnback_writes_is_accepted(tmp_path: Path) -> None:
    """Its own keys (machine id, forgotten sessions, history remote) pass the check."""
    store, remote = _shared(tmp_path)
    try:
        sharing.remote(store, set_to=str(remote))
        (store.workspace / "b.txt").write_text("b\n")
        store.checkpoint()
        assert sharing.push(store)["checkpoints"] >= 2
        sharing.pull(store)
    finally:
        store.close()

