#!/usr/bin/env bash
# Runs the README's "Walk-through with `buf curl`" block twice in a row, unchanged but for the
# binary, the port and the database file, against a real server: a reader can paste it again
# and again. Usage: .ci/readme_walkthrough.sh PATH/TO/checkpointd (buf from .ci/.tools, jq).
set -euo pipefail
BIN=$(realpath "$1")
export PATH="$PWD/.ci/.tools/node_modules/.bin:$PATH"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

awk '/^## Walk-through with `buf curl`/ { section = 1 }
     section && /^```sh$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside' README.md > "$WORK/walkthrough.sh"
substitute() {  # every substitution must apply, or the block tested is not the README's
  grep -q -- "$1" "$WORK/walkthrough.sh" || { echo "README walk-through lost: $1" >&2; exit 1; }
  sed -i "s|$1|$2|" "$WORK/walkthrough.sh"
}
substitute 'cargo run --release --' "$BIN"
substitute '^ADDR=127.0.0.1:50051' "ADDR=127.0.0.1:$PORT"
substitute '/tmp/walkthrough.db' "$WORK/walkthrough.db"

for run in 1 2; do
  OUT="$WORK/run-$run.out"
  RUST_LOG=warn bash -euo pipefail "$WORK/walkthrough.sh" > "$OUT"
  # Each run resumes where the last one stopped and saves three more steps.
  expected="\"recoveredFromStep\": \"$((run * 3))\""
  grep -q "$expected" "$OUT" || { cat "$OUT"; echo "run $run: no $expected" >&2; exit 1; }
  echo "README walk-through run $run: ok (recovered from step $((run * 3)))"
done
