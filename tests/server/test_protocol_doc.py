"""docs/PROTOCOL.md stays true: every method documented, every example as the server answers now."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from turnback.server.rpc import methods

from .protocol_examples import DOC, make_demo, record

BLOCK = re.compile(r"<!-- example: (.+?) -->\n```jsonc\n(.*?)```\n<!-- /example -->", re.S)


def documented() -> dict[str, list[dict[str, Any]]]:
    out = {}
    for name, body in BLOCK.findall(DOC.read_text()):
        msgs = re.split(r"^[→←⇐] ", body, flags=re.M)
        out[name] = [json.loads(m) for m in msgs if m.strip()]
    return out


def shape(value: Any) -> Any:
    """Keys of objects, recursively (the first item stands for a list)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [v for v in value if not (isinstance(v, str) and v.startswith("… "))]
        return [shape(items[0])] if items and isinstance(items[0], dict) else []
    return None


def test_every_method_and_notification_is_documented() -> None:
    text = DOC.read_text()
    examples = documented()
    for method in (*methods.REQUESTS, *methods.NOTIFICATIONS):
        assert f"### `{method}`" in text, f"no section for {method}"
        assert examples.get(method), f"no example for {method}"
    for code in ("-32602", "-32001", "-32002", "-32003", "-32004"):
        assert f"| {code} |" in text


def test_examples_match_the_server(tmp_path: Path) -> None:
    fresh = record(make_demo(tmp_path))
    doc = documented()
    assert set(doc) <= set(fresh), f"examples no longer recorded: {set(doc) - set(fresh)}"
    for name, msgs in doc.items():
        got = fresh[name]
        assert len(got) == len(msgs), name
        for old, new in zip(msgs, got, strict=True):
            for key in ("method", "params"):
                if key in old and name != "initialize":
                    assert shape(old[key]) == shape(new[key]), f"{name}: {key} differs"
            for key in ("result", "error"):
                assert (key in old) == (key in new), f"{name}: {key} differs"
                if key in old:
                    assert shape(old[key]) == shape(new[key]), (
                        f"{name}: the documented {key} no longer matches; run "
                        "tests/server/protocol_examples.py --write"
                    )
