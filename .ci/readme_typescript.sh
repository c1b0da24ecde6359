#!/usr/bin/env bash
# Runs the README's "## TypeScript quickstart" and "## LangGraph.js" blocks as written, from the repository's root, but
# for the binary: npm ci of the package, a server, `npm install` of the package into a scratch
# folder and the crash-and-resume example, which must resume from step 3 with every lookup run
# once. Usage: .ci/readme_typescript.sh PATH/TO/checkpointd (port 50051 free).
set -euo pipefail
BIN=$(realpath "$1")
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# "## TypeScript quickstart": its block as written; it must resume from step 3, each lookup once.
bash .ci/readme_section.sh "TypeScript quickstart" "$BIN" "recoveredFromStep=3" \
  "lookup calls: 8 for 8 steps (2 replayed from the journal)"

# "## LangGraph.js": its sh block as written (it runs examples/langgraph.mjs), then the README's
# own js block in the folder that block installed, with the server of the block started again.
awk '/^## LangGraph.js/ { section = 1; next }
     section && /^## / { exit }
     section && /^```sh$/ { inside = "sh"; next }
     section && /^```js$/ { inside = "js"; next }
     inside && /^```$/ { inside = ""; next }
     inside == "sh" { print > (dir "/langgraph.sh") }
     inside == "js" { print > (dir "/langgraph-readme.mjs") }' dir="$WORK" README.md
for part in langgraph.sh langgraph-readme.mjs; do
  [ -s "$WORK/$part" ] || { echo "README LangGraph.js section lost its ${part##*.} block" >&2; exit 1; }
done
grep -q 'cargo run --release --' "$WORK/langgraph.sh" \
  || { echo "README LangGraph.js block no longer runs the binary" >&2; exit 1; }
sed -i "s|cargo run --release --|$BIN|g" "$WORK/langgraph.sh"
RUST_LOG=warn timeout 300 bash -euo pipefail "$WORK/langgraph.sh" > "$WORK/langgraph.out" 2>&1 \
  || { cat "$WORK/langgraph.out"; echo "README LangGraph.js example failed" >&2; exit 1; }
grep -qx "you said: hi" "$WORK/langgraph.out" \
  || { cat "$WORK/langgraph.out"; echo "README LangGraph.js example did not print 'you said: hi'" >&2; exit 1; }
FOLDER=$(grep -o -- '--prefix [^ ]*' "$WORK/langgraph.sh" | head -1 | cut -d' ' -f2)
cp "$WORK/langgraph-readme.mjs" "$FOLDER/readme-block.mjs"
"$BIN" serve --listen 127.0.0.1:50051 --admin-listen 127.0.0.1:0 --database "sqlite://$WORK/block.db" \
  > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
OUT=$(node "$FOLDER/readme-block.mjs" 2>&1) || true
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
[ "$OUT" = "you said: hi" ] \
  || { echo "$OUT"; cat "$WORK/server.log"; echo "README LangGraph.js js block printed '$OUT'" >&2; exit 1; }
echo "README LangGraph.js example: ok (the example file and the README's block both print 'you said: hi')"
