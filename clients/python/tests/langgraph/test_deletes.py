"""After every deletion LangGraph defines (delete_thread, delete_for_runs of any run, each prune
strategy) a thread reads back what is left and takes new turns, with the saver that deleted and
with a new one, sync and async, on SQLite and Postgres: real graphs (a chat whose messages live
in the run's message log), real servers.

Deleting a thread's newest run used to wedge it: the log still held the deleted checkpoints'
messages, so every save after it failed with "8 conflicting writers in a row"."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from checkpointd.langgraph import CheckpointdSaver

TURNS = ["one", "two", "three"]


def chat(saver: CheckpointdSaver) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"re: {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=saver)


def config(thread: str, run: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if run is not None:
        out["metadata"] = {"run_id": run}
    return out


def texts(values: dict[str, Any]) -> list[str]:
    return [m.content for m in values.get("messages", [])]


def conversation(turns: list[str]) -> list[str]:
    return [text for turn in turns for text in (turn, f"re: {turn}")]


#: deletion -> the turns left after it (of TURNS, taken by runs "r0", "r1", "r2")
DELETIONS: dict[str, list[str]] = {
    "delete_thread": [],
    "delete_for_runs_newest": ["one", "two"],
    "delete_for_runs_middle": TURNS,  # the newest checkpoint holds every message
    "delete_for_runs_oldest": TURNS,
    "delete_for_runs_all": [],
    "prune_keep_latest": TURNS,
    "prune_delete": [],
}


def delete(saver: CheckpointdSaver, how: str, thread: str) -> None:
    runs = {"newest": ["r2"], "middle": ["r1"], "oldest": ["r0"], "all": ["r0", "r1", "r2"]}
    if how == "delete_thread":
        saver.delete_thread(thread)
    elif how.startswith("delete_for_runs_"):
        saver.delete_for_runs([f"{thread}-{r}" for r in runs[how.rsplit("_", 1)[1]]])
    else:
        saver.prune([thread], strategy=how.removeprefix("prune_"))


async def adelete(saver: CheckpointdSaver, how: str, thread: str) -> None:
    runs = {"newest": ["r2"], "middle": ["r1"], "oldest": ["r0"], "all": ["r0", "r1", "r2"]}
    if how == "delete_thread":
        await saver.adelete_thread(thread)
    elif how.startswith("delete_for_runs_"):
        await saver.adelete_for_runs([f"{thread}-{r}" for r in runs[how.rsplit("_", 1)[1]]])
    else:
        await saver.aprune([thread], strategy=how.removeprefix("prune_"))


@pytest.mark.parametrize("how", sorted(DELETIONS))
def test_a_thread_is_written_again_after_every_deletion(server, how: str) -> None:
    thread = f"sync-{how}"
    with CheckpointdSaver(server.target) as saver:
        graph = chat(saver)
        for n, turn in enumerate(TURNS):
            graph.invoke({"messages": [HumanMessage(turn)]}, config(thread, f"{thread}-r{n}"))
        delete(saver, how, thread)
        left = DELETIONS[how]
        assert texts(graph.get_state(config(thread)).values) == conversation(left)
        # The same saver writes on, twice (the second write must not need a repair either).
        graph.invoke({"messages": [HumanMessage("four")]}, config(thread, f"{thread}-r3"))
        graph.invoke({"messages": [HumanMessage("five")]}, config(thread, f"{thread}-r4"))
        assert texts(graph.get_state(config(thread)).values) == conversation([*left, "four", "five"])
    with CheckpointdSaver(server.target) as fresh:
        graph = chat(fresh)
        assert texts(graph.get_state(config(thread)).values) == conversation([*left, "four", "five"])
        graph.invoke({"messages": [HumanMessage("six")]}, config(thread, f"{thread}-r5"))
        assert texts(graph.get_state(config(thread)).values) == conversation([*left, "four", "five", "six"])
        history = list(graph.get_state_history(config(thread)))
        assert history and all(h.config["configurable"]["thread_id"] == thread for h in history)


@pytest.mark.parametrize("how", sorted(DELETIONS))
async def test_a_thread_is_written_again_after_every_deletion_async(server, how: str) -> None:
    thread = f"async-{how}"
    async with CheckpointdSaver(server.target) as saver:
        graph = chat(saver)
        for n, turn in enumerate(TURNS):
            await graph.ainvoke({"messages": [HumanMessage(turn)]}, config(thread, f"{thread}-r{n}"))
        await adelete(saver, how, thread)
        left = DELETIONS[how]
        assert texts((await graph.aget_state(config(thread))).values) == conversation(left)
        await graph.ainvoke({"messages": [HumanMessage("four")]}, config(thread, f"{thread}-r3"))
        assert texts((await graph.aget_state(config(thread))).values) == conversation([*left, "four"])
    async with CheckpointdSaver(server.target) as fresh:
        graph = chat(fresh)
        await graph.ainvoke({"messages": [HumanMessage("five")]}, config(thread, f"{thread}-r4"))
        assert texts((await graph.aget_state(config(thread))).values) == conversation([*left, "four", "five"])


def test_deleting_the_newest_run_from_another_process_leaves_the_thread_writable(server) -> None:
    """One saver writes, another deletes its newest run: the writer's next turn learns the
    shortened thread instead of refusing as a conflicting writer."""
    thread = "two-savers"
    with CheckpointdSaver(server.target) as writer, CheckpointdSaver(server.target) as admin:
        graph = chat(writer)
        for n, turn in enumerate(TURNS):
            graph.invoke({"messages": [HumanMessage(turn)]}, config(thread, f"{thread}-r{n}"))
        admin.delete_for_runs([f"{thread}-r2"])
        graph.invoke({"messages": [HumanMessage("four")]}, config(thread, f"{thread}-r3"))
        assert texts(graph.get_state(config(thread)).values) == conversation(["one", "two", "four"])


def test_delete_for_runs_by_a_run_id_langgraph_never_recorded_says_where_it_must_be(server, caplog) -> None:
    """`config["run_id"]` is LangChain's callback run id: LangGraph does not copy it into the
    checkpoint's metadata, so deleting by it deletes nothing, and says so."""
    thread = "top-level-run-id"
    run_id = uuid.uuid4()
    with CheckpointdSaver(server.target) as saver:
        graph = chat(saver)
        graph.invoke({"messages": [HumanMessage("hi")]}, {**config(thread), "run_id": run_id})
        with caplog.at_level(logging.WARNING, "checkpointd.langgraph"):
            saver.delete_for_runs([str(run_id)])
        assert texts(graph.get_state(config(thread)).values) == conversation(["hi"])
    line = next(r.getMessage() for r in caplog.records if "delete_for_runs" in r.getMessage())
    assert str(run_id) in line and "config['metadata']['run_id']" in line, line
