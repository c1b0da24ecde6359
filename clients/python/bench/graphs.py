"""The real graphs the LangGraph benchmark runs on every saver: a short tool-calling graph with
a `Send` fan-out, and a one-node chat loop. Deterministic: the fake chat model decides from the
messages it is shown, so every saver stores the same checkpoints."""

from __future__ import annotations

import operator
import random
from typing import Annotated, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Send

WORDS = (
    "order shipping status carrier warehouse delivery tracking expected business days regional "
    "sorting centre customer refund invoice address package label weight dispatch arrival "
    "delay weather route driver signature receipt return policy support ticket update note "
    "the a of to and in is it for on with as at by from that this will be can please thanks"
).split()

BRANCHES = 3


def text(rng: random.Random, words: int) -> str:
    """Prose-like text from a small vocabulary, compressing about as real chat text does."""
    return " ".join(rng.choice(WORDS) for _ in range(words))


class ToolCallingModel(BaseChatModel):
    """A fake chat model that always asks for two `lookup` calls, named after the question's
    order number, so a replay asks for exactly what the first run asked for."""

    @property
    def _llm_type(self) -> str:
        return "bench-tool-calling"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        order = str(messages[-1].content).rsplit(" ", 1)[-1]
        calls = [
            {
                "name": "lookup",
                "args": {"order": order, "field": field},
                "id": f"call-{field}",
                "type": "tool_call",
            }
            for field in ("status", "carrier")
        ]
        reply = AIMessage(content=f"looking up order {order}", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=reply)])


class ShortState(MessagesState):
    parts: Annotated[list[str], operator.add]


@tool
def lookup(order: str, field: str) -> str:
    """Looks one field of an order up."""
    return f"order {order}: {field} is " + text(random.Random(f"{order}-{field}"), 12)


def short_graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    """model (tool calls) -> ToolNode -> a `Send` fan-out of BRANCHES branches -> end."""
    model = ToolCallingModel().bind_tools([lookup])

    def agent(state: ShortState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def fan_out(state: ShortState) -> list[Send]:
        found = str(state["messages"][-1].content)
        return [Send("summarise", {"part": k, "found": found}) for k in range(BRANCHES)]

    def summarise(task: dict[str, Any]) -> dict[str, Any]:
        return {"parts": [f"part {task['part']}: {task['found'][:40]}"]}

    builder = StateGraph(ShortState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_node("summarise", summarise)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_conditional_edges("tools", fan_out, ["summarise"])
    builder.add_edge("summarise", END)
    return builder.compile(checkpointer=checkpointer)


def short_input(i: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"where is order {1000 + i}")]}


def chat_graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    """MessagesState, one node: each invocation appends the user's message and one answer."""

    def reply(state: MessagesState) -> dict[str, Any]:
        turn = len(state["messages"])
        return {"messages": [AIMessage(f"[{turn}] " + text(random.Random(turn), 90), id=f"a-{turn}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=checkpointer)


def chat_input(i: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"[{i}] " + text(random.Random(-i), 25), id=f"q-{i}")]}
