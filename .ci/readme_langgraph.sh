#!/usr/bin/env bash
# The README's LangGraph example, as a new user runs it: a fresh virtual environment, the
# package installed with its `langgraph` extra exactly as the README says, a server on the
# README's address, and the example's Python block (taken from README.md, not copied here) run
# with LangGraph's defaults. Usage: .ci/readme_langgraph.sh path/to/checkpointd
set -euo pipefail
BIN=$(realpath "$1")
cd "$(dirname "$0")/.."

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The README's ```python block under "## LangGraph".
python3 - README.md "$WORK/example.py" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("## LangGraph\n"):]
block = re.search(r"```python\n(.*?)```", section, re.S)
assert block, "no python block under ## LangGraph in README.md"
open(sys.argv[2], "w").write(block.group(1))
PY

python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet './clients/python[langgraph]'  # from the clone, as the README says

# The walk-through's server is gone by now; the example's address must be free.
"$BIN" serve --database "sqlite://$WORK/readme.db" --admin-listen 127.0.0.1:0 > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
# No wait for the server here on purpose: the client waits for a starting server itself.
OUT=$(cd "$WORK" && "$WORK/venv/bin/python" example.py)
echo "$OUT"
if [ "$OUT" != "you said: hi" ]; then
  echo "the README's LangGraph example printed '$OUT', not 'you said: hi'" >&2
  cat "$WORK/server.log" >&2
  exit 1
fi
echo "README LangGraph example: ok"
