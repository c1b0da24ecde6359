"""Scenarios that drive the graphs of graphs.py and reduce what a user can observe to plain data,
so a run on CheckpointdSaver compares equal to the same run on InMemorySaver.

What is compared: the values each invoke or stream returned, `get_state` (values, `next`, each
task's name, error and interrupts, a subgraph task's own state, pending interrupts) and the whole
`get_state_history` (its length, order, values, `next`, metadata `step`/`source`, parent links),
and how often each node ran. What is not: checkpoint ids, task ids, interrupt ids, message ids
and timestamps, which each saver or run mints afresh.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import Database, Server, checkpointd_bin, database_url, psql
from graphs import (
    Calls,
    FlakyError,
    Graph,
    approval,
    chat_with_tools,
    failing_branch,
    fan_out,
    fan_out_then_approval,
    linear,
    subgraph_with_interrupt,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Interrupt, StateSnapshot

APIS = ("invoke", "stream", "ainvoke", "astream")
DURABILITIES = ("sync", "async", "exit")


@contextmanager
def serve(kind: str, tmp: Path) -> Iterator[Server]:
    """One `checkpointd serve` on a fresh SQLite file or Postgres schema, as conftest's `server`
    fixture starts it, for a whole module: every scenario uses threads of its own."""
    schema = ""
    if kind == "sqlite":
        path = tmp / "checkpointd.db"
        database = Database("sqlite", f"sqlite://{path}", sqlite_path=path)
    else:
        schema = f"py_{uuid.uuid4().hex[:16]}"
        psql(f"CREATE SCHEMA {schema}")
        base = database_url()
        separator = "&" if "?" in base else "?"
        url = f"{base}{separator}options=-csearch_path%3D{schema}"
        database = Database("postgres", url, schema=schema)
    running = Server(checkpointd_bin(), database, [], tmp / "server.log")
    try:
        yield running
    finally:
        running.stop()
        if schema:
            psql(f"DROP SCHEMA {schema} CASCADE")


class Api:
    """One of LangGraph's four ways to run a graph. The async ones also read and update state
    with the `a...` methods, on one event loop kept for the Api's life (a saver built on an
    asyncio channel is bound to the loop it first ran on)."""

    def __init__(self, name: str, durability: str | None) -> None:
        assert name in APIS, name
        self.name = name
        # None: LangGraph's default, the way a user who never heard of durability runs a graph.
        self.options = {} if durability is None else {"durability": durability}
        self._loop = asyncio.new_event_loop() if name.startswith("a") else None

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()

    def _await(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        assert self._loop is not None
        return self._loop.run_until_complete(coroutine)

    def run(self, graph: Graph, graph_input: Any, config: dict[str, Any]) -> Any:
        """What the call returned: the final values (invoke) or every values chunk (stream)."""
        if self.name == "invoke":
            return plain(graph.invoke(graph_input, config, **self.options))
        if self.name == "stream":
            return plain(list(graph.stream(graph_input, config, stream_mode="values", **self.options)))
        if self.name == "ainvoke":
            return plain(self._await(graph.ainvoke(graph_input, config, **self.options)))

        async def chunks() -> list[Any]:
            stream = graph.astream(graph_input, config, stream_mode="values", **self.options)
            return [chunk async for chunk in stream]

        return plain(self._await(chunks()))

    def state(self, graph: Graph, config: dict[str, Any], subgraphs: bool = False) -> StateSnapshot:
        if self._loop is None:
            return graph.get_state(config, subgraphs=subgraphs)
        return self._await(graph.aget_state(config, subgraphs=subgraphs))

    def history(self, graph: Graph, config: dict[str, Any]) -> list[StateSnapshot]:
        if self._loop is None:
            return list(graph.get_state_history(config))

        async def collect() -> list[StateSnapshot]:
            return [snapshot async for snapshot in graph.aget_state_history(config)]

        return self._await(collect())

    def update(self, graph: Graph, config: dict[str, Any], values: Any, as_node: str) -> dict[str, Any]:
        if self._loop is None:
            return graph.update_state(config, values, as_node=as_node)
        return self._await(graph.aupdate_state(config, values, as_node=as_node))


def plain(value: Any) -> Any:
    """`value` without the ids a saver or run mints: messages become their type, content, tool
    calls and tool call id; interrupts their value; tuples lists."""
    if isinstance(value, BaseMessage):
        shown: list[Any] = [value.type, value.content]
        if isinstance(value, AIMessage):
            shown.append([(c["name"], c["args"], c["id"]) for c in value.tool_calls])
        if isinstance(value, ToolMessage):
            shown.append(value.tool_call_id)
        return shown
    if isinstance(value, Interrupt):
        return {"interrupt": plain(value.value)}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def snapshot(state: StateSnapshot) -> dict[str, Any]:
    """A state as `get_state` shows it, a subgraph task's own state included."""
    tasks = []
    for task in state.tasks:
        # LangGraph hands a stored error back as its repr string; a live one is an exception.
        error = task.error if task.error is None or isinstance(task.error, str) else repr(task.error)
        child = snapshot(task.state) if isinstance(task.state, StateSnapshot) else None
        tasks.append(
            {"name": task.name, "error": error, "interrupts": plain(task.interrupts), "state": child}
        )
    metadata = state.metadata or {}
    return {
        "values": plain(state.values),
        "next": list(state.next),
        "step": metadata.get("step"),
        "source": metadata.get("source"),
        "tasks": tasks,
        "interrupts": plain(state.interrupts),
    }


def history(api: Api, graph: Graph, config: dict[str, Any]) -> list[dict[str, Any]]:
    """The thread's history, newest first, each entry's parent given as its index in the list."""
    states = api.history(graph, config)
    index = {s.config["configurable"]["checkpoint_id"]: i for i, s in enumerate(states)}
    entries = []
    for state in states:
        parent = state.parent_config["configurable"]["checkpoint_id"] if state.parent_config else None
        entries.append({**snapshot(state), "parent": index.get(parent, parent and "missing")})
    return entries


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"graph-{uuid.uuid4().hex}"}}


Scenario = Callable[[Api, BaseCheckpointSaver[Any]], dict[str, Any]]


def tool_loop(api: Api, saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    calls = Calls()
    graph, config = chat_with_tools(saver, calls), thread()
    returned = api.run(graph, {"messages": [("user", "add some numbers")]}, config)
    return {
        "returned": returned,
        "state": snapshot(api.state(graph, config)),
        "history": history(api, graph, config),
        "calls": dict(calls.counts),
    }


def interrupt_then_resume(api: Api, saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """The thread must show the pending interrupt after the first run; the resume completes."""
    calls = Calls()
    graph, config = approval(saver, calls), thread()
    first = api.run(graph, {"request": "a refund"}, config)
    waiting = snapshot(api.state(graph, config))
    resumed = api.run(graph, Command(resume="yes"), config)
    return {
        "first": first,
        "waiting": waiting,
        "resumed": resumed,
        "done": snapshot(api.state(graph, config)),
        "history": history(api, graph, config),
        "calls": dict(calls.counts),
    }


def subgraph_interrupt_then_resume(api: Api, saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    calls = Calls()
    graph, config = subgraph_with_interrupt(saver, calls), thread()
    first = api.run(graph, {"request": "a refund"}, config)
    waiting = snapshot(api.state(graph, config, subgraphs=True))
    resumed = api.run(graph, Command(resume="approved"), config)
    return {
        "first": first,
        "waiting": waiting,
        "resumed": resumed,
        "done": snapshot(api.state(graph, config, subgraphs=True)),
        "history": history(api, graph, config),
        "calls": dict(calls.counts),
    }


def send_fan_out(api: Api, saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    calls = Calls()
    graph, config = fan_out(saver, calls), thread()
    returned = api.run(graph, {"results": []}, config)
    return {
        "returned": returned,
        "state": snapshot(api.state(graph, config)),
        "history": history(api, graph, config),
        "calls": dict(calls.counts),
    }


def fork_with_update_state(api: Api, saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """Runs a -> b -> c, then forks from the checkpoint before b with an edit (as if `a` had
    written it) and runs on from the fork; the original branch stays readable. Durability "exit"
    keeps no checkpoint before b, so there the fork is from the oldest one kept."""
    calls = Calls()
    graph, config = linear(saver, calls), thread()
    api.run(graph, {"trail": ["start"]}, config)
    before = history(api, graph, config)
    states = api.history(graph, config)
    old = next((s for s in states if list(s.next) == ["b"]), states[-1])
    fork = api.update(graph, old.config, {"trail": ["edited"]}, as_node="a")
    forked = snapshot(api.state(graph, fork))
    continued = api.run(graph, None, fork)
    return {
        "before": before,
        "forked": forked,
        "continued": continued,
        "old_branch": snapshot(api.state(graph, old.config)),
        "latest": snapshot(api.state(graph, config)),
        "history": history(api, graph, config),
        "calls": dict(calls.counts),
    }


def failure_then_retry(api: Api, saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """The first run fails in `flaky`; the thread shows the failed task; re-invoked with None it
    runs `flaky` again (and only it) and completes."""
    calls = Calls()
    graph, config = failing_branch(saver, calls), thread()
    try:
        api.run(graph, {"trail": []}, config)
    except FlakyError as error:
        raised = str(error)
    else:
        raised = "nothing"
    failed = snapshot(api.state(graph, config))
    retried = api.run(graph, None, config)
    return {
        "raised": raised,
        "failed": failed,
        "retried": retried,
        "done": snapshot(api.state(graph, config)),
        "history": history(api, graph, config),
        "calls": dict(calls.counts),
    }


def fan_out_approval_round(api: Api, saver: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """The repeated-run unit: fan out, stop at the approval with the interrupt pending, resume."""
    calls = Calls()
    graph, config = fan_out_then_approval(saver, calls), thread()
    first = api.run(graph, {"results": []}, config)
    waiting = snapshot(api.state(graph, config))
    resumed = api.run(graph, Command(resume="yes"), config)
    return {
        "first": first,
        "waiting": waiting,
        "resumed": resumed,
        "done": snapshot(api.state(graph, config)),
        "history_length": len(api.history(graph, config)),
        "calls": dict(calls.counts),
    }


SCENARIOS: dict[str, Scenario] = {
    "tool_loop": tool_loop,
    "interrupt_then_resume": interrupt_then_resume,
    "subgraph_interrupt_then_resume": subgraph_interrupt_then_resume,
    "send_fan_out": send_fan_out,
    "fork_with_update_state": fork_with_update_state,
    "failure_then_retry": failure_then_retry,
}
