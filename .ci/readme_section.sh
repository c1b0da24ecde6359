#!/usr/bin/env bash
# Runs the first ```sh block of a README section as written, from the repository's root, but for
# the binary (`cargo run --release --` becomes the given checkpointd), and checks that it printed
# each expected line fragment. Usage:
#   .ci/readme_section.sh "SECTION TITLE" PATH/TO/checkpointd EXPECTED... (port 50051 free)
set -euo pipefail
SECTION=$1
BIN=$(realpath "$2")
shift 2
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

awk -v title="## $SECTION" '$0 == title { section = 1; next }
     section && /^## / { exit }
     section && /^```sh$/ && !done { inside = 1; next }
     inside && /^```$/ { inside = 0; done = 1; next }
     inside { print }' README.md > "$WORK/block.sh"
[ -s "$WORK/block.sh" ] || { echo "README \"$SECTION\" lost its sh block" >&2; exit 1; }
grep -q 'cargo run --release --' "$WORK/block.sh" \
  || { echo "README \"$SECTION\" no longer runs the binary" >&2; exit 1; }
sed -i "s|cargo run --release --|$BIN|g" "$WORK/block.sh"

RUST_LOG=warn timeout 300 bash -euo pipefail "$WORK/block.sh" > "$WORK/block.out" 2>&1 \
  || { cat "$WORK/block.out"; echo "README \"$SECTION\" failed" >&2; exit 1; }
for expected in "$@"; do
  grep -qF -- "$expected" "$WORK/block.out" \
    || { cat "$WORK/block.out"; echo "README \"$SECTION\" did not print: $expected" >&2; exit 1; }
done
echo "README \"$SECTION\": ok"
