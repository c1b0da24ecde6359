"""Warm `get_tuple` along a long chat: the benchmark's chat loop (`real_graphs.chat_loop`: the
same graph, LangGraph's default durability, checkpointd and PostgresSaver taking turns) with
every `get_tuple` and `put` of both savers timed, printed per block of steps, so growth with the
conversation's length shows (issue 20: a load costs what it returns, not the run's age).

    python clients/python/bench/chat_get_tuple.py --checkpointd target/release/checkpointd
"""

from __future__ import annotations

import argparse

import psycopg
import real_graphs
from common import Timings, checkpointd_server, reset_schema, with_schema
from langgraph.checkpoint.postgres import PostgresSaver

from checkpointd.langgraph import CheckpointdSaver

SAVERS = ("checkpointd", "postgres")
TIMED = ("get_tuple", "put")


def block_cell(samples: list[float], calls_per_step: int, first: int, steps: int) -> str:
    """p50 / p95 in ms of the calls made during steps [first, first + steps)."""
    window = sorted(samples[first * calls_per_step : (first + steps) * calls_per_step])
    if not window:
        return "-"
    p50 = window[len(window) // 2] * 1000
    p95 = window[min(len(window) - 1, int(0.95 * len(window)))] * 1000
    return f"{p50:7.2f} / {p95:7.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checkpointd", required=True, help="path to the checkpointd binary (release)")
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/test")
    parser.add_argument("--chat-steps", type=int, default=500, help="invocations of the chat loop")
    parser.add_argument("--block", type=int, default=50, help="steps per printed row")
    args = parser.parse_args()

    for schema in (real_graphs.CKPT_SCHEMA, real_graphs.PG_SCHEMA):
        reset_schema(args.database, schema)
    calls = Timings()
    with checkpointd_server(args.checkpointd, with_schema(args.database, real_graphs.CKPT_SCHEMA)) as target:
        with psycopg.connect(
            with_schema(args.database, real_graphs.PG_SCHEMA), **real_graphs.PG_KWARGS
        ) as pg:
            postgres = PostgresSaver(pg)  # type: ignore[arg-type]
            postgres.setup()
            ours = CheckpointdSaver(target)
            for name, saver in zip(SAVERS, (ours, postgres), strict=True):
                for method in TIMED:
                    real_graphs.time_method(saver, method, calls, f"{method}: {name}")
            real_graphs.chat_loop(
                dict(zip(SAVERS, (ours, postgres), strict=True)), args.chat_steps, Timings()
            )
            ours.close()

    for method in TIMED:
        print(f"\n{method} along the chat (p50 / p95 ms)")
        print(f"| steps     | {SAVERS[0]:>17} | {SAVERS[1]:>17} |")
        print("|-----------|-------------------|-------------------|")
        for first in range(0, args.chat_steps, args.block):
            cells = []
            for name in SAVERS:
                samples = calls.samples[f"{method}: {name}"]
                cells.append(block_cell(samples, len(samples) // args.chat_steps, first, args.block))
            print(f"| {first + 1:>3}-{first + args.block:<5} | {cells[0]:>17} | {cells[1]:>17} |")


if __name__ == "__main__":
    main()
