"""turnback/checkpoints says which checkpoints are a rewind's or an undo's safety
checkpoint (``safetyOf``), so a client names them without nesting their labels."""

from __future__ import annotations

import json
from pathlib import Path

from turnback.server.rpc import methods
from turnback.store import safety_names

from .conftest import TurnbackClient


def test_the_protocol_names_the_stores_operations() -> None:
    assert (methods.SAFETY_REWIND, methods.SAFETY_UNDO) == (safety_names.REWIND,
                                                            safety_names.UNDO)


async def test_safety_checkpoints_say_what_they_were_taken_before(
    client: TurnbackClient, ws: Path
) -> None:
    good = (await client.call("turnback/createCheckpoint", {"label": "good"}))["checkpoint"]
    (ws / "src" / "app.py").write_text("broken\n")
    rewound = await client.call("turnback/rewind", {"checkpoint": good["id"]})
    undone = await client.call("turnback/undo", {})
    listed = {c["id"]: c for c in (await client.call("turnback/checkpoints", {}))["checkpoints"]}
    # the stored labels are as before: an older client reads them
    assert listed[rewound["safetyCheckpoint"]]["label"] == f"before rewind to {good['id']}"
    # with the words the CLI prints (the extension shows these: written once, in Python)
    assert listed[rewound["safetyCheckpoint"]]["safetyOf"] == {
        "op": "rewind", "checkpoint": good["id"], "words": "before rewind to “good”"}
    assert listed[undone["safetyCheckpoint"]]["safetyOf"] == {
        "op": "undo", "checkpoint": rewound["safetyCheckpoint"],
        "words": "before undo of rewind to “good”"}
    assert "safetyOf" not in listed[good["id"]]


async def test_a_user_label_of_that_shape_is_no_safety_checkpoint(
    client: TurnbackClient, ws: Path
) -> None:
    good = (await client.call("turnback/createCheckpoint", {"label": "good"}))["checkpoint"]
    mine = (await client.call("turnback/createCheckpoint",
                              {"label": f"before rewind to {good['id']}"}))["checkpoint"]
    listed = {c["id"]: c for c in (await client.call("turnback/checkpoints", {}))["checkpoints"]}
    assert "safetyOf" not in listed[mine["id"]], "a user's checkpoint is not automatic"


async def test_a_sessions_listing_names_checkpoints_of_other_sessions(
    client: TurnbackClient, ws: Path
) -> None:
    good = (await client.call("turnback/createCheckpoint", {"label": "good"}))["checkpoint"]
    (ws / "src" / "app.py").write_text("broken\n")
    rewound = await client.call("turnback/rewind", {"checkpoint": good["id"]})
    listed = {c["id"]: c for c in (await client.call("turnback/checkpoints", {}))["checkpoints"]}
    sid = listed[rewound["safetyCheckpoint"]]["sessionId"]
    one = (await client.call("turnback/checkpoints", {"sessionId": sid}))["checkpoints"]
    said = {c["id"]: c.get("safetyOf", {}).get("words") for c in one}
    assert said[rewound["safetyCheckpoint"]] == "before rewind to “good”"


async def test_other_answers_say_a_checkpoint_as_the_listing_does(
    client: TurnbackClient, ws: Path
) -> None:
    """turnback/fileHistory's and turnback/createCheckpoint's checkpoint was the record as
    stored: no words, and a pulled one kept another machine's ``safetyOf``."""
    good = (await client.call("turnback/createCheckpoint", {"label": "good"}))["checkpoint"]
    (ws / "src" / "app.py").write_text("broken\n")
    rewound = await client.call("turnback/rewind", {"checkpoint": good["id"]})
    safety_id = rewound["safetyCheckpoint"]
    # the safety checkpoint's record, as a pull from another machine stores it
    index = ws / ".turnback" / "checkpoints.jsonl"
    records = {r.get("id"): r for r in map(json.loads, index.read_text().splitlines())}
    record = records[safety_id]
    assert record["safetyOf"] == {"op": "rewind", "checkpoint": good["id"]}
    # later, and holding another version of the file: a row of its history
    pulled = {**record, "id": "f" * 64, "origin": "laptop-of-ana",
              "tree": records[good["id"]]["tree"],
              "ts": record["ts"].replace(record["ts"][:4], "2099")}
    with index.open("a") as f:
        f.write(json.dumps(pulled) + "\n")
    history = await client.call("turnback/fileHistory", {"path": "src/app.py"})
    by_id = {v["checkpoint"]["id"]: v["checkpoint"] for v in history["versions"]}
    assert by_id[safety_id]["safetyOf"] == {"op": "rewind", "checkpoint": good["id"],
                                            "words": "before rewind to “good”"}
    assert by_id["f" * 64]["origin"] == "laptop-of-ana"
    assert "safetyOf" not in by_id["f" * 64], by_id["f" * 64]
    # an automatic checkpoint whose label has the store's shape (an older record's) is named
    # in words in the answer that made it, as in the listing
    made = (await client.call("turnback/createCheckpoint",
                              {"label": f"before rewind to {good['id']}", "auto": True})
            )["checkpoint"]
    listed = {c["id"]: c for c in (await client.call("turnback/checkpoints", {}))["checkpoints"]}
    assert made == listed[made["id"]]
    assert made["safetyOf"]["words"] == "before rewind to “good”"
