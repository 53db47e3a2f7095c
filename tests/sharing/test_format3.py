"""Push and pull over a store holding both tree encodings (a v2 store's text trees and the
binary trees written since): git objects are made from entries, so the remote cannot tell."""

from __future__ import annotations

import pytest

from texttrees import write_text_trees
from turnback import Store
from turnback.objects.objectstore import TREE
from turnback.objects.trees import BINARY_TAG
from turnback.sharing import operations
from wsutil import write

from .conftest import Machine, Remote, git


@pytest.mark.parametrize("remote", ["file"], indirect=True)  # the transport is not the point
def test_a_mixed_store_pushes_and_its_history_pulls_whole(
        machines: list[Machine], remote: Remote, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = machines[:2]
    write(a.ws, "src/app.py", "v1\n")
    write(a.ws, "lib/util.py", "same\n")
    with Store.open(a.ws) as s:
        with monkeypatch.context() as m:
            write_text_trees(m)
            old = s.checkpoint("text trees")
        write(a.ws, "src/app.py", "v2\n")
        new = s.checkpoint("binary trees", dirty=["src/app.py"])
        lib_old, lib_new = (s.trees.lookup(cp.tree, "lib") for cp in (old, new))
        assert lib_old == lib_new and lib_old is not None  # kept as the text tree it was
        assert s.objects.get(TREE, lib_old.hash)[:1] != BINARY_TAG
        assert s.objects.get(TREE, new.tree)[:1] == BINARY_TAG
        machine = operations.push(s, remote.url)["machine"]
    commits = git("--git-dir", str(remote.path), "rev-list", f"refs/turnback/{machine}")
    assert commits.strip()
    with Store.open(b.ws) as s:
        pulled = operations.pull(s, remote.url)["machines"]
        assert [(p["refused"], p["checkpoints"]) for p in pulled] == [(None, 2)]
        assert s.read_file(old.id, "src/app.py") == b"v1\n"
        assert s.read_file(new.id, "src/app.py") == b"v2\n"
        assert s.read_file(new.id, "lib/util.py") == b"same\n"
        assert [(c.path, c.status) for c in s.changes(old.id, new.id)] == [
            ("src/app.py", "modified")]
        assert s.objects.get(TREE, s.resolve_checkpoint(old.id).tree)[:1] == BINARY_TAG
        assert s.fsck().ok
