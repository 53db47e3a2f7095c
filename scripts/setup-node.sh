#!/usr/bin/env bash
# Installs the VS Code extension's npm dependencies, exactly as package-lock.json
# pins them (npm ci). Idempotent: skipped while the lock file is unchanged.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup-node: Node.js 20.19+ and npm are needed (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    console.error(`setup-node: Node.js ${process.versions.node} is too old; the extension tools need 20.19 or newer`);
    process.exit(1);
  }'

# Two set-ups at once (the test and the e2e scripts, say) would each empty
# node_modules under the other: one at a time.
mkdir -p .cache
exec 9>.cache/setup-node.lock
flock 9

if [[ ! -f package-lock.json ]]; then
  # No lock yet (a fresh dependency change): resolve the pinned versions and write one.
  echo "setup-node: no package-lock.json; npm install"
  npm install --no-audit --no-fund
fi

stamp=node_modules/.turnback-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
tools=(tsc eslint esbuild vsce)
complete=1
for t in "${tools[@]}"; do [[ -x node_modules/.bin/$t ]] || complete=0; done
if [[ $complete == 1 && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "setup-node: npm dependencies up to date"
  exit 0
fi
echo "setup-node: npm ci"
npm ci --no-audit --no-fund
echo "$want" >"$stamp"
