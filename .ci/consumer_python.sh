#!/usr/bin/env bash
# The Python package as a user outside the repository gets it: a wheel built from
# clients/python (its build hook generates the gRPC stubs from proto/), installed with its
# `langgraph` extra into a fresh virtual environment in a temporary folder, and a program of a
# user's (.ci/consumers/python/consumer.py) run from there against a live `checkpointd serve`
# (free ports, a temporary SQLite file): the client, a LangGraph graph on CheckpointdSaver and a
# crashing agent on the recovery loop, then a second process that reads it all back and resumes
# the agent. Ends with "N passed, N failed".
#
# Usage: .ci/consumer_python.sh [PATH/TO/checkpointd]   (default $CHECKPOINTD_BIN, then
# target/release/checkpointd). Reaches PyPI for the wheel's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=$(realpath "${1:-${CHECKPOINTD_BIN:-target/release/checkpointd}}")
[ -x "$BIN" ] || { echo "no checkpointd binary at $BIN" >&2; exit 1; }
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PASSED=0
FAILED=0
check() {  # check NAME COMMAND...: runs it, prints its output, counts it
  local name=$1
  shift
  if "$@" > "$WORK/check.log" 2>&1; then
    PASSED=$((PASSED + 1)); cat "$WORK/check.log"; echo "ok: $name"
  else
    FAILED=$((FAILED + 1)); cat "$WORK/check.log" >&2; echo "FAILED: $name" >&2
  fi
}
finish() { echo; echo "$PASSED passed, $FAILED failed"; [ "$FAILED" = 0 ]; exit $?; }

# The wheel, as `pip wheel` builds it for an index; then nothing of the clone is used.
python3 -m venv "$WORK/build"
check "wheel built from clients/python" \
  "$WORK/build/bin/pip" wheel --quiet --no-deps --wheel-dir "$WORK/dist" "$REPO/clients/python"
WHEEL=$(ls "$WORK"/dist/checkpointd-*.whl 2>/dev/null | head -n 1)
[ -n "$WHEEL" ] || finish
python3 -m venv "$WORK/venv"
check "wheel installed with its langgraph extra in a fresh venv" \
  "$WORK/venv/bin/pip" install --quiet "${WHEEL}[langgraph]"
APP=$WORK/app
mkdir "$APP"
cp "$REPO/.ci/consumers/python/consumer.py" "$APP/"
# The package must come from the venv, never from the clone's source tree.
check "the package imports from site-packages" bash -c \
  "cd '$APP' && '$WORK/venv/bin/python' -c 'import checkpointd, sys; assert \"site-packages\" in checkpointd.__file__, checkpointd.__file__; print(checkpointd.__file__)'"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN" serve --listen "127.0.0.1:$PORT" --admin-listen 127.0.0.1:0 \
  --database "sqlite://$WORK/consumer.db" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
# No wait for health: the client waits for a starting server itself.
check "a user's program: client, LangGraph graph, crashing agent" \
  bash -c "cd '$APP' && '$WORK/venv/bin/python' consumer.py 127.0.0.1:$PORT first"
check "a second process reads it back and resumes the agent" \
  bash -c "cd '$APP' && '$WORK/venv/bin/python' consumer.py 127.0.0.1:$PORT second"
finish
