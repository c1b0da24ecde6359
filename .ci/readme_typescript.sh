#!/usr/bin/env bash
# Runs the README's "## TypeScript quickstart" block as written, from the repository's root, but
# for the binary: npm ci of the package, a server, `npm install` of the package into a scratch
# folder and the crash-and-resume example, which must resume from step 3 with every lookup run
# once. Usage: .ci/readme_typescript.sh PATH/TO/checkpointd (port 50051 free).
set -euo pipefail
BIN=$(realpath "$1")
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

awk '/^## TypeScript quickstart/ { section = 1; next }
     section && /^## / { exit }
     section && /^```sh$/ { inside = 1; block += 1; next }
     inside && /^```$/ { inside = 0; next }
     inside { print > (dir "/block-" block ".sh") }' dir="$WORK" README.md
[ -s "$WORK/block-1.sh" ] || { echo "README TypeScript quickstart lost its block" >&2; exit 1; }
grep -q 'cargo run --release --' "$WORK/block-1.sh" \
  || { echo "README TypeScript quickstart no longer runs the binary" >&2; exit 1; }
sed -i "s|cargo run --release --|$BIN|g" "$WORK/block-1.sh"

RUST_LOG=warn timeout 300 bash -euo pipefail "$WORK/block-1.sh" > "$WORK/quickstart.out" 2>&1 \
  || { cat "$WORK/quickstart.out"; echo "README TypeScript quickstart failed" >&2; exit 1; }
for expected in "recoveredFromStep=3" "lookup calls: 8 for 8 steps (2 replayed from the journal)"; do
  grep -qF "$expected" "$WORK/quickstart.out" \
    || { cat "$WORK/quickstart.out"; echo "README TypeScript quickstart did not print: $expected" >&2; exit 1; }
done
echo "README TypeScript quickstart: ok (resumed from step 3, every lookup run once)"
