#!/bin/sh
# Starts two PgBouncers in front of the test Postgres, for the pooler tests: one in transaction
# mode (the setting that breaks named prepared statements and session state) and one in session
# mode, each with a server pool of 4. Idempotent: an instance already answering on its port is
# left alone. Prints the two URLs as shell exports for the tests:
#   TEST_PGBOUNCER_TRANSACTION_URL, TEST_PGBOUNCER_SESSION_URL
#
# Settings (environment): PGBOUNCER_UPSTREAM_HOST/PORT (127.0.0.1:5432), PGBOUNCER_DATABASE
# (test), PGBOUNCER_USER (postgres: who Postgres sees; auth is `any`, so clients need no
# password), PGBOUNCER_TRANSACTION_PORT (6432), PGBOUNCER_SESSION_PORT (6433), PGBOUNCER_DIR
# (/tmp/checkpointd-pgbouncer: configs, logs, pid files).
set -eu

upstream_host=${PGBOUNCER_UPSTREAM_HOST:-127.0.0.1}
upstream_port=${PGBOUNCER_UPSTREAM_PORT:-5432}
database=${PGBOUNCER_DATABASE:-test}
server_user=${PGBOUNCER_USER:-postgres}
transaction_port=${PGBOUNCER_TRANSACTION_PORT:-6432}
session_port=${PGBOUNCER_SESSION_PORT:-6433}
dir=${PGBOUNCER_DIR:-/tmp/checkpointd-pgbouncer}

bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
if [ ! -x "$bin" ]; then
    echo "pgbouncer.sh: pgbouncer is not installed (apt-get install -y pgbouncer)" >&2
    exit 1
fi

# PgBouncer refuses to run as root; it then drops to the server user (or `nobody`).
run_as=""
if [ "$(id -u)" = 0 ]; then
    if id "$server_user" >/dev/null 2>&1; then run_as=$server_user; else run_as=nobody; fi
fi

mkdir -p "$dir"
[ -z "$run_as" ] || chown "$run_as" "$dir"

answering() {
    # Bash-free port probe: pgbouncer's own pid file and a live process.
    [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

start() {
    mode=$1
    port=$2
    ini=$dir/$mode.ini
    pid=$dir/$mode.pid
    if answering "$pid"; then
        return 0
    fi
    # `any` auth: every client logs in as the server user named on the database line, with
    # no password; test-only, listening on loopback. `* =` routes any database name through.
    cat >"$ini" <<INI
[databases]
* = host=$upstream_host port=$upstream_port user=$server_user

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = any
pool_mode = $mode
default_pool_size = 4
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 1000
max_db_connections = 0
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits
logfile = $dir/$mode.log
pidfile = $pid
admin_users = $server_user
INI
    [ -z "$run_as" ] || chown "$run_as" "$ini"
    if [ -n "$run_as" ]; then
        "$bin" -d -u "$run_as" "$ini"
    else
        "$bin" -d "$ini"
    fi
    # Daemonized: wait for the pid file, so a caller's first connection finds it listening.
    i=0
    while ! answering "$pid"; do
        i=$((i + 1))
        if [ "$i" -gt 50 ]; then
            echo "pgbouncer.sh: $mode pooler did not start; see $dir/$mode.log" >&2
            exit 1
        fi
        sleep 0.1
    done
}

start transaction "$transaction_port"
start session "$session_port"

echo "export TEST_PGBOUNCER_TRANSACTION_URL=postgres://$server_user@127.0.0.1:$transaction_port/$database"
echo "export TEST_PGBOUNCER_SESSION_URL=postgres://$server_user@127.0.0.1:$session_port/$database"
