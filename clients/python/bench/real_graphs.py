"""Real graphs on CheckpointdSaver against PostgresSaver and AsyncPostgresSaver, in one run, on
the same Postgres, under LangGraph's default durability (no `durability` argument anywhere).

Sections, each alternating the savers' order call by call (or round by round) so they share the
machine's noise: the 500-step chat loop on one thread (invoke p50), the bytes that thread left
in each saver's tables, a cold resume of it (a new process per sample: `get_state` on its 1,000
messages), the short graph per call (model with tool calls -> ToolNode -> Send fan-out, a new
thread per call) with every `put_writes` timed by wrapping the saver's method, and N concurrent
`ainvoke`s of the short graph (throughput) against AsyncPostgresSaver on a pool, with the sync
PostgresSaver under `asyncio.to_thread` beside it. Timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
from common import Timings, schema_bytes, table_bytes, with_schema
from graphs import BRANCHES, chat_graph, chat_input, short_graph, short_input
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from checkpointd.langgraph import CheckpointdSaver

CKPT_SCHEMA = "bench_graph_checkpointd"
PG_SCHEMA = "bench_graph_postgres"
SIDES = ("checkpointd", "postgres")
MEMORY = "memory (reference)"
PG_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def alternate(i: int, sides: tuple[str, ...] = SIDES) -> tuple[str, ...]:
    """The sides in an order that rotates with i (two sides: alternating)."""
    k = i % len(sides)
    return sides[k:] + sides[:k]


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def time_method(saver: Any, method: str, timings: Timings, name: str) -> None:
    """Replaces `saver.method` on the instance by a wrapper that records each call's duration
    (LangGraph looks the method up on the instance, so the graph calls the wrapper)."""
    inner: Callable[..., Any] = getattr(saver, method)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            timings.add(name, time.perf_counter() - start)

    setattr(saver, method, timed)


def chat_loop(savers: dict[str, Any], steps: int, timings: Timings) -> str:
    thread = f"chat-{uuid.uuid4().hex[:8]}"
    graphs = {name: chat_graph(saver) for name, saver in savers.items()}
    for i in range(1, steps + 1):
        for name in alternate(i):
            with timings.time(f"chat invoke: {name}"):
                out = graphs[name].invoke(chat_input(i), config(thread))
            assert len(out["messages"]) == 2 * i, (name, len(out["messages"]))
    return thread


def cold_resume(args: argparse.Namespace, target: str, thread: str, messages: int, timings: Timings) -> None:
    where = {"checkpointd": target, "postgres": with_schema(args.database, PG_SCHEMA)}
    child = str(Path(__file__).with_name("cold_resume.py"))
    for r in range(1, args.cold_runs + 1):
        for name in alternate(r):
            done = subprocess.run(
                [sys.executable, child, name, where[name], thread, str(messages)],
                check=True,
                capture_output=True,
                text=True,
            )
            got = json.loads(done.stdout)
            timings.add(f"cold open + get_state: {name}", (got["open_ms"] + got["get_state_ms"]) / 1000)
            timings.add(f"cold get_state alone: {name}", got["get_state_ms"] / 1000)


def short_calls(savers: dict[str, Any], calls: int, warmup: int, timings: Timings) -> None:
    # InMemorySaver beside them: what LangGraph itself costs per call, the floor of any saver.
    savers = {**savers, MEMORY: InMemorySaver()}
    graphs = {name: short_graph(saver) for name, saver in savers.items()}
    scratch = Timings()
    for name, saver in savers.items():
        time_method(saver, "put_writes", scratch, f"put_writes: {name}")
        time_method(saver, "put", scratch, f"put: {name}")
    for i in range(1, warmup + calls + 1):
        if i == warmup + 1:
            scratch.samples.clear()
        for name in alternate(i, tuple(savers)):
            thread = f"short-{name}-{uuid.uuid4().hex[:8]}"
            before = len(scratch.samples.get(f"put_writes: {name}", []))
            start = time.perf_counter()
            out = graphs[name].invoke(short_input(i), config(thread))
            elapsed = time.perf_counter() - start
            assert len(out["parts"]) == BRANCHES and len(out["messages"]) == 4, (name, out)
            if i > warmup:
                timings.add(f"short invoke: {name}", elapsed)
                writes = scratch.samples.get(f"put_writes: {name}", [])[before:]
                timings.add(f"put_writes per invoke (sum): {name}", sum(writes))
    for key, values in scratch.samples.items():
        timings.samples[key] = values
    for saver in savers.values():
        del saver.put_writes, saver.put  # back to the class's methods


async def concurrent(args: argparse.Namespace, ours: CheckpointdSaver, timings: Timings) -> dict[str, float]:
    """Rounds of N concurrent invocations (different threads) per side; throughput per side."""
    dsn = with_schema(args.database, PG_SCHEMA)
    n = args.concurrency
    apool = AsyncConnectionPool(dsn, min_size=n, max_size=n, kwargs=PG_KWARGS, open=False)
    await apool.open(wait=True)
    spool = ConnectionPool(dsn, min_size=n, max_size=n, kwargs=PG_KWARGS, open=True)
    spool.wait()
    executor = ThreadPoolExecutor(max_workers=n)
    loop = asyncio.get_running_loop()
    graphs = {
        "checkpointd": short_graph(ours),
        "async postgres": short_graph(AsyncPostgresSaver(apool)),
        "postgres (to_thread)": short_graph(PostgresSaver(spool)),
        MEMORY: short_graph(InMemorySaver()),
    }

    async def one(name: str, i: int) -> None:
        thread = f"async-{name[:5]}-{uuid.uuid4().hex[:8]}"
        if name == "postgres (to_thread)":
            out = await loop.run_in_executor(executor, graphs[name].invoke, short_input(i), config(thread))
        else:
            out = await graphs[name].ainvoke(short_input(i), config(thread))
        assert len(out["parts"]) == BRANCHES, (name, out)

    spent = dict.fromkeys(graphs, 0.0)
    sides = tuple(graphs)
    for r in range(args.async_rounds + 1):
        for name in sides[r % len(sides) :] + sides[: r % len(sides)]:
            start = time.perf_counter()
            await asyncio.gather(*(one(name, r * n + k) for k in range(n)))
            if r > 0:  # round 0 warms every side up
                spent[name] += time.perf_counter() - start
                timings.add(f"round of {n}: {name}", time.perf_counter() - start)
    executor.shutdown()
    spool.close()
    await apool.close()
    await ours.aclose()
    return {name: args.async_rounds * n / seconds for name, seconds in spent.items()}


def run(args: argparse.Namespace, target: str) -> None:
    timings = Timings()
    pg_conn = psycopg.connect(with_schema(args.database, PG_SCHEMA), **PG_KWARGS)
    postgres = PostgresSaver(pg_conn)
    postgres.setup()
    ours = CheckpointdSaver(target)
    savers: dict[str, Any] = {"checkpointd": ours, "postgres": postgres}
    started = time.monotonic()
    thread = chat_loop(savers, args.chat_steps, timings)
    chat_s = time.monotonic() - started
    sizes = {
        "checkpointd": schema_bytes(args.database, CKPT_SCHEMA),
        "postgres": schema_bytes(args.database, PG_SCHEMA),
    }
    tables = {s: table_bytes(args.database, s) for s in (CKPT_SCHEMA, PG_SCHEMA)}
    cold_resume(args, target, thread, 2 * args.chat_steps, timings)
    short_calls(savers, args.short_calls, args.warmup, timings)
    throughput = asyncio.run(concurrent(args, ours, timings))
    ours.close()
    pg_conn.close()
    report(args, timings, sizes, tables, throughput, chat_s, time.monotonic() - started)


def ratio_line(label: str, ours: float, theirs: float, target: str, ok: bool) -> str:
    verdict = "met" if ok else "MISSED"
    return (
        f"| {label:44} | {ours:10.2f} | {theirs:10.2f} | {ours / theirs:6.2f}x | {target:8} | {verdict:6} |"
    )


def report(
    args: argparse.Namespace,
    t: Timings,
    sizes: dict[str, int],
    tables: dict[str, dict[str, int]],
    throughput: dict[str, float],
    chat_s: float,
    total_s: float,
) -> None:
    print(f"\nReal graphs, default durability ({total_s:.0f} s; chat loop {chat_s:.0f} s)\n")
    print(f"| {'operation':48} | {'n':>4} | {'p50 ms':>8} | {'p95 ms':>8} |")
    print(f"|{'-' * 50}|{'-' * 6}|{'-' * 10}|{'-' * 10}|")
    for name, values in t.samples.items():
        print(f"| {name:48} | {len(values):4} | {t.p50(name):8.2f} | {t.p(name, 0.95):8.2f} |")
    print("\nthroughput, invocations/s:", ", ".join(f"{k} {v:.1f}" for k, v in throughput.items()))
    print("bytes:", sizes, tables)

    def r(a: str) -> float:
        return t.p50(f"{a}: checkpointd") / t.p50(f"{a}: postgres")

    short_p95 = t.p("short invoke: checkpointd", 0.95) / t.p("short invoke: postgres", 0.95)
    cold_alone = r("cold get_state alone")
    tp = throughput["checkpointd"] / throughput["async postgres"]
    tp_thread = throughput["checkpointd"] / throughput["postgres (to_thread)"]
    head = f"{'ratio checkpointd / PostgresSaver':44} | {'checkpointd':>10} | {'postgres':>10} | {'ratio':>7}"
    print(f"\n| {head} | target   | result |")
    print(f"|{'-' * 46}|{'-' * 12}|{'-' * 12}|{'-' * 9}|{'-' * 10}|{'-' * 8}|")
    rows = [
        ("short graph invoke p50 (ms)", "short invoke", "<= 1.0x", lambda x: x <= 1.0),
        ("put_writes per call p50 (ms)", "put_writes", "<= 1.0x", lambda x: x <= 1.0),
        ("put_writes per invoke, sum p50 (ms)", "put_writes per invoke (sum)", "<= 1.0x", lambda x: x <= 1.0),
        ("chat loop invoke p50 (ms)", "chat invoke", "<= 0.5x", lambda x: x <= 0.5),
        ("cold resume, open + get_state p50 (ms)", "cold open + get_state", "<= 1.0x", lambda x: x <= 1.0),
    ]
    for label, key, target, ok in rows:
        print(ratio_line(label, t.p50(f"{key}: checkpointd"), t.p50(f"{key}: postgres"), target, ok(r(key))))
    print(
        ratio_line(
            f"{args.concurrency} concurrent ainvoke (inv/s) vs Async",
            throughput["checkpointd"],
            throughput["async postgres"],
            ">= 1.5x",
            tp >= 1.5,
        )
    )
    print(
        ratio_line(
            f"bytes, {args.chat_steps}-step chat thread (KiB)",
            sizes["checkpointd"] / 1024,
            sizes["postgres"] / 1024,
            "<= 0.05x",
            sizes["checkpointd"] / sizes["postgres"] <= 0.05,
        )
    )
    print(
        f"\nnot targets: short invoke p95 {short_p95:.2f}x, cold get_state alone {cold_alone:.2f}x, "
        f"throughput vs sync PostgresSaver under to_thread {tp_thread:.2f}x, "
        f"put p50 {r('put'):.2f}x; InMemorySaver (LangGraph alone): short invoke p50 "
        f"{t.p50('short invoke: ' + MEMORY):.2f} ms, {throughput[MEMORY]:.1f} concurrent inv/s"
    )
    print(
        "every checkpointd checkpoint carries a client checksum v1, checked by the server on save "
        "and verified on every read"
    )
    sys.stdout.flush()


def profile(args: argparse.Namespace, target: str) -> None:
    """cProfile of the checkpointd side of the short graph, client process only. LangGraph calls
    the saver from its executor threads as well (put_writes in the background), and cProfile
    sees one thread (and one profiler per thread): each saver call is profiled on its own, in
    its thread, and the profiles are summed."""
    import cProfile
    import pstats
    import threading

    ours = CheckpointdSaver(target)
    graph = short_graph(ours)
    lock = threading.Lock()
    calls: list[cProfile.Profile] = []

    def profiled(method: str) -> None:
        inner = getattr(ours, method)

        def wrapper(*a: Any, **k: Any) -> Any:
            profiler = cProfile.Profile()
            profiler.enable()
            try:
                return inner(*a, **k)
            finally:
                profiler.disable()
                with lock:
                    calls.append(profiler)

        setattr(ours, method, wrapper)

    for i in range(args.warmup):
        graph.invoke(short_input(i), config(f"prof-warm-{uuid.uuid4().hex[:8]}"))
    for method in ("get_tuple", "put", "put_writes"):
        profiled(method)
    for i in range(args.short_calls):
        graph.invoke(short_input(i), config(f"prof-{uuid.uuid4().hex[:8]}"))
    ours.close()
    print(f"== {args.short_calls} short-graph invokes: saver calls summed over {len(calls)} calls ==")
    saver_stats = pstats.Stats(calls[0])
    for extra in calls[1:]:
        saver_stats.add(extra)
    saver_stats.sort_stats("cumulative").print_stats(45)
    saver_stats.sort_stats("tottime").print_stats(25)
