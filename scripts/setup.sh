#!/usr/bin/env bash
# Sets up the Python side: .venv/ at the repository root with Turnback installed
# (editable; its one optional C extension built in place when a compiler is there) and
# its pinned dev tools. Idempotent: a stamp of pyproject.toml's
# hash skips the install when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "setup: the development set-up needs Python 3.11 or newer as '$PY' (its pinned test tools do; Turnback itself runs on 3.10+); set PYTHON=..." >&2
  exit 1
fi
if [[ ! -x .venv/bin/python ]]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then
    echo "setup: python venv module missing; installing python3-venv from apt" >&2
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    "$PY" -m venv .venv
  fi
fi
stamp=.venv/.turnback-setup
# setup.py and the C source too: the optional compiled check is built by this install
want="$(cat pyproject.toml setup.py server/turnback/snapshot/_folderparts.c | sha256sum | cut -d' ' -f1)"
if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
  echo "setup: installing Python dependencies into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v -i warning >&2 || true
  .venv/bin/python -m pip install -q -e '.[dev,bench]' 2>&1 | grep -v -i warning >&2 || true
  .venv/bin/python -c 'import turnback, pygls, pytest_lsp' # fail loudly if the install did not work
  echo "$want" > "$stamp"
fi

# The case-insensitive file system of the tests (tests/casefs.py, a FUSE mount) needs
# Debian's fuse3 (libfuse3 and fusermount3); without it (or without root) those tests
# skip, saying why.
if [[ ! -x /usr/bin/fusermount3 ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: installing fuse3 from apt (the case-insensitive FUSE mount of the tests)" >&2
    { apt-get update -qq && apt-get install -y -qq fuse3; } >/dev/null 2>&1 \
      || echo "setup: fuse3 could not be installed; the FUSE tests will skip" >&2
  else
    echo "setup: fuse3 is missing (needs root and apt); the FUSE tests will skip" >&2
  fi
fi
