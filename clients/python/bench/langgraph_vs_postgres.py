"""Benchmark: CheckpointdSaver against LangGraph's PostgresSaver, and checkpointd's native Save
against a raw psycopg INSERT, on the same Postgres, in one run, alternating, one client.

    python bench/langgraph_vs_postgres.py --checkpointd target/release/checkpointd \
        --database postgres://postgres@127.0.0.1:5432/test --steps 1000

The agent: STEPS steps, its `messages` list growing by two messages (a question of about 25
words and an answer of about 90) a step, a checkpoint after every step, then a read of the latest checkpoint (get_tuple). Each
side gets its own schema in the database (dropped and created afresh). The savers see the same
checkpoints; within each step the order of the sides alternates. Bytes stored are
pg_total_relation_size summed over each schema's tables (indexes and TOAST included).

Native comparison: `Client.save` of the same agent (state as JSON, the step's two new messages,
a client checksum) against the same data written with psycopg, once as an application without
an append-only log would (one INSERT of the whole state, history included), and once with the
same append-only layout (one INSERT of the state plus one of the new messages, in one
transaction). Reads: LoadLatest with the whole history against SELECTs of the same.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, Iterator

import psycopg
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres import PostgresSaver

from checkpointd import Client
from checkpointd.checksum import MessageChain, ToolChain, checkpoint_checksum
from checkpointd.langgraph import CheckpointdSaver

WORDS = (
    "order shipping status carrier warehouse delivery tracking expected business days regional "
    "sorting centre customer refund invoice address package label weight dispatch arrival "
    "delay weather route driver signature receipt return policy support ticket update note "
    "the a of to and in is it for on with as at by from that this will be can please thanks"
).split()


def text(rng: random.Random, words: int) -> str:
    """Prose-like text: words drawn from a small vocabulary, so it compresses about as well as
    real chat text does (TOAST compresses the stored values)."""
    return " ".join(rng.choice(WORDS) for _ in range(words))


def messages_for(i: int) -> list[Any]:
    rng = random.Random(i)
    return [
        HumanMessage(f"[{i}] " + text(rng, 25), id=f"q-{i}"),
        AIMessage(f"[{i}] " + text(rng, 90), id=f"a-{i}"),
    ]


def raw_messages_for(i: int) -> list[dict[str, str]]:
    return [{"role": "user" if m.type == "human" else "assistant", "content": str(m.content)} for m in messages_for(i)]


class Timings:
    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.samples.setdefault(name, []).append(time.perf_counter() - start)

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


def bench_savers(args: argparse.Namespace, target: str, timings: Timings) -> None:
    thread = f"bench-{uuid.uuid4().hex[:8]}"
    pg_conn = psycopg.connect(
        with_schema(args.database, "bench_lg_postgres"), autocommit=True, prepare_threshold=0,
        row_factory=psycopg.rows.dict_row,
    )
    postgres = PostgresSaver(pg_conn)
    postgres.setup()
    ours = CheckpointdSaver(target)
    sides: dict[str, Any] = {"checkpointd": ours, "postgres": postgres}
    configs = {name: {"configurable": {"thread_id": thread, "checkpoint_ns": ""}} for name in sides}
    history: list[Any] = []
    version: str | None = None
    for i in range(1, args.steps + 1):
        history = history + messages_for(i)
        version = ours.get_next_version(version, None)
        checkpoint = empty_checkpoint()
        checkpoint["id"] = str(uuid6(clock_seq=-1))
        checkpoint["channel_values"] = {"messages": history}
        checkpoint["channel_versions"] = {"messages": version}
        checkpoint["versions_seen"] = {"agent": {"messages": version}}
        metadata = {"source": "loop", "step": i, "parents": {}}
        order = list(sides) if i % 2 else list(reversed(sides))
        for name in order:
            with timings.time(f"{name}.put"):
                configs[name] = sides[name].put(configs[name], checkpoint, metadata, {"messages": version})
        for name in order:
            latest = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            with timings.time(f"{name}.get_tuple"):
                got = sides[name].get_tuple(latest)
            assert got is not None and len(got.checkpoint["channel_values"]["messages"]) == 2 * i
        if i % args.cold_every == 0:
            # A new process resuming the thread: no log prefix held.
            with CheckpointdSaver(target) as cold:
                with timings.time("checkpointd.get_tuple (cold)"):
                    got = cold.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            assert got is not None and len(got.checkpoint["channel_values"]["messages"]) == 2 * i
    ours.close()
    pg_conn.close()


RAW_SCHEMA_SQL = """
CREATE TABLE full_state (run_id text NOT NULL, step bigint NOT NULL, state jsonb NOT NULL,
  PRIMARY KEY (run_id, step));
CREATE TABLE append_state (run_id text NOT NULL, step bigint NOT NULL, state jsonb NOT NULL,
  message_count bigint NOT NULL, PRIMARY KEY (run_id, step));
CREATE TABLE append_messages (run_id text NOT NULL, position bigint NOT NULL, role text NOT NULL,
  content bytea NOT NULL, PRIMARY KEY (run_id, position));
"""


def bench_native(args: argparse.Namespace, target: str, timings: Timings) -> None:
    run = f"native-{uuid.uuid4().hex[:8]}"
    raw = psycopg.connect(with_schema(args.database, "bench_raw"), autocommit=True, prepare_threshold=0)
    for statement in RAW_SCHEMA_SQL.split(";"):
        if statement.strip():
            raw.execute(statement)
    client = Client(target)
    chain = MessageChain()
    history: list[dict[str, str]] = []
    for i in range(1, args.steps + 1):
        new = raw_messages_for(i)
        offset = len(history)
        history = history + new
        state = json.dumps({"step": i, "pending": None, "plan": ["look up", "answer"]}).encode()
        encoded = [(m["role"], m["content"].encode()) for m in new]

        def native_save() -> None:
            nonlocal chain
            after = chain.extend(encoded)
            checksum = checkpoint_checksum(
                run_id=run, step=i, content_type="application/json", state=state,
                metadata={}, messages=after, tools=ToolChain(),
            )
            client.save(
                run_id=run, step=i, content_type="application/json", state=state,
                messages=[{"role": r, "content": c} for r, c in encoded],
                message_offset=offset, checksum=checksum,
            )
            chain = after

        def raw_full() -> None:
            full = json.dumps({"step": i, "pending": None, "plan": ["look up", "answer"], "messages": history})
            raw.execute("INSERT INTO full_state VALUES (%s, %s, %s)", (run, i, full))

        def raw_append() -> None:
            with raw.transaction():
                raw.execute("INSERT INTO append_state VALUES (%s, %s, %s, %s)", (run, i, state.decode(), len(history)))
                with raw.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO append_messages VALUES (%s, %s, %s, %s)",
                        [(run, offset + k, r, c) for k, (r, c) in enumerate(encoded)],
                    )

        def native_load() -> None:
            got = client.load_latest(run_id=run)
            assert len(got.checkpoint.messages) == 2 * i

        def raw_full_load() -> None:
            row = raw.execute("SELECT state FROM full_state WHERE run_id = %s ORDER BY step DESC LIMIT 1", (run,)).fetchone()
            assert row is not None and len(row[0]["messages"]) == 2 * i

        def raw_append_load() -> None:
            row = raw.execute(
                "SELECT state, message_count FROM append_state WHERE run_id = %s ORDER BY step DESC LIMIT 1", (run,)
            ).fetchone()
            assert row is not None
            rows = raw.execute(
                "SELECT role, content FROM append_messages WHERE run_id = %s AND position < %s ORDER BY position",
                (run, row[1]),
            ).fetchall()
            assert len(rows) == 2 * i

        writes: list[tuple[str, Callable[[], None]]] = [
            ("native.save", native_save), ("raw.insert (full state)", raw_full), ("raw.insert (append-only)", raw_append),
        ]
        reads: list[tuple[str, Callable[[], None]]] = [
            ("native.load_latest", native_load), ("raw.select (full state)", raw_full_load),
            ("raw.select (append-only)", raw_append_load),
        ]
        if i % 2 == 0:
            writes.reverse()
            reads.reverse()
        for name, fn in writes + reads:
            with timings.time(name):
                fn()
    client.close()
    raw.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpointd", required=True, help="path to the checkpointd binary (release)")
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/test")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--cold-every", type=int, default=50, help="a cold get_tuple every N steps")
    args = parser.parse_args()

    schemas = ("bench_checkpointd", "bench_lg_postgres", "bench_native", "bench_raw")
    for schema in schemas:
        reset_schema(args.database, schema)
    timings = Timings()
    started = time.monotonic()
    with checkpointd_server(args.checkpointd, with_schema(args.database, "bench_checkpointd")) as target:
        bench_savers(args, target, timings)
    with checkpointd_server(args.checkpointd, with_schema(args.database, "bench_native")) as target:
        bench_native(args, target, timings)
    elapsed = time.monotonic() - started
    sizes = {s: schema_bytes(args.database, s) for s in schemas}
    raw_tables = table_bytes(args.database, "bench_raw")
    raw_full = raw_tables.get("full_state", 0)
    raw_append = raw_tables.get("append_state", 0) + raw_tables.get("append_messages", 0)

    print(f"\n{args.steps} steps, two messages a step, one client, alternating ({elapsed:.0f} s)\n")
    print(f"| {'operation':34} | {'p50 ms':>8} | {'p99 ms':>8} |")
    print(f"|{'-' * 36}|{'-' * 10}|{'-' * 10}|")
    for name in timings.samples:
        print(f"| {name:34} | {timings.p50(name):8.2f} | {timings.p(name, 0.99):8.2f} |")
    print()
    for a, b in (
        ("checkpointd.put", "postgres.put"),
        ("checkpointd.get_tuple", "postgres.get_tuple"),
        ("checkpointd.get_tuple (cold)", "postgres.get_tuple"),
        ("native.save", "raw.insert (full state)"),
        ("native.save", "raw.insert (append-only)"),
        ("native.load_latest", "raw.select (full state)"),
        ("native.load_latest", "raw.select (append-only)"),
    ):
        print(f"p50 {a} / {b}: {timings.p50(a) / timings.p50(b):.2f}x")
    print()
    print("bytes stored (pg_total_relation_size summed over each schema's tables):")
    print(f"  CheckpointdSaver (bench_checkpointd):   {sizes['bench_checkpointd']:>12,}")
    print(f"  PostgresSaver (bench_lg_postgres):      {sizes['bench_lg_postgres']:>12,}")
    print(f"  ratio: {sizes['bench_checkpointd'] / sizes['bench_lg_postgres']:.3f}x")
    print(f"  native Save (bench_native):             {sizes['bench_native']:>12,}")
    print(f"  raw INSERT, full state:                 {raw_full:>12,}")
    print(f"  raw INSERT, append-only:                {raw_append:>12,}")
    for schema in schemas:
        print(f"  {schema} tables over 16 KiB: {table_bytes(args.database, schema)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
