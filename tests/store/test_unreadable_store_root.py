"""A store's root that cannot be looked at is named so, not "replaced" (trust30).

``HeldFolder.replaced`` took any error of its ``stat`` for a replaced store: where a parent
folder lost its search permission (EACCES) or the disk failed (EIO), a checkpoint was
refused saying the store "was replaced (made again, restored or moved)", which was not
true and sent the user the wrong way. It is still refused (nothing is trusted to a store
that cannot be seen), but the error names the path, the error, and what to do; a store
gone from its path (ENOENT) is still named replaced.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.fs import heldfolder


@pytest.mark.parametrize("code", [errno.EACCES, errno.EIO, errno.ENOENT])
def test_a_root_stat_failing_is_named_for_its_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
        (ws / "a.txt").write_text("changed\n")
        root = store.root
        real = os.stat
        hit: list[str] = []

        def stat(path: Any, *a: Any, **kw: Any) -> os.stat_result:
            # the held folder's look only: os.stat is the process's, and other code (or
            # another thread) looking at the root must see it as it is
            if (sys._getframe(1).f_code is heldfolder.HeldFolder.replaced.__code__
                    and Path(path) == root):
                hit.append(str(path))
                raise OSError(code, os.strerror(code), str(path))
            return real(path, *a, **kw)

        monkeypatch.setattr(heldfolder.os, "stat", stat)
        with pytest.raises(TurnbackError) as got:
            store.checkpoint(label="second")
        monkeypatch.setattr(heldfolder.os, "stat", real)
        assert hit
        message = str(got.value)
        assert str(root) in message, message
        if code == errno.ENOENT:
            assert "was replaced" in message, message
        else:
            assert "was replaced" not in message, message
            assert "could not be looked at" in message and os.strerror(code) in message
        assert [c.label for c in store.checkpoints()] == ["first"]  # nothing recorded
