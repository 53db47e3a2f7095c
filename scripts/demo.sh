#!/usr/bin/env bash
# The main job: VS Code in the browser (code-server on 127.0.0.1) with the
# freshly built Turnback extension, opened on a demo workspace that the CLI
# prepares now: a recorded agent session with checkpoints and a branch.
# Prints the URL; Ctrl-C stops code-server and everything it started.
#
# Env: TURNBACK_DEMO_PORT=N binds that port (default: a free one);
#      TURNBACK_VSIX=FILE serves that .vsix instead of building one.
set -euo pipefail
# shellcheck source=../e2e/lib/env.sh
source "$(dirname "$0")/../e2e/lib/env.sh"

"$TURNBACK_ROOT/scripts/setup-e2e.sh"
e2e_require_venv
if [[ -n "${TURNBACK_VSIX:-}" ]]; then vsix=$TURNBACK_VSIX; else vsix=$(e2e_build_vsix); fi

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/turnback-demo-XXXXXX")
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  rm -rf "$run_dir"
  e2e_log "demo stopped"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

e2e_log "demo workspace: $run_dir/greeter"
"$TURNBACK_ROOT/.venv/bin/python" "$TURNBACK_ROOT/scripts/make-demo-workspace.py" "$run_dir/greeter"

e2e_use_node24
port_args=()
[[ -n "${TURNBACK_DEMO_PORT:-}" ]] && port_args=(--port "$TURNBACK_DEMO_PORT")
# Its own process group, so Ctrl-C here takes code-server's whole tree down.
setsid node "$E2E_DIR/serve.ts" --folder "$run_dir/greeter" --run-dir "$run_dir" \
  --vsix "$vsix" "${port_args[@]}" &
server_pid=$!
wait "$server_pid"
