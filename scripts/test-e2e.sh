#!/usr/bin/env bash
# End-to-end suite: the freshly built extension in code-server, driven by
# Playwright in headless Chromium, against a demo workspace the CLI prepares.
# Screenshots of every step go to artifacts/e2e/. Ends with a line
# "e2e: N passed, M failed"; exits non-zero when anything failed.
#
# Env: TURNBACK_VSIX=FILE skips the build and tests that .vsix;
#      E2E_TESTS="tests/x.test.ts ..." (relative to e2e/) runs only those files.
set -euo pipefail
# shellcheck source=../e2e/lib/env.sh
source "$(dirname "$0")/../e2e/lib/env.sh"

# A run that cannot even start still ends with the closing line, as a failure.
not_started() {
  e2e_log "$1"
  echo "e2e: 0 passed, 1 failed"
  exit 1
}

start=$SECONDS
"$TURNBACK_ROOT/scripts/setup-e2e.sh" || not_started "set-up failed"
e2e_require_venv || not_started "no project venv"
if [[ -n "${TURNBACK_VSIX:-}" ]]; then
  vsix=$TURNBACK_VSIX
else
  vsix=$(e2e_build_vsix) || not_started "the extension did not build"
fi
e2e_log "set-up and build took $((SECONDS - start)) s; testing $vsix"

e2e_use_node24
export TURNBACK_VSIX=$vsix ARTIFACTS_DIR
rm -rf "$ARTIFACTS_DIR/e2e" "$ARTIFACTS_DIR/smoke"
mkdir -p "$ARTIFACTS_DIR"
log=$ARTIFACTS_DIR/e2e-output.txt

# The runner leads its own process group, and everything it starts keeps its
# temporary files under run_tmp (TMPDIR): code-server's profile and the
# workspace, and Playwright's Chromium profile. Chromium leads a process group
# of its own, so on the way out whatever still names run_tmp is stopped too.
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/turnback-e2e-run-XXXXXX")
export TMPDIR=$run_tmp
runner_pid=
cleanup() {
  if [[ -n "$runner_pid" ]]; then
    kill -TERM -- "-$runner_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$runner_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$runner_pid" 2>/dev/null || true
  fi
  local stray
  stray=$(pgrep -f -- "$run_tmp/" || true)
  # shellcheck disable=SC2086
  [[ -n "$stray" ]] && kill -KILL $stray 2>/dev/null || true
  rm -rf "$run_tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cd "$E2E_DIR"
: >"$log" # exists before tail follows it (the runner's redirect happens in the background)
"$E2E_DIR/node_modules/.bin/tsc" -p . # the suite's own types, before anything runs
# shellcheck disable=SC2086
setsid timeout --kill-after=10 900 node --test --test-concurrency=1 --test-timeout=180000 \
  --test-reporter=spec ${E2E_TESTS:-tests/*.test.ts} >"$log" 2>&1 &
runner_pid=$!
tail -n +1 -f "$log" --pid="$runner_pid" &
tail_pid=$!
set +e
wait "$runner_pid"
status=$?
set -e
wait "$tail_pid" || true

passed=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$log" | tail -1)
failed=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$log" | tail -1)
if [[ -z "$passed" || -z "$failed" ]]; then
  # The runner died before its summary: count that as a failure.
  passed=${passed:-0}
  failed=$((${failed:-0} + 1))
fi
if ((status != 0 && failed == 0)); then failed=1; fi
e2e_log "suite took $((SECONDS - start)) s in all; screenshots in $ARTIFACTS_DIR"
echo "e2e: $passed passed, $failed failed"
((failed == 0))
