#!/usr/bin/env bash
# Runs the store, CLI, importer and server suites on Python 3.10, the oldest
# Python Turnback supports (pyproject.toml: requires-python >= 3.10), in its own
# .venv-py310/. The pinned dev tools of pyproject.toml need 3.11, so the test
# tools here are the newest releases that still support 3.10, pinned below.
# Skips, saying so, when no Python 3.10 is on the machine (PATH or pyenv).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON310:-}
if [[ -z $PY ]]; then
  for c in python3.10 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10*/bin/python3.10; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))' 2>/dev/null; then
      PY=$(command -v "$c"); break
    fi
  done
fi
if [[ -z $PY ]]; then
  echo "py310: SKIPPED: no Python 3.10 on this machine (set PYTHON310=/path/to/python3.10)" >&2
  exit 0
fi
echo "py310: using $PY" >&2

TOOLS=(pytest==9.2.0 hypothesis==6.168.5 pytest-lsp==1.0.1 pytest-asyncio==1.5.0 pytest-timeout==2.4.0 pyfakefs==6.3.2 jsonschema==4.26.0)
stamp=.venv-py310/.turnback-setup
want="$(cat pyproject.toml "$0" | sha256sum | cut -d' ' -f1)"
if [[ ! -x .venv-py310/bin/python ]]; then "$PY" -m venv .venv-py310; fi
if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
  echo "py310: installing Turnback and its test tools into .venv-py310" >&2
  .venv-py310/bin/python -m pip install -q -e . "${TOOLS[@]}" 2>&1 | grep -v -i warning >&2 || true
  .venv-py310/bin/python -c 'import turnback.server, pytest_lsp'
  echo "$want" > "$stamp"
fi
.venv-py310/bin/python -m pytest -q -p no:cacheprovider tests --ignore=tests/reliability --ignore=tests/test_bench.py
