#!/bin/sh
# Regenerates the code from ../../proto into a temporary folder and fails when it differs from
# the committed gen/, so the generated code can never drift from the contract.
set -eu
CLIENT_DIR=$(cd "$(dirname "$0")/.." && pwd)
. "$CLIENT_DIR/scripts/tools.sh"
cd "$CLIENT_DIR"
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
buf generate --template buf.gen.yaml --output "$fresh"
if diff -r "$fresh/gen" gen; then
  echo "generated code matches proto/"
else
  echo "gen/ is out of date with proto/: run scripts/generate.sh and commit the result" >&2
  exit 1
fi
