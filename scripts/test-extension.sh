#!/usr/bin/env bash
# The extension's checks: strict type check, eslint, the esbuild bundle, and the
# unit tests of the code that does not need VS Code (node's test runner).
# Installs what it needs first (scripts/setup-node.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-node.sh
bin=node_modules/.bin

echo "== extension: tsc --noEmit (strict)"
"$bin/tsc" --noEmit -p .

echo "== extension: eslint"
"$bin/eslint" --max-warnings 0 extension esbuild.mjs eslint.config.mjs

echo "== extension: esbuild bundle"
node esbuild.mjs --production

echo "== extension: unit tests"
rm -rf out
"$bin/tsc" -p .
node --test --test-reporter=spec out/test/*.test.js
