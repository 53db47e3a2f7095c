#!/usr/bin/env bash
# Builds turnback-<version>.vsix at the repository root: the esbuild bundle,
# the Python server and its dependencies for each supported CPython version
# (extension/build/bundle_python.py), packaged non-interactively by vsce.
# Then checks that the .vsix holds what the extension needs to start the server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-node.sh

# bundled/ and dist/ are rebuilt in place: one packaging at a time.
mkdir -p .cache
exec 8>.cache/package-extension.lock
flock 8

python=${TURNBACK_BUILD_PYTHON:-}
if [[ -z "$python" ]]; then
  if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
fi
"$python" extension/build/bundle_python.py

version=$(node -p 'require("./package.json").version')
target=$(node -p 'process.platform + "-" + process.arch')
out="$PWD/turnback-${version}.vsix"
rm -f "$out"
npm run --silent build:prod

# vsce walks every file under its folder (.git, .venv, node_modules: ~30 s of
# pattern matching here), so it packages a staging folder holding only what
# the .vsix carries. dist/ is built above, so the staged manifest drops
# vscode:prepublish (the staging folder has no sources to build from).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
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

# The .vsix must carry the bundle, the server package and every dependency folder.
"$python" - "$out" <<'PY'
import json
import sys
import zipfile

vsix = sys.argv[1]
names = set(zipfile.ZipFile(vsix).namelist())
manifest = json.loads(zipfile.ZipFile(vsix).read("extension/bundled/manifest.json"))
need = [
    "extension/package.json",
    "extension/dist/extension.js",
    "extension/extension/media/turnback.svg",
    "extension/bundled/tool/turnback/server/__main__.py",
    "extension/bundled/tool/turnback/store/facade.py",
    "extension/bundled/libs/common/pygls/__init__.py",
    "extension/bundled/libs/common/lsprotocol/types.py",
]
if manifest["platform"].startswith("linux"):
    need.append("extension/bundled/libs/common/inotify_simple.py")  # the Linux watcher
for v in manifest["pythonVersions"]:
    tag = "cp" + v.replace(".", "")
    need += [f"extension/bundled/libs/{tag}/orjson/__init__.py", f"extension/bundled/libs/{tag}/zstandard/__init__.py"]
missing = [n for n in need if n not in names]
unwanted = [n for n in names if "/node_modules/" in n or "/__pycache__/" in n or n.startswith("extension/server/")]
if missing or unwanted:
    sys.exit(f"{vsix}: missing {missing}, unwanted {unwanted[:5]}")
print(f"{vsix}: {len(names)} files; server for Python {', '.join(manifest['pythonVersions'])} on {manifest['platform']}")
PY
ls -l "$out"
