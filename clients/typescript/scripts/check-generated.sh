#!/bin/sh
# Regenerates the code from ../../proto into a temporary folder and fails when it differs from
# the committed src/gen/, so the generated code can never drift from the contract.
set -eu
cd "$(dirname "$0")/.."
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
buf generate --template buf.gen.yaml --output "$fresh"
if diff -r "$fresh/src/gen" src/gen; then
  echo "generated code matches proto/"
else
  echo "src/gen/ is out of date with proto/: run \`npm run generate\` and commit the result" >&2
  exit 1
fi
