"""File names that are not UTF-8 (Linux allows any bytes but '/' and NUL) round-trip."""

from __future__ import annotations

import json
import os
from pathlib import Path

from turnback import Kind, Store
from wsutil import age_tree, picture, run_cli

LATIN = b"caf\xe9"  # latin-1 bytes: not valid UTF-8


def bpath(root: Path, *parts: bytes) -> bytes:
    return os.path.join(os.fsencode(str(root)), *parts)


def make(ws: Path) -> None:
    os.makedirs(bpath(ws, LATIN + b"-dir"))
    with open(bpath(ws, LATIN + b"-dir", b"f\xff.txt"), "wb") as f:
        f.write(b"inside\n")
    with open(bpath(ws, LATIN + b".txt"), "wb") as f:
        f.write(b"top\n")
    os.symlink(LATIN + b".txt", bpath(ws, b"link-\xfe"))


def test_checkpoint_rewind_undo_with_non_utf8_names(store: Store, ws: Path) -> None:
    make(ws)
    want = picture(ws)
    cp = store.checkpoint()
    os.unlink(bpath(ws, LATIN + b".txt"))
    with open(bpath(ws, LATIN + b"-dir", b"f\xff.txt"), "wb") as f:
        f.write(b"changed\n")
    with open(bpath(ws, b"new-\xe9"), "wb") as f:
        f.write(b"created\n")
    changed = picture(ws)
    names = {c.path for c in store.changes(cp.id)}
    assert os.fsdecode(LATIN + b".txt") in names
    res = store.rewind(cp.id)  # the journal holds these names
    assert picture(ws) == want
    assert os.fsdecode(b"new-\xe9") in res.removed
    store.undo()
    assert picture(ws) == changed
    # a fresh store reads the operation log and journal back
    Store.open(ws).undo()
    assert picture(ws) == want


def test_stat_cache_trusts_non_utf8_names_across_processes(store: Store, ws: Path) -> None:
    make(ws)
    age_tree(ws)
    store.checkpoint()
    assert Store.open(ws).scanner.scan().read == 0


def test_rewind_of_a_non_utf8_path_subset(store: Store, ws: Path) -> None:
    make(ws)
    cp = store.checkpoint()
    with open(bpath(ws, LATIN + b".txt"), "wb") as f:
        f.write(b"edited\n")
    store.rewind(cp.id, [os.fsdecode(LATIN + b".txt")])
    with open(bpath(ws, LATIN + b".txt"), "rb") as f:
        assert f.read() == b"top\n"


def test_workspace_folder_with_non_utf8_name(tmp_path: Path) -> None:
    ws = Path(os.fsdecode(bpath(tmp_path, b"w\xe9")))
    ws.mkdir()
    (ws / "f").write_text("x")
    store = Store.open(ws)
    s = store.start_session()
    store.append(s.id, Kind.PROMPT, {"text": "hi"})
    store.checkpoint(session_id=s.id)
    store.sessions()
    store.close()
    again = Store.open(ws)
    assert again.session(s.id).header.cwd == str(ws)
    assert again.stats(s.id)["prompts"] == 1


def test_cli_prints_non_utf8_names(ws: Path) -> None:
    make(ws)
    run_cli(ws, "init")
    cp = json.loads(run_cli(ws, "--json", "checkpoint").stdout)["id"]
    with open(bpath(ws, b"new-\xe9"), "wb") as f:
        f.write(b"x\n")
    out = json.loads(run_cli(ws, "--json", "changes", cp).stdout)
    # JSON holds text: the byte that is not UTF-8 is shown as a replacement character
    assert [c["path"][:4] for c in out["changes"]] == ["new-"]
    human = run_cli(ws, "changes", cp)
    assert b"new-" in human.stdout
    run_cli(ws, "rewind", cp)
    assert not os.path.exists(bpath(ws, b"new-\xe9"))
