#!/usr/bin/env bash
# Runs the "Five minutes to an authenticated, TLS-protected server" block of docs/security.md
# (the page the README links for security) as written, but for the binary on PATH, in an empty
# directory, and checks what each call answers.
# Usage: .ci/readme_security.sh PATH/TO/checkpointd
set -euo pipefail
BIN_DIR=$(dirname "$(realpath "$1")")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
awk '/^#+ Five minutes to an authenticated, TLS-protected server/ { section = 1 }
     section && /^```sh$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside' docs/security.md > "$WORK/security.sh"
grep -q 'checkpointd serve' "$WORK/security.sh" || { echo "docs/security.md: five-minute path not found" >&2; exit 1; }
echo 'kill $! && wait $! || true' >> "$WORK/security.sh"
OUT="$WORK/out"
(cd "$WORK" && PATH="$BIN_DIR:$PATH" RUST_LOG=warn timeout 120 bash "$WORK/security.sh") > "$OUT" 2>&1 || true
for expected in '^SERVING$' '^RUN +EPOCH' 'UNAUTHENTICATED' 'UnknownIssuer'; do
  grep -Eq "$expected" "$OUT" || { cat "$OUT"; echo "docs/security.md five-minute path: no '$expected'" >&2; exit 1; }
done
echo "docs/security.md five-minute path: ok (TLS, API key, refusals without key and without CA)"
