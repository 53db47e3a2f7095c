"""What the server costs a window where no agent ever worked (the extension starts it by itself).

Since the extension activates in every window (``onStartupFinished``) and starts
the server in a trusted folder with ``turnback.followAgents`` on, a window where
no agent ever worked pays for one server: this measures it. A folder with no
``.turnback`` and a private, empty ``HOME`` (no agent's sessions anywhere) is
opened with the settings the extension sends for a trusted folder; the server is
timed from spawn to its ``initialize`` answer and to ``following`` (its agents'
folders watched, the look for existing sessions done), then its RSS is read once
idle and its peak (``VmHWM``). Then a workspace file is edited, as a user does,
and the server shut down: the folder must still have no ``.turnback`` (nothing
to record: no agent here; the run fails otherwise).

    python bench/probes/server/first_open.py                         # a small folder
    python bench/probes/server/first_open.py --workspace bench/work/ws   # SPEC's 50,000 files

Linux (``/proc``). Prints one JSON object; ``--runs`` repeats and keeps every run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(REPO / "bench")]
from lsp_client import LspClient  # noqa: E402

SETTINGS = {"turnback": {"storePath": None, "autoCheckpoint": True, "followAgents": True,
                         "watch": True, "ignores": [], "sizeCapBytes": None,
                         "retention": {"keepLast": None, "keepDays": None, "quotaBytes": None},
                         "readOnly": False}}


def kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def until(check: Any, what: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.01)


def one(ws: Path, home: Path) -> dict[str, Any]:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO / "server"),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share")}
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "TURNBACK_STORE", "GEMINI_CLI_HOME_DIR",
                "QWEN_HOME_DIR", "COPILOT_HOME", "CONTINUE_GLOBAL_DIR"):
        env.pop(var, None)
    client = LspClient([sys.executable, "-m", "turnback.server"], cwd=ws, env=env)
    try:
        uri = ws.resolve().as_uri()
        client.request("initialize", {"processId": os.getpid(), "rootUri": uri,
                                      "capabilities": {}, "initializationOptions": SETTINGS,
                                      "workspaceFolders": [{"uri": uri, "name": ws.name}]})
        t_init = time.perf_counter() - client.started
        client.notify("initialized", {})

        def following() -> bool:
            st = client.request("turnback/status", {})
            return bool(st["following"]["state"] == "following" and st["watching"])

        until(following, "following and watching")
        t_ready = time.perf_counter() - client.started
        pid = client.proc.pid
        rss_ready = kib(pid, "VmRSS")
        (ws / "first_open_edit.txt").write_text("a user's edit\n")
        status = client.request("turnback/status", {})
        out = {"initializeS": round(t_init, 3), "readyS": round(t_ready, 3),
               "rssReadyKiB": rss_ready, "peakKiB": kib(pid, "VmHWM"),
               "storeExists": status["exists"], "following": status["following"]["summary"],
               "load": [round(x, 2) for x in os.getloadavg()]}
    finally:
        client.close()  # the server has handled the edit's events, or dropped them, by now
        (ws / "first_open_edit.txt").unlink(missing_ok=True)
    out["storeDirMade"] = (ws / ".turnback").exists()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workspace", type=Path,
                    help="a folder with no .turnback (default: a small one made here)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="turnback-first-open-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        ws = a.workspace
        if ws is None:
            ws = Path(tmp) / "ws"
            (ws / "src").mkdir(parents=True)
            for i in range(200):
                (ws / "src" / f"m{i}.py").write_text(f"x = {i}\n")
        ws = ws.resolve()
        if (ws / ".turnback").exists():
            ap.error(f"{ws} has a .turnback store: give a folder without one")
        runs = [one(ws, home) for _ in range(a.runs)]
        made = any(r["storeDirMade"] for r in runs)
        if made:
            shutil.rmtree(ws / ".turnback", ignore_errors=True)
    print(json.dumps({"workspace": str(a.workspace or "small (200 files)"), "runs": runs},
                     indent=1))
    return 1 if made else 0


if __name__ == "__main__":
    sys.exit(main())
