"""The hand-off socket swapped for a link between its bind and its ``chmod``: the mode
was set on the file the link names (``~/bin/tool`` 0755 made 0600: no longer runnable).
The socket's mode is now set through a descriptor that cannot be a link's target."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from turnback import Store
from turnback.server.jobs import handoff


class _SwappedAfterBind(socket.socket):
    """A socket whose file an attacker replaces by a link as soon as it is bound."""

    victim: Path

    def bind(self, address: object) -> None:  # type: ignore[override]
        super().bind(address)  # type: ignore[arg-type]
        path = self.getsockname()
        os.unlink(path)
        os.symlink(self.victim, path)


def test_a_link_swapped_in_after_the_bind_keeps_its_target_s_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "tool"
    victim.write_text("#!/bin/sh\n")
    victim.chmod(0o755)
    _SwappedAfterBind.victim = victim
    monkeypatch.setattr(handoff.socket, "socket", _SwappedAfterBind)
    (tmp_path / "ws").mkdir(exist_ok=True)
    with Store.open(tmp_path / "ws") as store:
        path = store.root / "run" / "cli.sock"
        with pytest.raises(OSError, match=r"cli\.sock"):
            handoff._bind(str(path))
        assert victim.stat().st_mode & 0o777 == 0o755
        assert path.is_symlink()  # left for the user to look at; nothing followed it


def test_the_socket_bound_is_private(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir(exist_ok=True)
    with Store.open(tmp_path / "ws") as store:
        path = store.root / "run" / "cli.sock"
        sock = handoff._bind(str(path))
        assert sock is not None
        try:
            assert path.lstat().st_mode & 0o777 == 0o600
        finally:
            sock.close()
