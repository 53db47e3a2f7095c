#!/usr/bin/env bash
# Builds turnback-<version>.vsix at the repository root: the esbuild bundle,
# the Python server and its dependencies for each supported CPython version
# (extension/build/bundle_python.py), packaged non-interactively by vsce.
# Then checks that the .vsix holds what the extension needs to start the server
# (extension/build/check_vsix.py: target, contents, file type of compiled modules).
#
#   --target T     one VS Code target (linux-x64, linux-arm64, darwin-x64,
#                  darwin-arm64, win32-x64, win32-arm64): turnback-<version>-T.vsix
#   --target all   each of them, one .vsix per target
# Without --target: this machine's target, as turnback-<version>.vsix.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ALL_TARGETS=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64)
targets=()
named=0
while (($#)); do
  case $1 in
    --target)
      [[ $# -ge 2 ]] || { echo "package-extension: --target needs a value" >&2; exit 2; }
      named=1
      if [[ $2 == all ]]; then targets=("${ALL_TARGETS[@]}"); else targets=("$2"); fi
      shift 2 ;;
    *) echo "package-extension: unknown argument $1 (use --target T|all)" >&2; exit 2 ;;
  esac
done

bash scripts/setup-node.sh

# bundled/ and dist/ are rebuilt in place: one packaging at a time.
mkdir -p .cache
exec 8>.cache/package-extension.lock
flock 8

python=${TURNBACK_BUILD_PYTHON:-}
if [[ -z "$python" ]]; then
  if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
fi
version=$(node -p 'require("./package.json").version')
if ((${#targets[@]} == 0)); then targets=("$(node -p 'process.platform + "-" + process.arch')"); fi
npm run --silent build:prod

made=() left=()
stage=""
trap 'rm -rf "${stage:-}"' EXIT

# One target: bundle, stage, package, check. Called plainly (not in `||`), so that
# `set -e` stops the script at the first failure inside.
package_one() {
local target=$1 out=$2
rm -f "$out"
local rc=0
"$python" extension/build/bundle_python.py --target "$target" || rc=$?
if ((rc == 3)); then
  echo "package-extension: $target left out: no CPython version has wheels for every dependency there" >&2
  left+=("$target")
  return 0
elif ((rc != 0)); then
  exit "$rc"
fi

# vsce walks every file under its folder (.git, .venv, node_modules: ~30 s of
# pattern matching here), so it packages a staging folder holding only what
# the .vsix carries. dist/ is built above, so the staged manifest drops
# vscode:prepublish (the staging folder has no sources to build from).
stage=$(mktemp -d)
mkdir -p "$stage/dist" "$stage/extension" "$stage/docs"
cp .vscodeignore "$stage/"
cp dist/extension.js "$stage/dist/"
cp -r extension/media "$stage/extension/"
cp -r bundled "$stage/"
cp docs/EXTENSION.md "$stage/docs/"
node -e '
  const fs = require("fs");
  const m = JSON.parse(fs.readFileSync("package.json", "utf8"));
  delete m.scripts["vscode:prepublish"];
  fs.writeFileSync(process.argv[1], JSON.stringify(m, null, 2) + "\n");' "$stage/package.json"

# --no-dependencies: esbuild bundled them into dist/extension.js.
# The extension's page is docs/EXTENSION.md; no LICENSE file or repository
# URL exists yet, and vsce would stop to ask about each without these flags.
(cd "$stage" && "$OLDPWD/node_modules/.bin/vsce" package \
  --no-dependencies \
  --allow-missing-repository \
  --skip-license \
  --no-rewrite-relative-links \
  --readme-path docs/EXTENSION.md \
  --target "$target" \
  --out "$out")

# The .vsix must carry the bundle, the server package and every dependency folder,
# for its own target (compiled modules of its format and CPU).
"$python" extension/build/check_vsix.py "$out" "$target"
ls -l "$out"
rm -rf "$stage"
made+=("$out")
}

for target in "${targets[@]}"; do
  if ((named)); then out="$PWD/turnback-${version}-${target}.vsix"; else out="$PWD/turnback-${version}.vsix"; fi
  package_one "$target" "$out"
done
echo "package-extension: made ${#made[@]} .vsix: ${made[*]:-none}${left:+; left out: ${left[*]}}" >&2
((${#made[@]} > 0))
