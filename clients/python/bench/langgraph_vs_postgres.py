"""Benchmark: CheckpointdSaver against LangGraph's PostgresSaver, and checkpointd's native Save
against a raw psycopg INSERT, on the same Postgres, in one run, alternating, one client.

    python bench/langgraph_vs_postgres.py --checkpointd target/release/checkpointd \
        --database postgres://postgres@127.0.0.1:5432/test --steps 1000

The agent: STEPS steps, its `messages` list growing by two messages (a question of about 25
words and an answer of about 90) a step, a checkpoint after every step, then a read of the
latest checkpoint (get_tuple). Each side gets its own schema in the database (dropped and
created afresh). The savers see the same checkpoints; within each step the order of the sides
alternates. Bytes stored are pg_total_relation_size summed over each schema's tables (indexes
and TOAST included).

Native comparison: `Client.save` of the same agent (state as JSON, the step's two new messages,
a client checksum) against the same data written with psycopg, once as an application without
an append-only log would (one INSERT of the whole state, history included), and once with the
same append-only layout (one INSERT of the state plus one of the new messages, in one
transaction). Reads: LoadLatest with the whole history against SELECTs of the same.

Real graphs (`--only graphs`, see real_graphs.py): a short tool-calling graph with a Send
fan-out, put_writes inside it, a 500-step chat loop, concurrent ainvokes against
AsyncPostgresSaver, a cold resume in a new process and the bytes of the chat thread, all under
LangGraph's default durability, with ratios against the targets of issue 17. `--only` is
repeatable; the default runs savers, native and graphs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import real_graphs
from common import Timings, checkpointd_server, reset_schema, schema_bytes, table_bytes, with_schema
from graphs import text
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres import PostgresSaver

from checkpointd import Client
from checkpointd.checksum import MessageChain, ToolChain, checkpoint_checksum
from checkpointd.langgraph import CheckpointdSaver


def messages_for(i: int) -> list[Any]:
    rng = random.Random(i)
    return [
        HumanMessage(f"[{i}] " + text(rng, 25), id=f"q-{i}"),
        AIMessage(f"[{i}] " + text(rng, 90), id=f"a-{i}"),
    ]


def raw_messages_for(i: int) -> list[dict[str, str]]:
    return [
        {"role": "user" if m.type == "human" else "assistant", "content": str(m.content)}
        for m in messages_for(i)
    ]


def bench_savers(args: argparse.Namespace, target: str, timings: Timings) -> None:
    thread = f"bench-{uuid.uuid4().hex[:8]}"
    pg_conn = psycopg.connect(
        with_schema(args.database, "bench_lg_postgres"),
        autocommit=True,
        prepare_threshold=0,
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
                run_id=run,
                step=i,
                content_type="application/json",
                state=state,
                metadata={},
                messages=after,
                tools=ToolChain(),
            )
            client.save(
                run_id=run,
                step=i,
                content_type="application/json",
                state=state,
                messages=[{"role": r, "content": c} for r, c in encoded],
                message_offset=offset,
                checksum=checksum,
            )
            chain = after

        def raw_full() -> None:
            full = json.dumps(
                {"step": i, "pending": None, "plan": ["look up", "answer"], "messages": history}
            )
            raw.execute("INSERT INTO full_state VALUES (%s, %s, %s)", (run, i, full))

        def raw_append() -> None:
            with raw.transaction():
                raw.execute(
                    "INSERT INTO append_state VALUES (%s, %s, %s, %s)", (run, i, state.decode(), len(history))
                )
                with raw.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO append_messages VALUES (%s, %s, %s, %s)",
                        [(run, offset + k, r, c) for k, (r, c) in enumerate(encoded)],
                    )

        def native_load() -> None:
            got = client.load_latest(run_id=run)
            assert len(got.checkpoint.messages) == 2 * i

        def raw_full_load() -> None:
            row = raw.execute(
                "SELECT state FROM full_state WHERE run_id = %s ORDER BY step DESC LIMIT 1", (run,)
            ).fetchone()
            assert row is not None and len(row[0]["messages"]) == 2 * i

        def raw_append_load() -> None:
            row = raw.execute(
                "SELECT state, message_count FROM append_state WHERE run_id = %s ORDER BY step DESC LIMIT 1",
                (run,),
            ).fetchone()
            assert row is not None
            rows = raw.execute(
                "SELECT role, content FROM append_messages WHERE run_id = %s AND position < %s "
                "ORDER BY position",
                (run, row[1]),
            ).fetchall()
            assert len(rows) == 2 * i

        writes: list[tuple[str, Callable[[], None]]] = [
            ("native.save", native_save),
            ("raw.insert (full state)", raw_full),
            ("raw.insert (append-only)", raw_append),
        ]
        reads: list[tuple[str, Callable[[], None]]] = [
            ("native.load_latest", native_load),
            ("raw.select (full state)", raw_full_load),
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


MODES = ("savers", "native", "graphs")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checkpointd", required=True, help="path to the checkpointd binary (release)")
    parser.add_argument(
        "--database", default=os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=(*MODES, "profile"),
        help="run only these parts (repeatable); default: savers, native and graphs. "
        "profile: cProfile of the checkpointd short graph, nothing else",
    )
    parser.add_argument("--steps", type=int, default=1000, help="savers and native: steps of the agent")
    parser.add_argument("--cold-every", type=int, default=50, help="savers: a cold get_tuple every N steps")
    parser.add_argument("--chat-steps", type=int, default=500, help="graphs: invocations of the chat loop")
    parser.add_argument(
        "--short-calls", type=int, default=100, help="graphs: short-graph invocations per saver"
    )
    parser.add_argument("--warmup", type=int, default=5, help="graphs: untimed short-graph invocations first")
    parser.add_argument("--concurrency", type=int, default=20, help="graphs: concurrent ainvokes per round")
    parser.add_argument("--async-rounds", type=int, default=10, help="graphs: timed rounds per side")
    parser.add_argument("--cold-runs", type=int, default=7, help="graphs: cold-resume processes per saver")
    args = parser.parse_args()
    modes = args.only or list(MODES)
    if "savers" in modes or "native" in modes:
        savers_and_native(args, modes)
    if "graphs" in modes or "profile" in modes:
        for schema in (real_graphs.CKPT_SCHEMA, real_graphs.PG_SCHEMA):
            reset_schema(args.database, schema)
        database = with_schema(args.database, real_graphs.CKPT_SCHEMA)
        with checkpointd_server(args.checkpointd, database) as target:
            if "graphs" in modes:
                real_graphs.run(args, target)
            if "profile" in modes:
                real_graphs.profile(args, target)


def savers_and_native(args: argparse.Namespace, modes: list[str]) -> None:
    schemas = ("bench_checkpointd", "bench_lg_postgres", "bench_native", "bench_raw")
    for schema in schemas:
        reset_schema(args.database, schema)
    timings = Timings()
    started = time.monotonic()
    if "savers" in modes:
        with checkpointd_server(args.checkpointd, with_schema(args.database, "bench_checkpointd")) as target:
            bench_savers(args, target, timings)
    if "native" in modes:
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
        if a in timings.samples and b in timings.samples:
            print(f"p50 {a} / {b}: {timings.p50(a) / timings.p50(b):.2f}x")
    print()
    if "savers" in modes:
        print("bytes stored (pg_total_relation_size summed over each schema's tables):")
        print(f"  CheckpointdSaver (bench_checkpointd):   {sizes['bench_checkpointd']:>12,}")
        print(f"  PostgresSaver (bench_lg_postgres):      {sizes['bench_lg_postgres']:>12,}")
        print(f"  ratio: {sizes['bench_checkpointd'] / sizes['bench_lg_postgres']:.3f}x")
    if "native" in modes:
        print(f"  native Save (bench_native):             {sizes['bench_native']:>12,}")
        print(f"  raw INSERT, full state:                 {raw_full:>12,}")
        print(f"  raw INSERT, append-only:                {raw_append:>12,}")
    for schema in schemas:
        print(f"  {schema} tables over 16 KiB: {table_bytes(args.database, schema)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
