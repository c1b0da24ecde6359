#!/bin/sh
# Everything CI checks on the Go client, from any folder: gofmt, tidy go.mod files, go vet, staticcheck (pinned in
# tools/go.mod), generated code equal to proto/, and the tests with the race detector against
# a real server ($CHECKPOINTD_BIN; Postgres at $TEST_DATABASE_URL). The nested adapter module eino/
# (its own go.mod, so the core never pulls Eino) gets the same tidy, vet, staticcheck and tests.
set -eu
CLIENT_DIR=$(cd "$(dirname "$0")/.." && pwd)
. "$CLIENT_DIR/scripts/tools.sh"
cd "$CLIENT_DIR"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go mod tidy -diff
(cd tools && go mod tidy -diff)
go vet ./...
staticcheck ./...
"$CLIENT_DIR/scripts/check-generated.sh"
go test -race -count=1 ${GO_TEST_FLAGS:-} ./...
# adk/ and eino/ are nested modules (so the core never pulls ADK or Eino in): tidy, vet,
# staticcheck and the tests of each.
bin=${CHECKPOINTD_BIN:-../../target/release/checkpointd}
case $bin in /*) ;; *) bin=$CLIENT_DIR/$bin ;; esac
for nested in adk eino; do
  (cd "$nested" && go mod tidy -diff && go vet ./... && staticcheck ./... &&
    CHECKPOINTD_BIN=$bin go test -race -count=1 ${GO_TEST_FLAGS:-} ./...)
done
