"""A journalled exactly-once call is replayed only for the arguments it was made with. A model
that reuses a tool call id with other arguments does not get the first call's result replayed
(the second email silently never sent): the graph raises `ReplayMismatch`, naming the call and
both digests, and the tool is not called. The same arguments replay as before. Real graphs,
real servers, sync and async."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict

from checkpointd import ReplayMismatch, arguments_digest
from checkpointd.langgraph import CheckpointdSaver, exactly_once, idempotency_key

CALL_ID = "call-reused"


class ReusingModel(BaseChatModel):
    """Asks for one email per entry of `recipients`, every one under the same tool call id."""

    recipients: list[str]

    @property
    def _llm_type(self) -> str:
        return "reusing"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> ChatResult:
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if done >= len(self.recipients):
            reply = AIMessage(content=f"done after {done}")
        else:
            args = {"to": self.recipients[done], "body": "hello"}
            reply = AIMessage(content="", tool_calls=[{"name": "send_email", "args": args, "id": CALL_ID}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def build(saver: CheckpointdSaver, outbox: Path, recipients: list[str]) -> Any:
    model = ReusingModel(recipients=recipients)

    @exactly_once
    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        with outbox.open("a") as out:
            out.write(f"{to} {idempotency_key()}\n")
        return f"sent to {to}"

    def call_model(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([send_email]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=saver)


def sent(outbox: Path) -> list[str]:
    return [line.split()[0] for line in outbox.read_text().splitlines()] if outbox.exists() else []


def test_a_reused_tool_call_id_with_other_arguments_raises_and_sends_nothing(server, tmp_path) -> None:
    outbox = tmp_path / "outbox.log"
    config = {"configurable": {"thread_id": "reuse-other"}}
    with CheckpointdSaver(server.target) as saver:
        graph = build(saver, outbox, ["ada@example.com", "bob@example.com"])
        with pytest.raises(ReplayMismatch) as raised:
            graph.invoke({"messages": [HumanMessage("mail ada, then bob")]}, config)
    assert sent(outbox) == ["ada@example.com"], "bob's email was neither sent nor faked"
    mismatch = raised.value
    assert CALL_ID in mismatch.call_id and mismatch.reason == "ARGUMENTS_MISMATCH"
    assert mismatch.stored_digest == arguments_digest({"to": "ada@example.com", "body": "hello"})
    assert mismatch.request_digest == arguments_digest({"to": "bob@example.com", "body": "hello"})


async def test_a_reused_tool_call_id_with_other_arguments_raises_async(server, tmp_path) -> None:
    outbox = tmp_path / "outbox.log"
    config = {"configurable": {"thread_id": "reuse-other-async"}}
    async with CheckpointdSaver(server.target) as saver:
        graph = build(saver, outbox, ["ada@example.com", "bob@example.com"])
        with pytest.raises(ReplayMismatch):
            await graph.ainvoke({"messages": [HumanMessage("mail ada, then bob")]}, config)
    assert sent(outbox) == ["ada@example.com"]


def test_a_reused_tool_call_id_with_the_same_arguments_replays(server, tmp_path) -> None:
    outbox = tmp_path / "outbox.log"
    config = {"configurable": {"thread_id": "reuse-same"}}
    with CheckpointdSaver(server.target) as saver:
        graph = build(saver, outbox, ["ada@example.com", "ada@example.com"])
        final = graph.invoke({"messages": [HumanMessage("mail ada twice")]}, config)
    assert final["messages"][-1].content == "done after 2"
    assert [m.content for m in final["messages"] if isinstance(m, ToolMessage)] == [
        "sent to ada@example.com"
    ] * 2
    assert sent(outbox) == ["ada@example.com"]


class Paid(TypedDict, total=False):
    paid: str


@pytest.mark.parametrize("second_amount", [7, 8], ids=["same_arguments", "other_arguments"])
def test_a_retried_node_replays_a_plain_function_only_for_its_arguments(
    server, tmp_path, second_amount
) -> None:
    """A node retried after its call: the retry's call has the same id (same step, task and
    call index); with the same arguments it replays the result, with other ones it raises."""
    charged: list[int] = []
    amounts = iter([7, second_amount])

    @exactly_once
    def charge(amount: int) -> str:
        charged.append(amount)
        return f"charged {amount}"

    def pay(state: Paid) -> dict[str, Any]:
        result = charge(next(amounts))
        if _first_attempt(tmp_path):
            raise RuntimeError("flaky right after the charge")
        return {"paid": result}

    builder = StateGraph(Paid)
    retry = RetryPolicy(max_attempts=2, initial_interval=0.01, retry_on=RuntimeError)
    builder.add_node("pay", pay, retry_policy=retry)
    builder.add_edge(START, "pay")
    config = {"configurable": {"thread_id": f"retry-{second_amount}"}}
    with CheckpointdSaver(server.target) as saver:
        graph = builder.compile(checkpointer=saver)
        if second_amount == 7:
            assert graph.invoke({}, config)["paid"] == "charged 7"
        else:
            with pytest.raises(ReplayMismatch):
                graph.invoke({}, config)
    assert charged == [7]


def _first_attempt(root: Path) -> bool:
    """True once per test: the marker file says an attempt already failed."""
    marker = root / "failed-once"
    if marker.exists():
        return False
    marker.write_text("1")
    return True
