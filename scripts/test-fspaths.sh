#!/usr/bin/env bash
# The store's core and trust tests again with folders reached by path, as on Windows
# (fs/folders.py's PathFolder; TURNBACK_FS_PATHS=1, read once by fs/osflags.py): no
# dir_fd, no descriptor scandir, O_NOFOLLOW and O_DIRECTORY taken as 0, no forked
# pre-check. Linux' own system calls still answer underneath: this shows the path
# implementation keeps every promise these tests check, not that Windows does (no
# Windows machine has run them; docs/PLATFORMS.md). Left out: the forked pre-check's
# tests (snapshot/test_forked_scan.py), a mechanism the path mode turns off.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
py=${PYTHON:-.venv/bin/python}
TURNBACK_FS_PATHS=1 exec "$py" -m pytest -q -p no:cacheprovider \
  tests/fs tests/rewind tests/store tests/snapshot \
  tests/reliability/test_hostile.py tests/reliability/test_hostile_journals_and_config.py \
  tests/reliability/test_rewind_capture.py tests/reliability/test_hostile_journal.py \
  tests/reliability/test_corrupt.py tests/reliability/test_privacy.py \
  tests/reliability/test_planted_files.py tests/reliability/test_hostile_imports.py \
  tests/reliability/test_crash.py tests/reliability/test_planted_first_page_and_counts.py \
  --deselect tests/snapshot/test_forked_scan.py "$@"
