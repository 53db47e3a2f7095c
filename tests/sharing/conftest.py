"""Real git remotes on this machine for the sharing tests: a bare repository reached over
``file://``, and the same served by ``git daemon`` on 127.0.0.1 (started here, on a free
port, killed after). "Machines" are clones of the code with their own HOME."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

if shutil.which("git") is None:  # pragma: no cover - git is part of the set-up
    pytest.skip("git is not installed", allow_module_level=True)


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True
                          ).stdout.decode()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_accepting(port: int, proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"git daemon exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # polling for a condition, with a deadline


@dataclass
class Remote:
    path: Path  # the bare repository
    url: str  # how machines reach it


@pytest.fixture(params=["file", "daemon"])
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Remote]:
    """The team's remote holding the code (one commit of README.md)."""
    base = tmp_path / "served"
    bare = base / "team.git"
    git("init", "--quiet", "--bare", str(bare))
    seed = tmp_path / "seed"
    git("init", "--quiet", str(seed))
    (seed / "README.md").write_text("# the team's project\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "README.md", cwd=seed)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start", cwd=seed)
    git("push", "-q", str(bare), "HEAD:refs/heads/main", cwd=seed)
    if request.param == "file":
        yield Remote(bare, bare.as_uri())
        return
    port = _free_port()
    proc = subprocess.Popen(
        ["git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
         "--listen=127.0.0.1", f"--port={port}", f"--base-path={base}", "--informative-errors",
         str(base)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
        start_new_session=True)  # `git daemon` runs git-daemon as a child: kill the group
    try:
        _wait_accepting(port, proc)
        yield Remote(bare, f"git://127.0.0.1:{port}/team.git")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.stderr:
            proc.stderr.close()


@dataclass
class Machine:
    home: Path
    ws: Path

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")}
        env.update(TURNBACK_BACKGROUND="0", HOME=str(self.home), PYTHONPATH=str(REPO / "server"),
                   XDG_STATE_HOME=str(self.home / ".local" / "state"),
                   XDG_CONFIG_HOME=str(self.home / ".config"), GIT_CONFIG_GLOBAL=os.devnull)
        return env

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run([sys.executable, "-m", "turnback.cli.main", *args], cwd=self.ws,
                              env=self.env(), capture_output=True, timeout=180)
        if check and proc.returncode != 0:
            raise AssertionError(f"turnback {' '.join(args)} exited {proc.returncode}: "
                                 f"{proc.stderr.decode(errors='replace')}")
        return proc


@pytest.fixture
def machines(tmp_path: Path, remote: Remote) -> list[Machine]:
    """Four machines, each a clone of the team's code with its own HOME."""
    out = []
    for n in range(4):
        home = tmp_path / f"home{n}"
        home.mkdir()
        ws = home / "project"
        git("clone", "-q", remote.url, str(ws))
        out.append(Machine(home, ws))
    return out
