"""A LangGraph process for the "loud on every read" tests:
`python rot_reader.py TARGET THREAD DIR MODE`.

The graph plans three deliveries and sends each to its own task (`Send`); each delivery is an
`@exactly_once` function that appends to DIR/effects.log, then `collect` closes the turn.
MODE `run` invokes the graph from the start. MODE `read` is what a new process does with a
thread whose newest checkpoints rotted: it reads the thread with a warning saver and then
tries to run it with a raising one, and prints what it saw as JSON (the fallback metadata, the
WARNING lines of `checkpointd.langgraph`, and whether the raising saver refused to read and to
invoke). MODE `finish` runs the thread on from what the warning saver serves.
"""

from __future__ import annotations

import json
import logging
import operator
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from checkpointd.langgraph import FALLBACK_KEY, CheckpointdSaver, CorruptCheckpoints, exactly_once

BRANCHES = 3


class State(TypedDict, total=False):
    delivered: Annotated[list[str], operator.add]
    closed: bool


def build(saver: CheckpointdSaver, effects: Path) -> Any:
    @exactly_once
    def deliver(n: int) -> str:
        with effects.open("a") as out:
            out.write(f"delivery-{n}\n")
        return f"delivered {n}"

    def plan(state: State) -> dict[str, Any]:
        return {}

    def fan_out(state: State) -> list[Send]:
        return [Send("branch", {"n": n}) for n in range(BRANCHES)]

    def branch(task: dict[str, Any]) -> dict[str, Any]:
        return {"delivered": [deliver(task["n"])]}

    def collect(state: State) -> dict[str, Any]:
        return {"closed": True}

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("branch", branch)
    builder.add_node("collect", collect)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["branch"])
    builder.add_edge("branch", "collect")
    builder.add_edge("collect", END)
    return builder.compile(checkpointer=saver)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def main(target: str, thread: str, root: Path, mode: str) -> None:
    effects = root / "effects.log"
    config = {"configurable": {"thread_id": thread}}
    if mode in ("run", "finish"):
        with CheckpointdSaver(target) as saver:
            final = build(saver, effects).invoke({"delivered": []} if mode == "run" else None, config)
        print(json.dumps({"delivered": sorted(final["delivered"]), "closed": final.get("closed", False)}))
        return
    lines = Lines()
    logging.getLogger("checkpointd.langgraph").addHandler(lines)
    with CheckpointdSaver(target) as saver:
        state = build(saver, effects).get_state(config)
    outcome: dict[str, Any] = {"fallback": state.metadata.get(FALLBACK_KEY), "warnings": list(lines.lines)}
    with CheckpointdSaver(target, on_corrupt="raise") as strict:
        graph = build(strict, effects)
        calls = {"get_state": lambda: graph.get_state(config), "invoke": lambda: graph.invoke(None, config)}
        for what, call in calls.items():
            try:
                call()
                outcome[f"raised_{what}"] = None
            except CorruptCheckpoints as error:
                outcome[f"raised_{what}"] = error.fallback.skipped_ids
    print(json.dumps(outcome))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4])
