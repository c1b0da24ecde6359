"""Fixtures: a real `checkpointd serve` process on a free port, on SQLite (a temporary file) and
on Postgres (a fresh schema per test), and direct access to its database for corruption tests;
`stores` adds the in-process memory backend to those two for the store scenarios.

The binary is `$CHECKPOINTD_BIN`, else the workspace's target/debug, else target/release build.
Postgres is `$TEST_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test); a test that
needs it fails, loudly, when it is unreachable.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PACKAGE = Path(__file__).resolve().parents[1]
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test"

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stores import MemoryStores, ServerStores  # noqa: E402


def checkpointd_bin() -> str:
    configured = os.environ.get("CHECKPOINTD_BIN")
    if configured:
        if not Path(configured).is_file():
            pytest.fail(f"CHECKPOINTD_BIN={configured} does not exist", pytrace=False)
        return configured
    for profile in ("debug", "release"):
        candidate = REPO / "target" / profile / "checkpointd"
        if candidate.is_file():
            return str(candidate)
    pytest.fail(
        "no checkpointd binary: run `cargo build -p checkpointd-cli` or set CHECKPOINTD_BIN",
        pytrace=False,
    )


class Database:
    """The database behind one test server, reachable without checkpointd."""

    def __init__(self, kind: str, url: str, sqlite_path: Path | None = None, schema: str = "") -> None:
        self.kind = kind
        self.url = url
        self.sqlite_path = sqlite_path
        self.schema = schema

    def execute(self, sql: str) -> str:
        """Runs SQL directly on the backing database; the first column of the rows, one a line."""
        if self.kind == "sqlite":
            assert self.sqlite_path is not None
            with sqlite3.connect(self.sqlite_path, timeout=10) as conn:
                rows = conn.execute(sql).fetchall()
            return "\n".join(str(row[0]) for row in rows)
        return psql(sql, schema=self.schema)

    def corrupt_state(self, run_id: str, step: int) -> None:
        """Flips the first byte of a stored checkpoint's state, as a bad disk would."""
        if self.kind == "sqlite":
            flip = (
                "state = CAST(CASE WHEN length(state) = 0 THEN X'00' ELSE "
                "(CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END) "
                "|| substr(state, 2) END AS BLOB)"
            )
        else:
            flip = (
                "state = CASE WHEN length(state) = 0 THEN '\\x00'::bytea "
                "ELSE set_byte(state, 0, (get_byte(state, 0) + 1) % 256) END"
            )
        self.execute(f"UPDATE checkpoints SET {flip} WHERE run_id = '{run_id}' AND step = {step}")


def database_url() -> str:
    return os.environ.get("TEST_DATABASE_URL", DEFAULT_DATABASE_URL)


def psql(sql: str, *, schema: str = "") -> str:
    if shutil.which("psql") is None:
        pytest.fail("psql is not installed; the Postgres tests need it", pytrace=False)
    env = dict(os.environ)
    if schema:
        env["PGOPTIONS"] = f"-csearch_path={schema}"
    done = subprocess.run(
        ["psql", database_url(), "-v", "ON_ERROR_STOP=1", "-tAq", "-c", sql],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if done.returncode != 0:
        pytest.fail(f"Postgres at {database_url()} refused {sql!r}: {done.stderr.strip()}", pytrace=False)
    return done.stdout.strip()


class Server:
    """A `checkpointd serve` child process on 127.0.0.1 port 0 (or on `listen`)."""

    def __init__(
        self, binary: str, database: Database, extra_args: list[str], log: Path, listen: str = "127.0.0.1:0"
    ) -> None:
        self.binary = binary
        self.database = database
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [
                binary,
                "serve",
                "--listen",
                listen,
                "--admin-listen",
                "127.0.0.1:0",
                "--database",
                database.url,
                *extra_args,
            ],
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )
        assert self.process.stdout is not None
        self.admin_addr = self._address_after(b"checkpointd admin listening on ")
        self.addr = self._address_after(b"checkpointd listening on ")
        self.target = self.addr
        # Keeps the pipe drained so the server never blocks on a full stdout.
        threading.Thread(target=self._drain, daemon=True).start()

    def _address_after(self, prefix: bytes) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith(prefix):
            self.process.kill()
            self.process.wait()
            pytest.fail(f"checkpointd did not start; it printed {line!r} (log: {self._log.name})")
        return line[len(prefix) :].strip().decode()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._log.write(line)

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Runs the operator CLI (`checkpointd ARGS --server http://ADDR`)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHECKPOINTD_")}
        done = subprocess.run(
            [self.binary, *args, "--server", f"http://{self.addr}"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"checkpointd {' '.join(args)} failed: {done.stderr}")
        return done

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


@contextmanager
def fresh_database(kind: str, tmp_path: Path) -> Iterator[Database]:
    """A temporary SQLite file, or a new schema in the test Postgres dropped afterwards."""
    if kind == "sqlite":
        path = tmp_path / "checkpointd.db"
        yield Database("sqlite", f"sqlite://{path}", sqlite_path=path)
        return
    schema = f"py_{uuid.uuid4().hex[:16]}"
    psql(f"CREATE SCHEMA {schema}")
    base = database_url()
    separator = "&" if "?" in base else "?"
    try:
        yield Database("postgres", f"{base}{separator}options=-csearch_path%3D{schema}", schema=schema)
    finally:
        psql(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A fresh database: a temporary SQLite file, or a new schema in the test Postgres."""
    with fresh_database(request.param, tmp_path) as database:
        yield database


@pytest.fixture
def server_args() -> list[str]:
    """Extra `serve` flags; a test overrides this fixture to change them."""
    return []


@pytest.fixture
def server(backend: Database, server_args: list[str], tmp_path: Path) -> Iterator[Server]:
    running = Server(checkpointd_bin(), backend, server_args, tmp_path / "server.log")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(params=["sqlite", "postgres", "memory"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerStores | MemoryStores]:
    """Where a store scenario runs: a server on SQLite or on Postgres, or the in-process
    `MemoryBackend` (`CheckpointStore.in_memory`), which must behave as the server does."""
    if request.param == "memory":
        yield MemoryStores()
        return
    with fresh_database(request.param, tmp_path) as database:
        running = Server(checkpointd_bin(), database, [], tmp_path / "server.log")
        try:
            yield ServerStores(running)
        finally:
            running.stop()
