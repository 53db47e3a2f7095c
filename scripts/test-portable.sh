#!/usr/bin/env bash
# The store's core and trust tests again, each workspace on a case-insensitive,
# normalization-insensitive file system (tests/casefs.py: a FUSE passthrough that folds
# names as APFS does; TURNBACK_TEST_FS=casefold in tests/conftest.py). Skips, saying
# why, where FUSE is not available. Left out: the forked pre-check's tests
# (snapshot/test_forked_scan.py), a Linux-only mechanism that these tests drive through
# the Linux file system's own timing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
py=${PYTHON:-.venv/bin/python}
TURNBACK_TEST_FS=casefold exec "$py" -m pytest -q -p no:cacheprovider \
  tests/rewind tests/store tests/snapshot \
  tests/reliability/test_hostile.py tests/reliability/test_hostile_journals_and_config.py \
  tests/reliability/test_rewind_capture.py tests/reliability/test_hostile_journal.py \
  tests/reliability/test_corrupt.py \
  --deselect tests/snapshot/test_forked_scan.py "$@"
