"""Corruption is never silent: a graph whose newest checkpoints are corrupt is told so (a log line
naming the thread and the skipped ids, the fallback on the state's metadata), and under
`on_corrupt="raise"` refuses to run from an older checkpoint. Real graphs, real server, the
corruption made by flipping bytes in the database as a bad disk would."""

from __future__ import annotations

import logging
import operator
from typing import Annotated, Any, TypedDict

import email_agent
import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph

from checkpointd.langgraph import FALLBACK_KEY, CheckpointdSaver, CorruptCheckpoints, _naming


class Steps(TypedDict):
    done: Annotated[list[str], operator.add]


def chain(saver: CheckpointdSaver, length: int = 5) -> Any:
    """START -> n0 -> ... -> n(length-1) -> END, each node appending its name."""
    builder = StateGraph(Steps)
    names = [f"n{i}" for i in range(length)]
    for name in names:
        builder.add_node(name, lambda _state, name=name: {"done": [name]})
    builder.add_edge(START, names[0])
    for a, b in zip(names, names[1:], strict=False):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=saver)


def newest_steps(server: Any, run: str, count: int) -> list[int]:
    rows = server.database.execute(f"SELECT step FROM checkpoints WHERE run_id = '{run}' ORDER BY step DESC")
    return [int(s) for s in rows.split()][:count]


def corrupt_newest(server: Any, thread: str, count: int) -> tuple[list[int], list[str]]:
    """Corrupts the thread's `count` newest checkpoints; (their steps, their LangGraph ids)."""
    run = _naming.run_id(thread, "")
    steps = newest_steps(server, run, count)
    ids = []
    for step in steps:
        ids.append(
            server.database.execute(f"SELECT label FROM checkpoints WHERE run_id = '{run}' AND step = {step}")
        )
        server.database.corrupt_state(run, step)
    return steps, ids


def test_a_fallback_past_corrupt_checkpoints_is_logged_and_on_the_metadata(server, caplog) -> None:
    with CheckpointdSaver(server.target) as saver:
        graph = chain(saver)
        config = {"configurable": {"thread_id": "loud"}}
        graph.invoke({"done": []}, config)
        steps, ids = corrupt_newest(server, "loud", 3)

    with CheckpointdSaver(server.target) as fresh, caplog.at_level(logging.WARNING, "checkpointd.langgraph"):
        state = chain(fresh).get_state(config)
    fallback = state.metadata[FALLBACK_KEY]
    assert fallback["skipped_ids"] == ids and fallback["skipped_steps"] == steps
    # The chain's checkpoints after n4, n3 and n2 (LangGraph's own step numbers).
    assert fallback["skipped_langgraph_steps"] == [5, 4, 3]
    assert fallback["served_id"] == state.config["configurable"]["checkpoint_id"]
    assert state.values["done"] == ["n0", "n1", "n2"][: len(state.values["done"])]
    line = next(r.getMessage() for r in caplog.records if "skipped corrupt checkpoints" in r.getMessage())
    assert "'loud'" in line and all(i in line for i in ids), line


def test_on_corrupt_raise_refuses_to_run_from_an_older_checkpoint(server) -> None:
    config = {"configurable": {"thread_id": "strict"}}
    with CheckpointdSaver(server.target) as saver:
        chain(saver).invoke({"done": []}, config)
        _, ids = corrupt_newest(server, "strict", 2)
    with CheckpointdSaver(server.target, on_corrupt="raise") as strict:
        graph = chain(strict)
        with pytest.raises(CorruptCheckpoints) as raised:
            graph.invoke({"done": []}, config)
    assert raised.value.fallback.skipped_ids == ids
    assert raised.value.reason == "CHECKPOINT_CORRUPT"


def test_every_checkpoint_corrupt_starts_over_and_says_so(server, caplog) -> None:
    config = {"configurable": {"thread_id": "all-bad"}}
    with CheckpointdSaver(server.target) as saver:
        chain(saver, length=2).invoke({"done": []}, config)
        run = _naming.run_id("all-bad", "")
        for step in newest_steps(server, run, 100):
            server.database.corrupt_state(run, step)
    with CheckpointdSaver(server.target) as fresh, caplog.at_level(logging.ERROR, "checkpointd.langgraph"):
        graph = chain(fresh, length=2)
        assert graph.get_state(config).values == {}
        assert graph.invoke({"done": []}, config)["done"] == ["n0", "n1"]
    assert any("starting over" in r.getMessage() for r in caplog.records)
    with CheckpointdSaver(server.target, on_corrupt="raise") as strict:
        for step in newest_steps(server, run, 100):
            server.database.corrupt_state(run, step)
        with pytest.raises(CorruptCheckpoints):
            chain(strict, length=2).get_state(config)


def test_an_unknown_policy_is_refused_at_construction(server) -> None:
    with pytest.raises(ValueError, match="on_corrupt"):
        CheckpointdSaver(server.target, on_corrupt="ignore")  # type: ignore[arg-type]


def test_a_fallback_never_repeats_a_journalled_side_effect(server, tmp_path) -> None:
    """The graph's email went out and the run finished; its three newest checkpoints then rot.
    Run on from the older checkpoint served instead, the tool node runs again, and the email
    tool replays its journalled result rather than sending again."""
    config = {"configurable": {"thread_id": "mail"}}
    with CheckpointdSaver(server.target) as saver:
        graph = email_agent.build(saver, tmp_path, "fail", die_after_effect=False)
        graph.invoke({"messages": [HumanMessage("mail ada her invoice")]}, config)
    assert len((tmp_path / "attempts.log").read_text().splitlines()) == 1
    corrupt_newest(server, "mail", 3)

    with CheckpointdSaver(server.target) as fresh:
        graph = email_agent.build(fresh, tmp_path, "fail", die_after_effect=False)
        served = graph.get_state(config)
        assert FALLBACK_KEY in served.metadata, served
        final = graph.invoke(None, config)
    assert final["messages"][-1].content == "done: sent to ada@example.com"
    assert len((tmp_path / "attempts.log").read_text().splitlines()) == 1
    assert len((tmp_path / "outbox.log").read_text().splitlines()) == 1
