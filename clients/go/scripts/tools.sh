#!/bin/sh
# Sourced by the other scripts: installs the tools pinned in tools/go.mod (protoc-gen-go,
# protoc-gen-go-grpc, staticcheck) into $GO_TOOLS_BIN (default: a folder in the user cache)
# and puts them, and buf from the TypeScript package's node_modules, on PATH.
# Nothing is downloaded but Go modules: no protoc, no remote buf plugins.
GO_TOOLS_BIN=${GO_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/checkpointd-go-tools/bin}
(cd "$CLIENT_DIR/tools" && GOBIN="$GO_TOOLS_BIN" go install tool)
BUF_BIN_DIR="$CLIENT_DIR/../typescript/node_modules/.bin"
if [ ! -x "$BUF_BIN_DIR/buf" ]; then
  echo "no buf at $BUF_BIN_DIR/buf: run \`npm ci\` in clients/typescript first" >&2
  exit 1
fi
PATH="$GO_TOOLS_BIN:$BUF_BIN_DIR:$PATH"
export PATH
