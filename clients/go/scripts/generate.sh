#!/bin/sh
# Regenerates gen/ from ../../proto with the pinned plugins; commit the result.
set -eu
CLIENT_DIR=$(cd "$(dirname "$0")/.." && pwd)
. "$CLIENT_DIR/scripts/tools.sh"
cd "$CLIENT_DIR"
buf generate --template buf.gen.yaml
echo "generated gen/ from proto/"
