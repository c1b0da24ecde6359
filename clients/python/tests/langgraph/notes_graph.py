"""A one-node graph that appends who wrote: the exclusive-writing tests run it from two processes
(`python notes_graph.py TARGET THREAD WHO EXCLUSIVE` takes one turn and exits)."""

from __future__ import annotations

import operator
import sys
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph

from checkpointd.langgraph import CheckpointdSaver


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]


def build(saver: CheckpointdSaver, who: str) -> Any:
    builder = StateGraph(Notes)
    builder.add_node("write", lambda _state: {"notes": [who]})
    builder.add_edge(START, "write")
    builder.add_edge("write", END)
    return builder.compile(checkpointer=saver)


if __name__ == "__main__":
    target, thread, who, exclusive = sys.argv[1:5]
    with CheckpointdSaver(target, exclusive=exclusive == "exclusive") as saver:
        build(saver, who).invoke({"notes": []}, {"configurable": {"thread_id": thread}})
