"""Hypothesis fuzz of every method's params: each answer is a result or one of SPEC's errors.

An internal error (-32603) means an input reached code that did not expect it;
the test fails on it, and on a server that stops answering.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from turnback.server.rpc import methods

from .conftest import TurnbackClient

EXPECTED = {-32602, -32001, -32002, -32003, -32004, -32800}

FIELDS = {
    methods.STATUS: ["folder"],
    methods.SESSIONS: ["folder", "offset", "limit", "query"],
    methods.SESSION: ["sessionId", "offset", "limit", "folder"],
    methods.CHECKPOINTS: ["folder", "sessionId"],
    methods.CREATE_CHECKPOINT: ["folder", "sessionId", "label", "auto", "workDoneToken"],
    methods.CHANGES: ["from", "to", "paths", "folder"],
    methods.FILE_CONTENT: ["checkpoint", "path", "folder"],
    methods.REWIND: ["checkpoint", "paths", "mode", "dryRun", "folder"],
    methods.UNDO: ["folder", "dryRun"],
    methods.FORK: ["eventId", "sessionId", "folder"],
    methods.IMPORT: ["source", "path", "folder", "workDoneToken"],
    methods.GC: ["folder", "dryRun", "keepLast", "keepDays", "quotaBytes", "workDoneToken"],
    methods.TURNS: ["sessionId", "offset", "limit", "folder"],
    methods.TURN_STEPS: ["sessionId", "turnId", "folder"],
    methods.FILE_HISTORY: ["path", "offset", "limit", "folder"],
    methods.IMPORT_CANDIDATES: ["folder"],
    methods.CONTINUE: ["sessionId", "turnId", "dryRun", "folder"],
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=24),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
plausible = st.sampled_from(
    ["latest", "latest~1", "latest~-1", "workspace", "src/app.py", "README.md", ".", "..", "a/../b",
     "files", "both", "conversation", "claude-code", "codex", "aider", "turnback", "", "\x00",
     "file:///", "0", "cp-", "x" * 300]
)
values = st.one_of(plausible, json_values, st.lists(plausible, max_size=3), st.integers(-2, 5))


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, Any]:
    method = draw(st.sampled_from(sorted(FIELDS)))
    if draw(st.integers(0, 9)) == 0:
        return method, draw(json_values)  # not even an object
    keys = draw(st.lists(st.sampled_from(FIELDS[method]) | st.text(max_size=6), max_size=5))
    params = {k: draw(values) for k in keys}
    if method == methods.IMPORT and isinstance(params.get("path"), str):
        # A fuzzer must not point an importer at the real home or root folder.
        params["path"] = "fuzz/" + params["path"].lstrip("/~")
    return method, params


def draw_cases(n: int) -> list[tuple[str, Any]]:
    cases: list[tuple[str, Any]] = []

    @settings(max_examples=n, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(requests())
    def collect(case: tuple[str, Any]) -> None:
        cases.append(case)

    collect()
    return cases


# Fuzzed workDoneTokens are tokens this test client never handed out: it says so.
@pytest.mark.filterwarnings("ignore::pytest_lsp.checks.LspSpecificationWarning")
async def test_fuzzed_params_get_answers(client: TurnbackClient, ws: Path) -> None:
    await client.call("turnback/createCheckpoint", {})
    (ws / "src" / "app.py").write_text("changed\n")
    await client.call("turnback/createCheckpoint", {})
    counts = {"ok": 0, "error": 0}
    for method, params in draw_cases(400):
        try:
            result = await client.call(method, params)
        except JsonRpcException as exc:
            assert exc.code in EXPECTED, f"{method} {params!r} -> {exc.code} {exc.message}"
            assert exc.message, f"{method} {params!r}: an error without a message"
            counts["error"] += 1
        else:
            assert isinstance(result, dict), f"{method} {params!r} -> {result!r}"
            counts["ok"] += 1
    print(f"fuzz: {counts}")
    assert counts["ok"] > 20 and counts["error"] > 100
    assert "checkpoints" in await client.call("turnback/status", {})


async def test_fuzzed_settings_and_folders_keep_the_server_up(
    client: TurnbackClient, ws: Path
) -> None:
    cases: list[Any] = []

    @settings(max_examples=60, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(json_values, st.text(max_size=30))
    def collect(value: Any, uri: str) -> None:
        cases.append((value, uri))

    collect()
    for value, uri in cases:
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"turnback": value})
        )
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=value))
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[], removed=[types.WorkspaceFolder(uri=uri or "x", name="x")]
                )
            )
        )
    # Whatever the fuzz left in force, good settings bring the folder back.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"turnback": {}})
    )
    status = await client.call("turnback/status", {})
    assert status["folder"] == str(ws) and status["store"] == str(ws / ".turnback")
