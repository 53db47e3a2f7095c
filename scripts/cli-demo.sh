#!/usr/bin/env bash
# A Turnback tour on the command line, on a generated sample workspace:
# record a session, checkpoint, change files by shell, diff, rewind, undo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
TB="$PWD/.venv/bin/turnback"
WS=${1:-$(mktemp -d /tmp/turnback-demo-XXXX)}
mkdir -p "$WS" && cd "$WS"
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

mkdir -p src tests node_modules/lib
printf 'def add(a, b):\n    return a + b\n' > src/calc.py
printf 'from src.calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n' > tests/test_calc.py
printf 'node_modules/\n.env\n' > .gitignore
echo "SECRET=1" > .env
echo "module.exports = 1" > node_modules/lib/index.js
printf '\x89PNG\r\n\x1a\n\x00\x00demo' > logo.png

say "$TB" init
SID=$("$TB" session start --title "Add subtraction" --agent demo-agent --model demo-1)
export TURNBACK_SESSION=$SID
say "$TB" record prompt --text "Add a subtract function and a test"
say "$TB" record tool_call --data '{"name": "Edit", "input": {"file_path": "src/calc.py"}, "toolUseId": "t1"}'
say "$TB" checkpoint -m "before the agent's edits"
CP1=$("$TB" --json checkpoints | python3 -c 'import json,sys; print(json.load(sys.stdin)["checkpoints"][-1]["id"])')

# the "agent" changes files by shell: edit, create, delete, chmod, binary, symlink
printf 'def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n' > src/calc.py
printf '#!/bin/sh\npytest -q\n' > run-tests.sh && chmod +x run-tests.sh
rm tests/test_calc.py
printf '\x89PNG\r\n\x1a\n\x01\x02changed' > logo.png
ln -s src/calc.py calc-link.py
echo "SECRET=2" > .env  # ignored: rewind leaves it alone
say "$TB" record tool_result --data '{"toolUseId": "t1", "isError": false, "output": "ok"}'
say "$TB" checkpoint -m "after the agent's edits"
say "$TB" changes "$CP1"
say "$TB" diff "$CP1" src/calc.py
say "$TB" rewind "$CP1" --dry-run
say "$TB" rewind "$CP1"
say ls -la
say cat .env
say "$TB" undo
say ls -la
say "$TB" session show "$SID"
say "$TB" status
echo
echo "Demo workspace: $WS"
