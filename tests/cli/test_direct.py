"""``checkpoint``, ``rewind`` and ``undo`` without click (``cli/direct.py``): the same output,
errors and exit codes as click's commands, and everything else left to click.

A line ``handoff.parse`` reads goes the direct way (``--json`` before the verb); the
same request with ``--json`` after the verb is click's: each case runs both ways.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from turnback.cli import direct
from turnback.cli.handoff import parse
from wsutil import cli_env, run_cli


def both(ws: Path, verb: str, *args: str, check: bool | None = True,
         env: dict[str, str] | None = None) -> tuple[object, object]:
    """(direct, click): each run's exit code, stderr and JSON output."""
    def result(*argv: str) -> tuple[int, bytes, object]:
        p = run_cli(ws, *argv, check=check, env=env)
        return p.returncode, p.stderr, json.loads(p.stdout) if p.stdout else None

    return result("--json", verb, *args), result(verb, *args, "--json")


def test_the_lines_it_takes_and_leaves() -> None:
    for argv in (["checkpoint", "-m", "x"], ["--json", "rewind", "abc", "a.txt"],
                 ["-C", "ws", "undo", "--dry-run"]):
        req = parse(argv)
        assert req is not None and req.verb in direct.VERBS
    for argv in (["status"], ["checkpoints"], ["checkpoint", "-m", "x", "--json"],
                 ["rewind", "--help"]):
        req = parse(argv)
        assert req is None or req.verb not in direct.VERBS
        assert direct.run_argv(argv) is None


def test_checkpoint_rewind_undo_print_as_click_does(ws: Path) -> None:
    (ws / "a.txt").write_text("one\n")
    (d_cp, _), (c_cp, _) = [(r[2], r[0]) for r in both(ws, "checkpoint", "-m", "first")]
    assert isinstance(d_cp, dict) and isinstance(c_cp, dict)
    assert d_cp.keys() == c_cp.keys() and d_cp["files"] == c_cp["files"] == 1
    assert (d_cp["label"], c_cp["label"]) == ("first", "first")
    (ws / "a.txt").write_text("two\n")
    direct_rw = run_cli(ws, "--json", "rewind", d_cp["id"])
    assert (ws / "a.txt").read_text() == "one\n"
    (ws / "a.txt").write_text("two\n")
    click_rw = run_cli(ws, "rewind", d_cp["id"], "--json")
    d, c = json.loads(direct_rw.stdout), json.loads(click_rw.stdout)
    assert d.keys() == c.keys() and d["overwritten"] == c["overwritten"] == ["a.txt"]
    undone = run_cli(ws, "undo")
    assert undone.stdout.decode().startswith("overwrite a.txt\nundo: 1 file(s); safety")
    assert (ws / "a.txt").read_text() == "two\n"


@pytest.mark.parametrize("args", [("rewind", "nope"), ("undo",), ("rewind", "nope", "../x")])
def test_errors_and_exit_codes_as_click_gives_them(ws: Path, args: tuple[str, ...]) -> None:
    run_cli(ws, "init")
    d, c = both(ws, *args, check=None)
    assert d == c
    code, err, out = d  # type: ignore[misc]
    assert code in (1, 2) and err.startswith(b"turnback: ") and out is None


def test_a_checkpoint_made_where_there_is_no_store_yet(ws: Path) -> None:
    (ws / "f").write_text("x")
    out = json.loads(run_cli(ws, "--json", "checkpoint").stdout)
    assert out["files"] == 1 and (ws / ".turnback" / "config.json").exists()


def test_session_from_the_environment(ws: Path) -> None:
    (ws / "f").write_text("x")
    sid = json.loads(run_cli(ws, "--json", "session", "start", "--title", "t").stdout)["id"]
    cp = json.loads(run_cli(ws, "--json", "checkpoint",
                            env=cli_env(TURNBACK_SESSION=sid)).stdout)
    assert cp["sessionId"] == sid


@pytest.mark.parametrize("encoding", ["ascii", "utf-8"])
def test_a_non_ascii_label_on_an_ascii_stream_prints_as_click_does(
        ws: Path, encoding: str) -> None:
    """click's ``echo`` rewraps an ASCII stdout as UTF-8 (unencodable characters replaced);
    the direct path printed the same text through the ASCII stream and failed after the
    checkpoint was made (exit 1, a traceback)."""
    (ws / "f").write_text("x")
    env = cli_env(PYTHONIOENCODING=encoding)
    direct_cp = run_cli(ws, "checkpoint", "-m", "é \U0001f600", env=env, check=None)
    assert direct_cp.returncode == 0, direct_cp.stderr
    (ws / "f").write_text("y")
    click_cp = subprocess.run(
        [sys.executable, "-c", "import sys; from turnback.cli.app import cli; "
         "cli(['checkpoint', '-m', 'é \U0001f600'], prog_name='turnback')"],
        cwd=ws, capture_output=True, env=env, timeout=120)
    assert click_cp.returncode == 0, click_cp.stderr
    assert direct_cp.stdout.split(b"  ")[1:] == click_cp.stdout.split(b"  ")[1:]
    assert direct_cp.stdout.endswith("é \U0001f600\n".encode())


# the CLI's own entry point, saying on stderr which modules it imported before it left
_MODULES_AT_EXIT = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write(' '.join(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['turnback', *sys.argv[1:]]\n"
    "from turnback.cli.main import main\n"
    "main()\n")


# the same, saying the classes ``turnback.models`` holds by then
_MODEL_CLASSES_AT_EXIT = _MODULES_AT_EXIT.replace(
    "sorted(sys.modules)",
    "sorted(n for n, v in vars(sys.modules['turnback.models']).items() if isinstance(v, type))")


def _modules_of_two_checkpoints(ws: Path, said: str = _MODULES_AT_EXIT) -> list[list[bytes]]:
    """The modules each of two CLI checkpoints of ``ws`` imported (the store made, then a
    no-op), each asserted to succeed (or what ``said`` has them say on stderr instead)."""
    (ws / "f").write_text("x")
    out = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", said, "checkpoint", "-m", "x"],
                              cwd=ws, capture_output=True, env=cli_env(), timeout=120)
        assert proc.returncode == 0, proc.stderr
        out.append(proc.stderr.split())
    return out


def test_a_checkpoint_with_few_object_logs_imports_no_gc(ws: Path) -> None:
    """After its answer the CLI asks whether the object logs are many enough to merge;
    few (every call but one in ``merging.MERGE_AT``) import neither gc's module nor its
    models, which the asking imported in every call's serial tail before (cold25)."""
    for modules in _modules_of_two_checkpoints(ws):
        assert b"turnback.store.logmerge" in modules  # it did ask
        assert b"turnback.store.gc" not in modules


def test_a_checkpoint_with_no_server_imports_no_socket_module(ws: Path) -> None:
    """The hand-off looks for the server's socket file before it imports ``_socket``:
    with no file there, the CLI never imports it (before, ~0.5 ms before the early
    fork, in every call; cold25)."""
    for modules in _modules_of_two_checkpoints(ws):
        assert b"turnback.fs.sockets" in modules  # it did look
        assert b"_socket" not in modules and b"socket" not in modules


def test_a_no_op_checkpoint_imports_no_rewind_plan_and_no_notices(ws: Path) -> None:
    """A checkpoint makes no rewind plan and, with nothing set aside, has no notice to
    tell: it imports neither ``rewind.plan`` (a dataclass built), ``fs.winnames`` (its
    patterns compiled) nor ``store.notices`` (a frozen dataclass), which the facade's
    imports and the notices' asking imported in every fresh checkpoint before (~8 M
    instructions of the parent's, on the no-op's critical path; cold27)."""
    for modules in _modules_of_two_checkpoints(ws):
        assert b"turnback.store.rewind_ops" in modules  # the facade was imported
        for lazy in (b"turnback.rewind.plan", b"turnback.fs.winnames",
                     b"turnback.store.notices"):
            assert lazy not in modules, lazy


# the same, saying each pattern ``re`` compiled (ascii, spaces as ``_``: one word each)
_PATTERNS_AT_EXIT = _MODULES_AT_EXIT.replace(
    "sorted(sys.modules)",
    "sorted(ascii(k[1]).replace(' ', '_') for k in [*__import__('re')._cache,"
    " *getattr(__import__('re'), '_cache2', ())])")


def test_a_checkpoint_compiles_no_pattern_of_names_it_does_not_meet(ws: Path) -> None:
    """The patterns of a rewind's temporary names, of a write's leftover names, of a
    patch's paths and of lone surrogates are compiled when such a name or patch is met,
    and HFS+'s ignored code points are dropped by ``str.translate``, not compiled by every
    fresh checkpoint's imports (~7.4 M instructions of the parent's, on the no-op's
    critical path; cold33)."""
    for patterns in _modules_of_two_checkpoints(ws, _PATTERNS_AT_EXIT):
        assert b"'[0-9a-f]{64}'" in patterns  # what the store's names need was compiled
        for lazy in (b"turnback-tmp", b"Move_to:", b"u200c", b"ud800",
                     b"([0-9a-f]{4})([0-9a-f]{4})"):
            assert not [p for p in patterns if lazy in p], lazy


def test_a_checkpoint_builds_none_of_the_results_it_does_not_make(ws: Path) -> None:
    """A checkpoint makes no ``Change``, ``FileContent``, ``RewindResult``, ``GcResult`` nor
    session result: their classes live in ``turnback.results``, which it never imports
    (``models`` built all seven in every fresh checkpoint before, ~9 M instructions of the
    parent's on the no-op's critical path; cold28)."""
    assert _MODEL_CLASSES_AT_EXIT != _MODULES_AT_EXIT
    for classes in _modules_of_two_checkpoints(ws, _MODEL_CLASSES_AT_EXIT):
        assert b"Checkpoint" in classes  # it did build the one it makes
        for unmade in (b"Change", b"FileContent", b"RewindResult", b"GcResult",
                       b"SessionSummary", b"SessionLog", b"SessionPage"):
            assert unmade not in classes, unmade
    for modules in _modules_of_two_checkpoints(ws):
        assert b"turnback.models" in modules and b"turnback.results" not in modules



def test_a_no_op_checkpoint_imports_no_zstandard(ws: Path) -> None:
    """A no-op checkpoint reads and writes no object: ``zstandard`` (and the ``typing`` it
    imports) is imported by the object store's functions that call it, not at its import
    (~2.3 M instructions of the parent's, on the no-op's critical path; cold37)."""
    first, no_op = _modules_of_two_checkpoints(ws)
    assert b"zstandard" in first  # the first checkpoint stored its files
    assert b"turnback.objects.objectstore" in no_op and b"turnback.objects.packs" in no_op
    assert b"zstandard" not in no_op
