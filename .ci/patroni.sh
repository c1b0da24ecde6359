#!/usr/bin/env bash
# Failover under Patroni (docs/chaos.md): installs Debian's patroni and etcd-server when absent,
# runs tests/patroni/failover_test.py against the given release binary, and removes every
# process and directory it made, however it ends. Fails on any lost save, server restart,
# unfinished task, duplicate side effect or non-retryable error.
#
#   .ci/patroni.sh BINARY [PYTHON]
#
# PYTHON is an interpreter with the checkpointd package installed (default: $CHECKPOINTD_PYTHON,
# else /work/venv/bin/python). Must run as root: the Postgres nodes run as the postgres user.
set -euo pipefail

# Paths are resolved where the caller stands, before the cd to the repository.
BINARY=$(realpath "${1:?usage: .ci/patroni.sh BINARY [PYTHON]}")
PYTHON=${2:-${CHECKPOINTD_PYTHON:-/work/venv/bin/python}}
case "$PYTHON" in */*) PYTHON=$(realpath -s "$PYTHON") ;; esac
cd "$(dirname "$0")/.."
[ -x "$BINARY" ] || { echo "patroni.sh: $BINARY is not an executable" >&2; exit 2; }
"$PYTHON" -c 'import checkpointd' || { echo "patroni.sh: $PYTHON lacks the checkpointd package" >&2; exit 2; }

export DEBIAN_FRONTEND=noninteractive
# Never skip: a machine without the packages installs them, and fails loudly if it cannot.
if ! command -v patroni >/dev/null 2>&1 || ! command -v etcd >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq patroni etcd-server >/dev/null
fi
# Patroni speaks etcd's v3 API (the etcd3 section) through urllib3 alone; python3-etcd, which
# its v2 section needs, is not a dependency of Debian's package.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null

WORKDIR=$(mktemp -d /tmp/cpd-patroni.XXXXXX)
TEST_PID=
cleanup() {
  local rc=$?
  # The test stops what it started; this is for a test that was killed or crashed. Every
  # process it spawned wrote its pid to $WORKDIR/pids, and each postmaster is named by its
  # data directory's postmaster.pid: kill those, by id, nothing else.
  if [ -n "$TEST_PID" ] && kill -0 "$TEST_PID" 2>/dev/null; then
    kill "$TEST_PID" 2>/dev/null || true
    sleep 2
  fi
  if [ -f "$WORKDIR/pids" ]; then
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$WORKDIR/pids"
  fi
  for pidfile in "$WORKDIR"/node*/data/postmaster.pid; do
    [ -f "$pidfile" ] && kill -9 "$(head -n 1 "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$WORKDIR"
  exit "$rc"
}
trap cleanup EXIT INT TERM

# A log of the run stays only as the test's output: the work directory goes with the trap.
"$PYTHON" tests/patroni/failover_test.py --binary "$BINARY" --workdir "$WORKDIR" &
TEST_PID=$!
wait "$TEST_PID"
