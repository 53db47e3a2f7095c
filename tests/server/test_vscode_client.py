"""The editor's JSON-RPC library (vscode-jsonrpc, run by node) against the server's own
stdin framing (framing.py): every other server test speaks through pygls's client, whose
framing the server's reader was written beside. This one frames as VS Code does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO, SERVER_CMD, make_workspace, server_env

SCRIPT = Path(__file__).with_name("vscode_client.js")


def _node_path() -> str | None:
    """Where vscode-jsonrpc is: the repository's node_modules, else $NODE_PATH's."""
    dirs = [str(REPO / "node_modules"), *os.environ.get("NODE_PATH", "").split(os.pathsep)]
    entry = Path("vscode-jsonrpc", "lib", "node", "main.js")
    found = [d for d in dirs if d and (Path(d) / entry).exists()]
    return found[0] if found else None


def test_vscode_jsonrpc_client_is_served(tmp_path: Path) -> None:
    node, modules = shutil.which("node"), _node_path()
    if node is None or modules is None:
        pytest.skip("needs node and vscode-jsonrpc (npm ci at the repository's root, or "
                    "NODE_PATH naming a node_modules that has it)")
    ws = make_workspace(tmp_path / "ws")
    env = server_env(NODE_PATH=modules)
    done = subprocess.run([node, str(SCRIPT), json.dumps(SERVER_CMD), str(ws)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip(), f"no report from the client; stderr: {done.stderr[-2000:]}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in seen, f"{seen}; stderr: {done.stderr[-2000:]}"
    # the server's own requests were answered, and those answers reached pygls: a lost
    # answer to workspace/configuration is logged as failed after its timeout
    assert seen["configuration"] >= 1
    assert "workspace/configuration for" not in done.stderr
    assert seen["checkpoint"] is True
    assert seen["cancelled"] in ("answered", "error -32800"), seen
    assert seen["many"] == 10
    assert seen["exitCode"] == 1, seen  # exit without shutdown
    assert "Traceback" not in done.stderr
