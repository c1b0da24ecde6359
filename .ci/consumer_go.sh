#!/usr/bin/env bash
# The Go modules as a user outside the repository gets them: a fresh module in a temporary
# folder (`go mod init`) that writes the replace lines clients/go/README.md documents ("From
# your own module") pointing at this clone, imports the client, the recovery loop, the worker,
# the ADK adapter with ADK's runner and an llmagent, and the Eino adapter with a compiled graph
# (.ci/consumers/go/main.go), then `go mod tidy`, `go vet`, `go build`, and runs the program
# against a live `checkpointd serve` (free ports, a temporary SQLite file). Checks: the module
# resolves and builds, its go line is ADK v2.2.0's and no toolchain line appears, and each
# part of the program prints its check line. Ends with "N passed, N failed".
#
# Usage: .ci/consumer_go.sh [PATH/TO/checkpointd]   (default $CHECKPOINTD_BIN, then
# target/release/checkpointd). Needs Go (GOTOOLCHAIN=local: no toolchain is downloaded) and the
# Go module proxy for ADK's, Eino's and grpc's modules.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=$(realpath "${1:-${CHECKPOINTD_BIN:-target/release/checkpointd}}")
[ -x "$BIN" ] || { echo "no checkpointd binary at $BIN" >&2; exit 1; }
command -v go >/dev/null 2>&1 || { echo "go is required" >&2; exit 1; }
export GOTOOLCHAIN=local
CPD=$REPO/clients/go
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok: $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAILED: $1" >&2; }
finish() { echo; echo "$PASSED passed, $FAILED failed"; [ "$FAILED" = 0 ]; exit $?; }

echo "== a fresh module outside the repository, with the README's replace lines"
APP=$WORK/consumer
mkdir "$APP"
cp "$REPO/.ci/consumers/go/main.go" "$APP/main.go"
(
  cd "$APP"
  go mod init example.com/consumer
  # A user's module that says go 1.26.0 (the core's line): only ADK may raise it, to its 1.26.5.
  go mod edit -go=1.26.0
  # As clients/go/README.md writes them, with the clone at $CPD.
  go mod edit -require=github.com/checkpointd/checkpointd/clients/go@v0.0.0 -replace=github.com/checkpointd/checkpointd/clients/go=$CPD
  go mod edit -require=github.com/checkpointd/checkpointd/clients/go/adk@v0.0.0 -replace=github.com/checkpointd/checkpointd/clients/go/adk=$CPD/adk
  go mod edit -require=github.com/checkpointd/checkpointd/clients/go/eino@v0.0.0 -replace=github.com/checkpointd/checkpointd/clients/go/eino=$CPD/eino
  go mod tidy
) > "$WORK/tidy.log" 2>&1 && pass "go mod tidy" || { cat "$WORK/tidy.log" >&2; fail "go mod tidy"; finish; }
replaces=$(grep -c '=> /' "$APP/go.mod" || true)
[ "$replaces" = 3 ] && pass "three replace lines, one per module" || fail "replace lines: $replaces"

# ADK v2.2.0 itself says go 1.26.5: tidy may raise the user's 1.26.0 to that, not past it.
golines=$(grep -E '^(go|toolchain) ' "$APP/go.mod" | tr '\n' ' ')
if grep -q '^toolchain ' "$APP/go.mod"; then fail "a toolchain line appeared: $golines"
elif grep -qx 'go 1.26.5' "$APP/go.mod"; then pass "go line raised only to ADK v2.2.0's own ($golines)"
else fail "go line: $golines (want go 1.26.5, ADK v2.2.0's)"; fi
# OpenTelemetry: the versions that ADK's runner compiles with.
grep -E 'go.opentelemetry.io/otel(/log)? ' "$APP/go.mod" || true

(cd "$APP" && go vet ./... && go build -o "$WORK/consumer-app" .) > "$WORK/build.log" 2>&1 \
  && pass "go vet and go build (client, worker, ADK runner and llmagent, Eino graph)" \
  || { cat "$WORK/build.log" >&2; fail "go build"; finish; }

echo "== server"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
PORT=$(free_port)
ADMIN_PORT=$(free_port)
"$BIN" serve --listen "127.0.0.1:$PORT" --admin-listen "127.0.0.1:$ADMIN_PORT" \
  --database "sqlite://$WORK/consumer.db" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
healthy=
for _ in $(seq 1 100); do
  if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
    "http://127.0.0.1:$ADMIN_PORT/healthz" 2>/dev/null; then healthy=1; break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
[ -n "$healthy" ] || { cat "$WORK/server.log" >&2; fail "checkpointd healthy"; finish; }

echo "== the program against it"
out=$(CHECKPOINTD_ADDRESS=127.0.0.1:$PORT timeout 120 "$WORK/consumer-app" 2>&1) || true
echo "$out"
for part in client recovery worker adk eino; do
  if grep -q "^check: $part: ok" <<<"$out"; then pass "$part"; else fail "$part"; fi
done
finish
