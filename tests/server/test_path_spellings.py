"""Paths from a client reach the store in one spelling a file: a rewind's, a diff's, a
comparison's and a file's content paths are normalised (``fs/paths.normalize``) before any
lookup, so ``./src/app.py``, ``src//app.py`` and ``src/./app.py`` are ``src/app.py`` in the
answer, and a climbing one is refused naming it, nothing changed. Guards (trust25): these
passed before; the spelling the store did not normalise was the scan's changed paths
(``tests/snapshot/test_changed_path_spellings.py``), which no method takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import TurnbackClient


@pytest.mark.parametrize("spelled", ["./src/app.py", "src//app.py", "src/./app.py", "src/app.py/"])
async def test_a_clients_path_in_any_spelling_names_one_file(
        client: TurnbackClient, ws: Path, spelled: str) -> None:
    cp = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
    (ws / "src" / "app.py").write_text("broken\n")
    content = await client.call("turnback/fileContent", {"checkpoint": cp, "path": spelled})
    assert content["path"] == "src/app.py" and content["text"] == "print('hello')\n"
    changes = await client.call("turnback/changes", {"from": cp, "paths": [spelled]})
    assert [c["path"] for c in changes["changes"]] == ["src/app.py"]
    res = await client.call("turnback/rewind", {"checkpoint": cp, "paths": [spelled]})
    assert res["written"] == ["src/app.py"]
    assert (ws / "src" / "app.py").read_text() == "print('hello')\n"


async def test_a_climbing_path_is_refused_naming_it(client: TurnbackClient, ws: Path) -> None:
    cp = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
    (ws / "src" / "app.py").write_text("broken\n")
    with pytest.raises(Exception, match=r"src/\.\./\.\./app\.py.*outside the workspace"):
        await client.call("turnback/rewind", {"checkpoint": cp, "paths": ["src/../../app.py"]})
    assert (ws / "src" / "app.py").read_text() == "broken\n"
