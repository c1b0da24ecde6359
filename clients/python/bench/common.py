"""What the LangGraph benchmarks share: timing samples, schemas on the shared Postgres, their
sizes, and a release checkpointd server on a schema of its own."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg


class Timings:
    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.add(name, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        self.samples.setdefault(name, []).append(seconds)

    def p(self, name: str, q: float) -> float:
        data = sorted(self.samples[name])
        return data[min(len(data) - 1, int(q * len(data)))] * 1000

    def p50(self, name: str) -> float:
        return statistics.median(self.samples[name]) * 1000


def with_schema(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


def reset_schema(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")


def schema_bytes(url: str, schema: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        ).fetchone()
        assert row is not None
        return int(row[0])


def table_bytes(url: str, schema: str) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r' "
            "ORDER BY 2 DESC",
            (schema,),
        ).fetchall()
        return {name: int(size) for name, size in rows if size > 16384}


@contextmanager
def checkpointd_server(binary: str, database: str) -> Iterator[str]:
    process = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--database", database],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    try:
        address = ""
        while not address:
            line = process.stdout.readline()
            if not line:
                raise SystemExit("checkpointd exited before listening")
            if line.startswith(b"checkpointd listening on "):
                address = line.split(b" on ", 1)[1].strip().decode()
        yield address
    finally:
        process.terminate()
        process.wait(timeout=30)
