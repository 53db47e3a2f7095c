"""The baseline: a shadow git repository whose work tree is the workspace.

This is what Cline and Roo Code do for their checkpoints: a git dir kept outside
the workspace (``git --git-dir=X --work-tree=WS``), ``git add -A`` and
``git commit --allow-empty`` to checkpoint, ``git clean -fd`` and
``git reset --hard`` to restore. The workspace's own ``.gitignore`` applies, as
it does for them; Turnback's store folder is excluded through the shadow
repository's ``info/exclude`` so neither tool sees the other's data.

Git is left with its defaults, including ``gc --auto`` after a commit, which
detaches into the background when loose objects pile up (the first checkpoint
of a big workspace triggers it). Nothing forces a ``git gc``: the tools do not.
:meth:`ShadowGit.wait_for_gc` lets a benchmark wait for a background gc so it
does not steal CPU from the next timed step; the wait is reported, not hidden.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

STORE_DIR = ".turnback"


@dataclass
class Timed:
    seconds: float
    value: str = ""


def _clean_env() -> dict[str, str]:
    """The environment minus variables that would point git elsewhere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["HOME"] = env.get("HOME", "/root")
    env["LC_ALL"] = "C"
    return env


class ShadowGit:
    """A shadow git repository at ``git_dir`` for the work tree ``workspace``."""

    def __init__(self, git_dir: Path, workspace: Path) -> None:
        self.git_dir = git_dir.resolve()
        self.workspace = workspace.resolve()
        if self.git_dir.is_relative_to(self.workspace):
            raise ValueError(
                f"the shadow git dir {self.git_dir} is inside the workspace {self.workspace}; "
                "put it outside, as the tools do"
            )
        self._env = _clean_env()

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.workspace}", *args]
        res = subprocess.run(
            cmd, cwd=self.workspace, env=self._env, capture_output=True, text=True, check=False
        )
        if check and res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()}")
        return res

    def init(self) -> None:
        """Create the repository, configured as the tools configure theirs."""
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "init", "-q"],
            env=self._env, check=True, capture_output=True,
        )  # fmt: skip
        for key, value in (
            ("core.bare", "false"),
            ("core.worktree", str(self.workspace)),
            ("user.name", "Shadow Checkpoints"),
            ("user.email", "checkpoints@example.invalid"),
            ("commit.gpgSign", "false"),
        ):
            self.git("config", key, value)
        exclude = self.git_dir / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text(f"/{STORE_DIR}/\n")

    def checkpoint(self, message: str) -> Timed:
        """``git add -A && git commit --allow-empty``; returns the time and the commit id."""
        t0 = time.perf_counter()
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)
        elapsed = time.perf_counter() - t0
        return Timed(elapsed, self.git("rev-parse", "HEAD").stdout.strip())

    def restore(self, commit: str) -> Timed:
        """``git clean -fd && git reset --hard COMMIT``."""
        t0 = time.perf_counter()
        self.git("clean", "-fdq")
        self.git("reset", "-q", "--hard", commit)
        return Timed(time.perf_counter() - t0, commit)

    def gc_running(self) -> bool:
        """Whether a (detached) ``git gc --auto`` holds the repository's gc lock."""
        pid_file = self.git_dir / "gc.pid"
        try:
            pid = int(pid_file.read_text().split()[0])
        except (FileNotFoundError, ValueError, IndexError):
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def wait_for_gc(self, timeout: float = 1800.0) -> float:
        """Wait while a background gc runs; returns the seconds waited."""
        t0 = time.perf_counter()
        # gc --auto daemonizes right after the commit returns: give it a moment to take its lock.
        time.sleep(0.2)
        while self.gc_running() and time.perf_counter() - t0 < timeout:
            time.sleep(0.1)
        return time.perf_counter() - t0

    def size(self) -> dict[str, int]:
        """Bytes of the git dir: apparent (sum of file sizes) and on disk (allocated blocks)."""
        return dir_size(self.git_dir)

    def objects(self) -> dict[str, str]:
        out = self.git("count-objects", "-v").stdout
        return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def dir_size(root: Path) -> dict[str, int]:
    """Apparent and allocated bytes under ``root``, like ``du -sb`` and ``du -sB1``."""
    apparent = 0
    disk = 0
    files = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except FileNotFoundError:
                continue
            disk += st.st_blocks * 512
            if name in filenames:
                apparent += st.st_size
                files += 1
    return {"apparent": apparent, "disk": disk, "files": files}
