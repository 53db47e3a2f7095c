"""Turnback as the benchmark drives it: the CLI, the Python API in a fresh process, the server.

Every figure is a wall time the caller waits for: a CLI call is timed from
spawn to exit (interpreter start and imports included, as an agent's shell
pays them); a server request from send to answer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsp_client import LspClient

STORE_DIR = ".turnback"

_API_SNIPPET = """
import sys, time, json
t0 = time.perf_counter()
from turnback import Store
t1 = time.perf_counter()
store = Store.open(sys.argv[1])
cp = store.checkpoint(label=sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "call": t2 - t1, "id": cp.id}))
"""


_SOURCE: Path | None = None
# whether the CLI may leave a background server running (cli/background.py); off unless a
# benchmark measures exactly that (bench/probes/cli/cli_rounds.py --background)
BACKGROUND = False


def use_ref(ref: str, into: Path, python: str = sys.executable) -> str:
    """Measure the package as committed at ``ref`` (a clean copy), not the working tree.

    Returns the full commit id. Every process the benchmark starts then imports
    ``turnback`` from that copy (``PYTHONPATH`` comes before the editable install).
    The copy is byte-compiled by ``python`` (the one that runs Turnback), as an
    installed package is: with ``PYTHONDONTWRITEBYTECODE`` set, every CLI run would
    otherwise compile the package again (~60 ms) and the figure would not be what a
    user sees.
    """
    global _SOURCE
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", f"{ref}^{{commit}}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    dest = into / f"src-{commit[:12]}"
    if not (dest / "server" / "turnback").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", commit, "server"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    copy_compiled(repo / "server", dest / "server")
    subprocess.run([python, "-m", "compileall", "-q", str(dest / "server")], check=True,
                   stdout=subprocess.DEVNULL)
    _SOURCE = dest / "server"
    sys.path.insert(0, str(_SOURCE))  # and this process too (run_sessions builds with the API)
    return commit


_COMPILED = Path("turnback") / "snapshot"


def copy_compiled(work: Path, copy: Path) -> list[Path]:
    """The work tree's built folder check (``_folderparts*.so``, git-ignored, so never in
    ``git archive``) copied beside the same C source in ``copy``: without it an A/B of a ref
    against the work tree compares Python's folder check with C's (~50 ms of CPU a fresh
    no-op checkpoint on SPEC's workspace). Nothing is copied where the ref's source differs
    or is missing. Returns what was copied."""
    source, there = work / _COMPILED / "_folderparts.c", copy / _COMPILED / "_folderparts.c"
    try:
        if source.read_bytes() != there.read_bytes():
            return []
    except FileNotFoundError:
        return []
    copied = []
    for built in sorted((work / _COMPILED).glob("_folderparts*.so")):
        target = copy / _COMPILED / built.name
        if not target.exists():
            shutil.copy2(built, target)
            copied.append(target)
    return copied


def env() -> dict[str, str]:
    """The environment of every Turnback process the benchmark starts."""
    out = dict(os.environ)
    out.pop("TURNBACK_STORE", None)  # the store is <workspace>/.turnback
    if not BACKGROUND:
        out["TURNBACK_BACKGROUND"] = "0"  # "no server anywhere" means none left behind either
    if _SOURCE is not None:
        out["PYTHONPATH"] = str(_SOURCE)
    return out


class Turnback:
    """Turnback for one workspace, through its CLI, its Python API and its server."""

    def __init__(
        self, workspace: Path, python: str = sys.executable, cli: str | None = None
    ) -> None:
        self.workspace = workspace.resolve()
        self.python = python
        self.cli = cli or str(Path(python).with_name("turnback"))
        self.server_cmd = [python, "-m", "turnback.server"]
        self.server: LspClient | None = None

    @property
    def store(self) -> Path:
        return self.workspace / STORE_DIR

    def reset_store(self) -> None:
        if self.store.exists():
            shutil.rmtree(self.store)

    # -- CLI --------------------------------------------------------------------------------
    def run_cli(self, *args: str, handoff: bool = True) -> tuple[float, Any]:
        """Run ``turnback ARGS --json`` in the workspace; returns (seconds, parsed output).

        With a server running, the process hands the request to it (``cli/handoff.py``)
        unless ``handoff`` is False."""
        cmd = [self.cli, "--json", "-C", str(self.workspace), *args]
        e = env()
        if not handoff:
            e["TURNBACK_HANDOFF"] = "0"
        t0 = time.perf_counter()
        res = subprocess.run(cmd, cwd=self.workspace, env=e, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()}")
        try:
            out = json.loads(res.stdout) if res.stdout.strip() else None
        except json.JSONDecodeError:
            out = res.stdout
        return elapsed, out

    def checkpoint_cli(self, label: str, handoff: bool = True) -> tuple[float, str]:
        seconds, out = self.run_cli("checkpoint", "-m", label, handoff=handoff)
        return seconds, checkpoint_id(out)

    def checkpoint_alone(self, label: str) -> tuple[float, str]:
        """A fresh CLI process that does the work itself even with a server running."""
        return self.checkpoint_cli(label, handoff=False)

    def rewind_cli(self, checkpoint: str) -> tuple[float, Any]:
        return self.run_cli("rewind", checkpoint)

    # -- Python API in a fresh process ------------------------------------------------------
    def checkpoint_api(self, label: str) -> tuple[float, dict[str, Any]]:
        """``Store.open(ws).checkpoint()`` in a new interpreter: (process seconds, inner times)."""
        t0 = time.perf_counter()
        res = subprocess.run(
            [self.python, "-c", _API_SNIPPET, str(self.workspace), label],
            cwd=self.workspace, env=env(), capture_output=True, text=True,
        )  # fmt: skip
        elapsed = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"Store.open(...).checkpoint() failed: {res.stderr.strip()}")
        inner: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
        return elapsed, inner

    # -- server -----------------------------------------------------------------------------
    def start_server(self, settle: float = 1.0) -> dict[str, float]:
        """Start the server, initialize it, wait for a first answer; then let the watcher settle."""
        client = LspClient(self.server_cmd, cwd=self.workspace, env=env())
        client.initialize(self.workspace)
        t_init = time.perf_counter() - client.started
        client.request("turnback/status", {})
        t_ready = time.perf_counter() - client.started
        self.server = client
        time.sleep(settle)
        return {"initialize": t_init, "firstAnswer": t_ready}

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def _client(self) -> LspClient:
        if self.server is None:
            raise RuntimeError("the server is not running: call start_server() first")
        return self.server

    def checkpoint_server(self, label: str) -> tuple[float, str]:
        seconds, out = self._client().timed("turnback/createCheckpoint", {"label": label})
        return seconds, checkpoint_id(out)

    def rewind_server(self, checkpoint: str) -> tuple[float, Any]:
        return self._client().timed("turnback/rewind", {"checkpoint": checkpoint})

    def server_pid(self) -> int:
        return self._client().proc.pid


def checkpoint_id(out: Any) -> str:
    """The checkpoint id in a CLI ``--json`` output or a ``createCheckpoint`` result."""
    if isinstance(out, dict):
        if isinstance(out.get("checkpoint"), dict):
            return str(out["checkpoint"]["id"])
        if "id" in out:
            return str(out["id"])
    raise RuntimeError(f"no checkpoint id in {str(out)[:200]!r}")
