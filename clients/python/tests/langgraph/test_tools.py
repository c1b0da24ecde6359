"""Exactly-once tools in real graphs on a real server: a completed call is replayed from the
journal instead of being made again (also when the graph replays from an older checkpoint,
with new checkpoint and task ids, as a corruption fallback does); an in-doubt call in a plain
node is retried with its key, failed by policy, or failed by a human answering `ask`; calls
named by a key function take effect once per key; a checkpointer other than checkpointd is
refused.
"""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from email_agent import build
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from checkpointd import Client
from checkpointd.langgraph import (
    IN_DOUBT_INTERRUPT,
    CheckpointdSaver,
    ToolCallInDoubt,
    _naming,
    exactly_once,
    idempotency_key,
)

#: LangGraph's default durability ("async"): journal writes must hold under it.
DURABILITY = "async"


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_completed_call_is_replayed_when_the_graph_reruns_it_from_an_older_checkpoint(
    server: Any, tmp_path: Path
) -> None:
    config = {"configurable": {"thread_id": "email/replay"}}
    with CheckpointdSaver(server.target) as saver:
        graph = build(saver, tmp_path, "fail", die_after_effect=False)
        first = graph.invoke({"messages": [HumanMessage("mail ada")]}, config, durability=DURABILITY)
        assert first["messages"][-1].content == "done: sent to ada@example.com"
        assert len(lines(tmp_path / "attempts.log")) == 1

        # Run the tool node again from the checkpoint before it: new checkpoint and task ids,
        # the same call. The journalled result comes back; the provider is not called.
        before_tools = next(s for s in graph.get_state_history(config) if s.next == ("tools",))
        again = graph.invoke(None, before_tools.config, durability=DURABILITY)

    assert again["messages"][-1].content == "done: sent to ada@example.com"
    assert again["messages"][-2].tool_call_id == "call-email-1"
    assert len(lines(tmp_path / "attempts.log")) == 1


def test_ainvoke_runs_a_tool_once_and_replays_it(server: Any, tmp_path: Path) -> None:
    config = {"configurable": {"thread_id": "email/async"}}

    async def run() -> None:
        with CheckpointdSaver(server.target) as saver:
            graph = build(saver, tmp_path, "fail", die_after_effect=False)
            first = await graph.ainvoke(
                {"messages": [HumanMessage("mail ada")]}, config, durability=DURABILITY
            )
            assert first["messages"][-1].content == "done: sent to ada@example.com"
            before_tools = next(s for s in graph.get_state_history(config) if s.next == ("tools",))
            await graph.ainvoke(None, before_tools.config, durability=DURABILITY)

    asyncio.run(run())
    assert len(lines(tmp_path / "attempts.log")) == 1


class Ledger(TypedDict):
    log: Annotated[list[str], operator.add]


def charging_graph(saver: Any, charges: list[str], crash_on: set[int], policy: str) -> Any:
    """One node that charges two cards through an exactly-once function; the attempt after
    charge number `n` in `crash_on` raises, as a crash between effect and record would."""

    @exactly_once(policy=policy)
    def charge(card: str) -> str:
        charges.append(f"{card} {idempotency_key()}")
        if len(charges) in crash_on:
            raise RuntimeError("crashed after the charge")
        return f"charged {card}"

    def pay(state: Ledger) -> dict[str, Any]:
        return {"log": [charge("visa"), charge("amex")]}

    builder = StateGraph(Ledger)
    builder.add_node("pay", pay)
    builder.add_edge(START, "pay")
    return builder.compile(checkpointer=saver)


def test_a_plain_node_replays_its_completed_call_and_retries_the_in_doubt_one_with_its_key(
    server: Any,
) -> None:
    config = {"configurable": {"thread_id": "charge/retry"}}
    charges: list[str] = []
    with CheckpointdSaver(server.target) as saver:
        graph = charging_graph(saver, charges, crash_on={2}, policy="retry_with_key")
        with pytest.raises(RuntimeError, match="crashed after the charge"):
            graph.invoke({"log": []}, config, durability=DURABILITY)
        final = graph.invoke(None, config, durability=DURABILITY)

    assert final["log"] == ["charged visa", "charged amex"]
    visa, amex, amex_again = charges
    assert visa.startswith("visa ") and amex.startswith("amex ")
    assert amex_again == amex  # the in-doubt call, retried under the same key; visa replayed
    assert visa.split()[1] != amex.split()[1]


def test_the_fail_policy_raises_an_error_naming_the_in_doubt_call(server: Any) -> None:
    thread = "charge/fail"
    config = {"configurable": {"thread_id": thread}}
    charges: list[str] = []
    with CheckpointdSaver(server.target) as saver:
        graph = charging_graph(saver, charges, crash_on={1}, policy="fail")
        with pytest.raises(RuntimeError):
            graph.invoke({"log": []}, config, durability=DURABILITY)
        with pytest.raises(ToolCallInDoubt) as raised:
            graph.invoke(None, config, durability=DURABILITY)

    assert len(charges) == 1  # never silently re-run
    with Client(server.target) as client:
        [in_doubt] = client.get_journal(run_id=_naming.run_id(thread, "")).in_doubt
    assert raised.value.call_id == in_doubt.call_id
    assert in_doubt.call_id in str(raised.value) and "charge" in str(raised.value)
    assert raised.value.idempotency_key == charges[0].split()[1]


def test_a_graph_not_checkpointed_by_checkpointd_is_refused_with_a_clear_error() -> None:
    graph = charging_graph(InMemorySaver(), [], crash_on=set(), policy="retry_with_key")
    with pytest.raises(TypeError, match="CheckpointdSaver.*InMemorySaver"):
        graph.invoke({"log": []}, {"configurable": {"thread_id": "t"}})


def test_ask_answered_fail_raises_an_error_naming_the_call_without_calling_again(server: Any) -> None:
    config = {"configurable": {"thread_id": "charge/ask-fail"}}
    charges: list[str] = []
    with CheckpointdSaver(server.target) as saver:
        graph = charging_graph(saver, charges, crash_on={1}, policy="ask")
        with pytest.raises(RuntimeError):
            graph.invoke({"log": []}, config, durability=DURABILITY)
        [question] = graph.invoke(None, config, durability=DURABILITY)["__interrupt__"]
        assert question.value["type"] == IN_DOUBT_INTERRUPT and question.value["tool_name"] == "charge"
        with pytest.raises(ToolCallInDoubt, match="a human chose to fail it") as raised:
            graph.invoke(Command(resume="fail"), config, durability=DURABILITY)

    assert raised.value.call_id == question.value["call_id"]
    assert len(charges) == 1


def test_calls_named_by_a_key_function_take_effect_once_per_key_across_steps(server: Any) -> None:
    config = {"configurable": {"thread_id": "refund/key"}}
    refunds: list[str] = []

    @exactly_once(key=lambda args: args["order"])
    def refund(order: str) -> str:
        refunds.append(f"{order} {idempotency_key()}")
        return f"refunded {order}"

    def first(state: Ledger) -> dict[str, Any]:
        return {"log": [refund("order-7")]}

    def second(state: Ledger) -> dict[str, Any]:
        return {"log": [refund("order-7"), refund("order-8")]}

    builder = StateGraph(Ledger)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    with CheckpointdSaver(server.target) as saver:
        final = builder.compile(checkpointer=saver).invoke({"log": []}, config, durability=DURABILITY)

    assert final["log"] == ["refunded order-7", "refunded order-7", "refunded order-8"]
    assert [r.split()[0] for r in refunds] == ["order-7", "order-8"]
