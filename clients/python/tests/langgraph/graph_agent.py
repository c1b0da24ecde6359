"""A LangGraph agent process for the SIGKILL test: `python graph_agent.py TARGET THREAD DIR`.

A scripted model asks for two tool calls per turn, four turns; each call is its own task (a
`Send`), so the two calls of a turn run in parallel in one super-step and each task's result is
a pending write of that step's checkpoint. The tool appends `call-N` to DIR/effects.log. With
`--block-at N`, call N writes DIR/blocked and hangs before its side effect, until the process
is killed. The graph is resumed with `invoke(None)`; on completion the final state is printed as
JSON. The checkpointer is the only checkpointd-specific line.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Send
from typing_extensions import TypedDict

from checkpointd.langgraph import CheckpointdSaver

TURNS = 4
CALLS_PER_TURN = 2


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def build(saver: CheckpointdSaver, effects: Path, block_at: int | None, blocked: Path) -> Any:
    def agent(state: State) -> dict[str, Any]:
        done = sum(isinstance(m, ToolMessage) for m in state["messages"])
        if done >= TURNS * CALLS_PER_TURN:
            return {"messages": [AIMessage(content=f"finished after {done} calls")]}
        calls = [
            {"name": "append", "args": {"n": n}, "id": f"call-{n}"}
            for n in range(done + 1, done + CALLS_PER_TURN + 1)
        ]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    def route(state: State) -> Any:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return [Send("tool", call) for call in last.tool_calls]
        return END

    def tool(call: dict[str, Any]) -> dict[str, Any]:
        n = call["args"]["n"]
        if n == block_at:
            blocked.write_text(str(n))
            threading.Event().wait()  # hangs here until SIGKILL
        with effects.open("a") as out:
            out.write(f"call-{n}\n")
            out.flush()
            os.fsync(out.fileno())
        return {"messages": [ToolMessage(content=f"appended {n}", tool_call_id=call["id"])]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tool", tool)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tool", END])
    builder.add_edge("tool", "agent")
    return builder.compile(checkpointer=saver)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("thread")
    parser.add_argument("dir", type=Path)
    parser.add_argument("--block-at", type=int)
    args = parser.parse_args()
    saver = CheckpointdSaver(args.target)
    graph = build(saver, args.dir / "effects.log", args.block_at, args.dir / "blocked")
    config = {"configurable": {"thread_id": args.thread}}
    resuming = graph.get_state(config).next != ()
    # durability="sync": each checkpoint is stored before the next step starts.
    if resuming:
        final = graph.invoke(None, config, durability="sync")
    else:
        final = graph.invoke({"messages": [HumanMessage("go")]}, config, durability="sync")
    print(
        json.dumps(
            {
                "resumed": resuming,
                "tool_results": [m.content for m in final["messages"] if isinstance(m, ToolMessage)],
                "last": final["messages"][-1].content,
                "messages": len(final["messages"]),
            }
        )
    )
    saver.close()


if __name__ == "__main__":
    main()
