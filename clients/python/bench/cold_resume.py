"""A new process resuming a chat thread: opens the saver, `get_state`, prints timings as JSON.

    python bench/cold_resume.py checkpointd|postgres TARGET_OR_DSN THREAD EXPECTED_MESSAGES

Imports come first and are not timed (interpreter and import start-up are the same for both
savers); `open_ms` is the saver's construction and first connection, `get_state_ms` the call
until the state is returned."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import psycopg
from graphs import chat_graph
from langgraph.checkpoint.postgres import PostgresSaver

from checkpointd.langgraph import CheckpointdSaver


def main() -> None:
    kind, where, thread, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    started = time.perf_counter()
    closing: Any
    if kind == "checkpointd":
        saver: Any = CheckpointdSaver(where)
        closing = saver
    else:
        closing = psycopg.connect(
            where, autocommit=True, prepare_threshold=0, row_factory=psycopg.rows.dict_row
        )
        saver = PostgresSaver(closing)
    graph = chat_graph(saver)
    opened = time.perf_counter()
    state = graph.get_state({"configurable": {"thread_id": thread}})
    done = time.perf_counter()
    got = len(state.values["messages"])
    closing.close()
    if got != expected:
        raise SystemExit(f"{kind}: {got} messages, expected {expected}")
    print(json.dumps({"open_ms": (opened - started) * 1000, "get_state_ms": (done - opened) * 1000}))


if __name__ == "__main__":
    main()
