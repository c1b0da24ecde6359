"""Real LangGraph graphs for the saver's graph tests, each built on a given checkpointer.

Every builder takes the checkpointer and a `Calls` tally that its nodes and tools bump, so a
test can tell a node that re-ran from one whose pending write was replayed. Nothing here is
random or timed: the scripted chat model decides from the messages it is shown, so the same
graph gives the same answer on any checkpointer, and `InMemorySaver` is the reference.
"""

from __future__ import annotations

import operator
import threading
from collections import Counter
from typing import Annotated, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import RetryPolicy, Send, interrupt
from typing_extensions import TypedDict

Graph = Any  # a CompiledStateGraph; its generic parameters add nothing here


class Calls:
    """How many times each node or tool ran; Send tasks run in parallel threads, hence the lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    def bump(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1


class FlakyError(RuntimeError):
    """What a failing node raises; distinct so a test never mistakes a saver error for it."""


class ScriptedChatModel(BaseChatModel):
    """A chat model that asks for `add` tool calls, two in its first turn and one in its second,
    then answers with the tool results it was shown. It reads only the messages, never a counter,
    so a replayed step asks for exactly what the first run asked for."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        turns = sum(isinstance(m, AIMessage) for m in messages)
        if turns == 0:
            calls = [_add_call("c0", 1, 2), _add_call("c1", 3, 4)]
            reply = AIMessage(content="adding", tool_calls=calls)
        elif turns == 1:
            reply = AIMessage(content="one more", tool_calls=[_add_call("c2", len(results), 10)])
        else:
            reply = AIMessage(content="results: " + ", ".join(str(r.content) for r in results))
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _add_call(call_id: str, a: int, b: int) -> dict[str, Any]:
    return {"name": "add", "args": {"a": a, "b": b}, "id": call_id, "type": "tool_call"}


def chat_with_tools(checkpointer: BaseCheckpointSaver[Any], calls: Calls) -> Graph:
    """`add_messages` state, the model, a `ToolNode`, and the conditional loop back to the
    model until it stops asking for tools."""
    return chat_with_tools_builder(calls).compile(checkpointer=checkpointer)


def chat_with_tools_builder(calls: Calls) -> StateGraph[Any]:
    """The chat graph before `compile`, for a test that compiles it as the README does."""

    @tool
    def add(a: int, b: int) -> int:
        """Adds two integers."""
        calls.bump("add")
        return a + b

    model = ScriptedChatModel().bind_tools([add])

    def agent(state: MessagesState) -> dict[str, Any]:
        calls.bump("agent")
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder


class Approval(TypedDict, total=False):
    request: str
    draft: str
    decision: str
    log: Annotated[list[str], operator.add]


def approval(checkpointer: BaseCheckpointSaver[Any], calls: Calls) -> Graph:
    """draft -> approve (an `interrupt()` a human answers with `Command(resume=...)`) and, in the
    same step, audit -> send. An interrupt does not cancel its siblings, so `audit` finishes and its
    write must be kept as a pending write: on resume it must not run again."""

    def draft(state: Approval) -> Approval:
        calls.bump("draft")
        return {"draft": f"draft of {state['request']}", "log": ["drafted"]}

    builder = StateGraph(Approval)
    builder.add_node("draft", draft)
    builder.add_node("approve", _approve_node(calls))
    builder.add_node("audit", _appender_to_log("audit", calls))
    builder.add_node("send", _send_node(calls))
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "approve")
    builder.add_edge("draft", "audit")
    builder.add_edge(["approve", "audit"], "send")
    builder.add_edge("send", END)
    return builder.compile(checkpointer=checkpointer)


def _approve_node(calls: Calls) -> Any:
    def approve(state: Approval) -> Approval:
        calls.bump("approve")
        decision = interrupt({"question": "send it?", "draft": state.get("draft", "")})
        return {"decision": decision, "log": [f"decided {decision}"]}

    return approve


def _appender_to_log(name: str, calls: Calls) -> Any:
    def node(state: Approval) -> Approval:
        calls.bump(name)
        return {"log": [name]}

    return node


def _send_node(calls: Calls) -> Any:
    def send(state: Approval) -> Approval:
        calls.bump("send")
        return {"log": ["sent" if state.get("decision") == "yes" else "dropped"]}

    return send


class Parent(TypedDict, total=False):
    request: str
    verdict: str
    trail: Annotated[list[str], operator.add]


class Child(TypedDict, total=False):
    request: str
    verdict: str
    steps: Annotated[list[str], operator.add]


def subgraph_with_interrupt(checkpointer: BaseCheckpointSaver[Any], calls: Calls) -> Graph:
    """prepare -> review (a compiled subgraph whose `check` node interrupts) -> finish. The child
    shares `request` and `verdict` with the parent and keeps its own `steps`."""

    def check(state: Child) -> Child:
        calls.bump("check")
        verdict = interrupt({"review": state["request"]})
        return {"verdict": verdict, "steps": ["checked"]}

    def record(state: Child) -> Child:
        calls.bump("record")
        return {"steps": [f"recorded {state['verdict']}"]}

    child = StateGraph(Child)
    child.add_node("check", check)
    child.add_node("record", record)
    child.add_edge(START, "check")
    child.add_edge("check", "record")
    child.add_edge("record", END)

    def prepare(state: Parent) -> Parent:
        calls.bump("prepare")
        return {"request": state["request"].upper(), "trail": ["prepared"]}

    def finish(state: Parent) -> Parent:
        calls.bump("finish")
        return {"trail": [f"finished {state['verdict']}"]}

    builder = StateGraph(Parent)
    builder.add_node("prepare", prepare)
    builder.add_node("review", child.compile())
    builder.add_node("finish", finish)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "review")
    builder.add_edge("review", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)


class FanOut(TypedDict, total=False):
    items: list[str]
    results: Annotated[list[str], operator.add]
    summary: str
    decision: str
    log: Annotated[list[str], operator.add]


def _fan_out_builder(calls: Calls) -> StateGraph[Any]:
    def plan(state: FanOut) -> FanOut:
        calls.bump("plan")
        return {"items": [f"item-{i}" for i in range(4)]}

    def route(state: FanOut) -> list[Send]:
        return [Send("work", {"items": [item]}) for item in state["items"]]

    def work(task: FanOut) -> FanOut:
        calls.bump("work")
        return {"results": [task["items"][0].upper()]}

    def reduce(state: FanOut) -> FanOut:
        calls.bump("reduce")
        return {"summary": "+".join(sorted(state["results"]))}

    builder = StateGraph(FanOut)
    builder.add_node("plan", plan)
    builder.add_node("work", work)
    builder.add_node("reduce", reduce)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", route, ["work"])
    builder.add_edge("work", "reduce")
    return builder


def fan_out(checkpointer: BaseCheckpointSaver[Any], calls: Calls) -> Graph:
    """plan -> one `Send` per item to `work` (parallel tasks of one step, their results joined by
    a list reducer) -> reduce."""
    builder = _fan_out_builder(calls)
    builder.add_edge("reduce", END)
    return builder.compile(checkpointer=checkpointer)


def fan_out_then_approval(checkpointer: BaseCheckpointSaver[Any], calls: Calls) -> Graph:
    """The fan-out, then an approval `interrupt()`, then send: the short graph the issue measured
    the ordering race with."""
    builder = _fan_out_builder(calls)
    builder.add_node("approve", _approve_node(calls))
    builder.add_node("send", _send_node(calls))
    builder.add_edge("reduce", "approve")
    builder.add_edge("approve", "send")
    builder.add_edge("send", END)
    return builder.compile(checkpointer=checkpointer)


class Trail(TypedDict, total=False):
    trail: Annotated[list[str], operator.add]


def linear(checkpointer: BaseCheckpointSaver[Any], calls: Calls) -> Graph:
    """a -> b -> c, each appending its name: a history to fork with `update_state`."""
    builder = StateGraph(Trail)
    previous = START
    for name in ("a", "b", "c"):
        builder.add_node(name, _appender(name, calls))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=checkpointer)


def _appender(name: str, calls: Calls) -> Any:
    def node(state: Trail) -> Trail:
        calls.bump(name)
        return {"trail": [name]}

    return node


def failing_branch(checkpointer: BaseCheckpointSaver[Any], calls: Calls) -> Graph:
    """`steady` and `retried` run in one step (`retried` raises on its first attempt and its
    RetryPolicy runs it again), then `flaky` raises the first time it runs, then `join`. The run
    fails at `flaky`; re-invoked with None it must run `flaky` again and nothing before it.

    The failure is a step of its own: a task that raises in the same step as a sibling cancels
    the sibling if it has not started yet, so which of them ran would be up to the scheduler."""

    def flaky(state: Trail) -> Trail:
        calls.bump("flaky")
        if calls.counts["flaky"] == 1:
            raise FlakyError("flaky failed its first run")
        return {"trail": ["flaky"]}

    def retried(state: Trail) -> Trail:
        calls.bump("retried")
        if calls.counts["retried"] == 1:
            raise FlakyError("retried failed its first attempt")
        return {"trail": ["retried"]}

    builder = StateGraph(Trail)
    builder.add_node("steady", _appender("steady", calls))
    # No backoff worth waiting for: the retry is what is under test, not its timing.
    policy = RetryPolicy(initial_interval=0.01, jitter=False, retry_on=FlakyError)
    builder.add_node("retried", retried, retry_policy=policy)
    builder.add_node("flaky", flaky)
    builder.add_node("join", _appender("join", calls))
    builder.add_edge(START, "steady")
    builder.add_edge(START, "retried")
    builder.add_edge(["steady", "retried"], "flaky")
    builder.add_edge("flaky", "join")
    builder.add_edge("join", END)
    return builder.compile(checkpointer=checkpointer)
