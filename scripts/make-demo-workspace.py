#!/usr/bin/env python3
"""Build the demo workspace with Turnback's own CLI, the way an agent would.

A small Python project, and a recorded agent session over it: prompts, thinking,
tool calls and results, token usage, several checkpoints with file changes
between them (an edit, a new file, a deleted file, a binary image), and a
branch made by forking back to an earlier checkpoint. A second, shorter
session from another agent sits beside it.

Only the CLI is used (no Python API), so the demo also exercises what a
script outside the editor can do. Prints a JSON summary (paths, session ids,
checkpoint ids by label) for the end-to-end suite with --json.

Usage: make-demo-workspace.py DIR [--json] [--expect-dir DIR] [--turnback PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


class Demo:
    """Runs the CLI inside one workspace and remembers what it made."""

    def __init__(self, workspace: Path, turnback: str, expect_dir: Path | None = None) -> None:
        self.workspace = workspace
        self.turnback = turnback
        self.expect_dir = expect_dir
        self.checkpoints: dict[str, str] = {}
        self.checkpoint_events: dict[str, str] = {}
        self.sessions: dict[str, str] = {}

    def cli(self, *args: str) -> Any:
        """Runs `turnback --json ARGS` in the workspace and returns its parsed output."""
        proc = subprocess.run(
            [self.turnback, "--json", *args],
            cwd=self.workspace,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            sys.exit(
                f"make-demo-workspace: turnback {' '.join(args)} failed: {proc.stderr.strip()}"
            )
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    def write(self, rel: str, content: str | bytes) -> None:
        path = self.workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        path.write_bytes(data)

    def start(self, key: str, title: str, agent: str, model: str) -> str:
        header = self.cli("session", "start", "--title", title, "--agent", agent, "--model", model)
        self.sessions[key] = str(header["id"])
        return self.sessions[key]

    def record(self, session: str, kind: str, data: dict[str, Any]) -> str:
        event = self.cli("record", kind, "--session", session, "--data", json.dumps(data))
        return str(event["id"])

    def tool(
        self,
        session: str,
        use_id: str,
        name: str,
        tool_input: dict[str, Any],
        output: str,
        is_error: bool = False,
    ) -> None:
        self.record(session, "tool_call", {"name": name, "input": tool_input, "toolUseId": use_id})
        self.record(
            session, "tool_result", {"toolUseId": use_id, "isError": is_error, "output": output}
        )

    def checkpoint(self, session: str, label: str) -> str:
        cp = self.cli("checkpoint", "-m", label, "--session", session)
        self.checkpoints[label] = str(cp["id"])
        self.checkpoint_events[label] = str(cp["eventId"])
        if self.expect_dir is not None:
            # An independent copy of what the checkpoint must hold, for tests
            # that check a rewind byte for byte without trusting the store.
            shutil.copytree(
                self.workspace,
                self.expect_dir / str(cp["id"]),
                ignore=shutil.ignore_patterns(".turnback"),
            )
        return self.checkpoints[label]


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of one colour with a diagonal stripe (so it is not all one byte)."""
    rows = b""
    for y in range(height):
        row = bytearray(b"\x00")  # filter type: none
        for x in range(width):
            row += bytes((255, 255, 255) if abs(x - y) < 2 else rgb)
        rows += bytes(row)

    def chunk(tag: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + tag
            + body
            + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


GREET_V1 = '''"""Greetings for the command line."""


def greet(name: str) -> str:
    return f"Hello, {name}!"
'''

GREET_V2 = (
    GREET_V1
    + """

def farewell(name: str) -> str:
    return f"Goodbye, {name}. See you soon!"
"""
)

GREET_BRANCH = (
    GREET_V1
    + """

def farewell(name: str) -> str:
    return f"Farewell, {name}!"
"""
)

CLI_V1 = """import sys

from greeter.greet import greet


def main() -> None:
    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))
"""

CLI_V2 = """import sys

from greeter.greet import farewell, greet


def main() -> None:
    name = sys.argv[2] if len(sys.argv) > 2 else "world"
    say = farewell if sys.argv[1:2] == ["bye"] else greet
    print(say(name))
"""

TEST_FAREWELL_BROKEN = """from greeter.greet import farewell


def test_farewell() -> None:
    assert farewell("Ada") == "Goodbye, Ada!"
"""

TEST_FAREWELL = """from greeter.greet import farewell


def test_farewell() -> None:
    assert farewell("Ada") == "Goodbye, Ada. See you soon!"
"""


def build(demo: Demo) -> None:
    d = demo
    d.write("README.md", "# greeter\n\nSays hello from the command line.\n")
    d.write("greeter/__init__.py", "")
    d.write("greeter/greet.py", GREET_V1)
    d.write("greeter/cli.py", CLI_V1)
    d.write(
        "tests/test_greet.py",
        "from greeter.greet import greet\n\n\ndef test_greet() -> None:\n"
        '    assert greet("Ada") == "Hello, Ada!"\n',
    )
    d.write("assets/logo.png", png(24, 24, (40, 90, 160)))
    d.write("NOTES.txt", "scratch notes: remember to add a farewell\n")
    d.write(".gitignore", "__pycache__/\n*.pyc\n")
    d.cli("init")

    s = d.start("main", "Add a farewell command", "claude-code", "claude-sonnet-4-5")
    d.checkpoint(s, "Before the agent")
    d.record(
        s,
        "prompt",
        {
            "text": "Add a farewell(name) next to greet() with a test, "
            "and wire it into the CLI as `bye`."
        },
    )
    d.record(s, "thinking", {"text": "Read greet.py first, then add the function and a test."})
    d.tool(s, "toolu_01", "Read", {"file_path": "greeter/greet.py"}, GREET_V1)
    d.write("greeter/greet.py", GREET_V2)
    d.tool(
        s,
        "toolu_02",
        "Edit",
        {
            "file_path": "greeter/greet.py",
            "old_string": "",
            "new_string": "def farewell(name: str) -> str: ...",
        },
        "The file greeter/greet.py has been updated.",
    )
    d.record(
        s,
        "usage",
        {
            "input": 1850,
            "output": 240,
            "cacheRead": 12000,
            "cacheCreation": 900,
            "messageId": "msg_01",
        },
    )
    d.checkpoint(s, "farewell() added")

    d.write("tests/test_farewell.py", TEST_FAREWELL_BROKEN)
    d.tool(s, "toolu_03", "Write", {"file_path": "tests/test_farewell.py"}, "File created.")
    d.tool(
        s,
        "toolu_04",
        "Bash",
        {"command": "pytest -q"},
        "F.\nFAILED tests/test_farewell.py::test_farewell - AssertionError",
        is_error=True,
    )
    d.write("tests/test_farewell.py", TEST_FAREWELL)
    d.write("greeter/cli.py", CLI_V2)
    d.tool(
        s,
        "toolu_05",
        "Edit",
        {"file_path": "tests/test_farewell.py"},
        "The file tests/test_farewell.py has been updated.",
    )
    d.tool(s, "toolu_06", "Bash", {"command": "pytest -q"}, "..\n2 passed in 0.01s")
    d.record(
        s,
        "usage",
        {
            "input": 2400,
            "output": 310,
            "cacheRead": 14000,
            "cacheCreation": 0,
            "messageId": "msg_02",
        },
    )
    d.record(
        s, "response", {"text": "Added farewell() with a test and a `bye` CLI verb; tests pass."}
    )
    d.checkpoint(s, "Tests pass")

    d.record(s, "prompt", {"text": "Make the logo brighter and drop the scratch notes."})
    d.write("assets/logo.png", png(24, 24, (250, 200, 40)))
    (d.workspace / "NOTES.txt").unlink()
    d.tool(
        s,
        "toolu_07",
        "Bash",
        {"command": "python tools/brighten.py assets/logo.png && rm NOTES.txt"},
        "",
    )
    d.record(s, "response", {"text": "Brightened assets/logo.png and removed NOTES.txt."})
    d.checkpoint(s, "Brighter logo")

    # A branch: back to the checkpoint after farewell() and try other wording.
    # Fork moves the session head; the files are rewound separately, as the
    # rewind's safety checkpoint keeps the state being left.
    d.cli("fork", "--session", s, d.checkpoint_events["farewell() added"])
    d.cli("rewind", d.checkpoints["farewell() added"])
    d.record(s, "prompt", {"text": "Actually, make the farewell shorter."})
    d.write("greeter/greet.py", GREET_BRANCH)
    d.tool(
        s,
        "toolu_08",
        "Edit",
        {"file_path": "greeter/greet.py"},
        "The file greeter/greet.py has been updated.",
    )
    d.record(s, "response", {"text": "farewell() now says 'Farewell, NAME!'."})
    d.checkpoint(s, "Shorter farewell (branch)")

    r = d.start("readme", "Tidy the README", "codex", "gpt-5-codex")
    d.record(r, "prompt", {"text": "Add a usage section to the README."})
    d.write(
        "README.md",
        "# greeter\n\nSays hello from the command line.\n\n"
        "## Usage\n\n    python -m greeter.cli Ada\n",
    )
    d.tool(r, "call_1", "apply_patch", {"path": "README.md"}, "Done.")
    d.record(r, "response", {"text": "README has a usage section."})
    d.checkpoint(r, "README usage")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="folder to create (must not exist or be empty)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument(
        "--expect-dir",
        type=Path,
        help="also copy the files at each checkpoint to EXPECT_DIR/<checkpoint id>/",
    )
    parser.add_argument(
        "--turnback",
        default=os.environ.get("TURNBACK_CLI", str(REPO_ROOT / ".venv" / "bin" / "turnback")),
        help="the turnback CLI (default: .venv/bin/turnback)",
    )
    args = parser.parse_args()
    workspace: Path = args.dir.resolve()
    if workspace.exists() and any(workspace.iterdir()):
        sys.exit(f"make-demo-workspace: {workspace} is not empty; give a new folder")
    workspace.mkdir(parents=True, exist_ok=True)
    demo = Demo(workspace, args.turnback, args.expect_dir)
    build(demo)
    summary = {
        "workspace": str(workspace),
        "sessions": demo.sessions,
        "checkpoints": demo.checkpoints,
        "checkpointEvents": demo.checkpoint_events,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"demo workspace ready: {workspace}")


if __name__ == "__main__":
    main()
