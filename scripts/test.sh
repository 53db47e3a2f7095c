#!/usr/bin/env bash
# Sets everything up and runs every test: lint and types, the Python suites
# (store, CLI, importers, language server) on 3.11 and again on 3.10 (the oldest
# supported), the extension's unit tests, and the
# end-to-end suite in a real VS Code (code-server) driven by Chromium.
# Set TURNBACK_SKIP_E2E=1 to leave out the end-to-end suite.
set -uo pipefail
cd "$(dirname "$0")/.."
# a CLI run by a test leaves no background server behind (tests/cli/test_background.py
# turns it on where it is tested)
export TURNBACK_BACKGROUND=0

failed=()
run() {
  local name=$1; shift
  echo "==> $name" >&2
  if "$@"; then echo "==> $name: ok" >&2; else echo "==> $name: FAILED" >&2; failed+=("$name"); fi
}

bash scripts/setup.sh || { echo "set-up failed" >&2; exit 1; }
# the npm dependencies before pytest: tests/server/test_vscode_client.py drives the server
# with the editor's own vscode-jsonrpc (it skips, saying why, where they are missing)
bash scripts/setup-node.sh || { echo "npm set-up failed" >&2; exit 1; }
run ruff .venv/bin/ruff check server tests bench
run mypy .venv/bin/mypy
run layers env PYTHONPATH=server .venv/bin/lint-imports
run pytest .venv/bin/python -m pytest -q -p no:cacheprovider
run py310 bash scripts/test-py310.sh
run casefold bash scripts/test-portable.sh  # core + trust tests on a case-insensitive FS
run fspaths bash scripts/test-fspaths.sh  # the same with folders reached by path, as on Windows
if [[ -f scripts/test-extension.sh ]]; then run extension bash scripts/test-extension.sh; fi
if [[ -f scripts/test-e2e.sh && -z "${TURNBACK_SKIP_E2E:-}" ]]; then run e2e bash scripts/test-e2e.sh; fi

if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
# nothing of a passing run is left in /tmp: pytest's root for this user, empty after it, is
# removed by tests/conftest.py's pytest_unconfigure in every suite (tests/test_no_tmp_left.py)
echo "all test suites passed" >&2
