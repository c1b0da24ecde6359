#!/usr/bin/env bash
# Runs the README's two blocks under "## Rust: the bundled worker and the demo" as written, but
# for the binary: the demo (a real crash and a real recovery, every tool call run once), then a
# server on Postgres with a task and a worker that exits after it. Usage:
# .ci/readme_rust.sh PATH/TO/checkpointd (Postgres at the README's URL, port 50051 free).
set -euo pipefail
BIN=$(realpath "$1")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

awk '/^## Rust: the bundled worker and the demo/ { section = 1; next }
     section && /^## / { exit }
     section && /^```sh$/ { inside = 1; block += 1; next }
     inside && /^```$/ { inside = 0; next }
     inside { print > (dir "/block-" block ".sh") }' dir="$WORK" README.md
for block in 1 2; do
  [ -s "$WORK/block-$block.sh" ] || { echo "README Rust section lost its block $block" >&2; exit 1; }
  grep -q 'cargo run --release --' "$WORK/block-$block.sh" \
    || { echo "README Rust block $block no longer runs the binary" >&2; exit 1; }
  sed -i "s|cargo run --release --|$BIN|g" "$WORK/block-$block.sh"
done

(cd "$WORK" && RUST_LOG=warn bash -euo pipefail block-1.sh) > "$WORK/demo.out" 2>&1 \
  || { cat "$WORK/demo.out"; echo "README demo failed" >&2; exit 1; }
grep -q "ok: every tool call ran exactly once" "$WORK/demo.out" \
  || { cat "$WORK/demo.out"; echo "README demo: a tool call ran twice or not at all" >&2; exit 1; }
echo "README Rust demo: ok (every tool call ran exactly once)"

(cd "$WORK" && RUST_LOG=warn timeout 120 bash -euo pipefail block-2.sh) > "$WORK/own.out" 2>&1 \
  || { cat "$WORK/own.out"; echo "README Rust worker block failed" >&2; exit 1; }
grep -q "summary saves=" "$WORK/own.out" \
  || { cat "$WORK/own.out"; echo "README Rust worker block: the worker ran no task" >&2; exit 1; }
echo "README Rust worker against a server of your own: ok"
