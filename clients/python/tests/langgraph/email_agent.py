"""A LangGraph agent that sends one email through an exactly-once tool, for the SIGKILL tests:
`python email_agent.py TARGET THREAD DIR --policy P [--die-after-effect] [--resume JSON]`.

model (a scripted chat model: first a tool call, then a closing message quoting the tool's
result) -> ToolNode([send_email]) -> model. `send_email` is `@exactly_once(policy=P)` and hands
its idempotency key to a fake mail provider in DIR, which logs every attempt (attempts.log)
and delivers once per key (outbox.log). With `--die-after-effect` the process SIGKILLs itself
right after the provider accepted the email, before the tool's result or the node's writes
are saved. Without it the thread is resumed (`invoke(None)`, or `Command(resume=JSON)` with
`--resume`). The outcome is printed as JSON: the closing message and any interrupts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from pathlib import Path
from typing import Annotated, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command
from typing_extensions import TypedDict

from checkpointd.langgraph import CheckpointdSaver, exactly_once, idempotency_key

CALL_ID = "call-email-1"


class ScriptedModel(BaseChatModel):
    """Deterministic: asks for one email, then closes quoting the tool's result."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results:
            reply = AIMessage(content=f"done: {results[-1].content}")
        else:
            args = {"to": "ada@example.com", "body": "your invoice"}
            reply = AIMessage(content="", tool_calls=[{"name": "send_email", "args": args, "id": CALL_ID}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


class FakeMailProvider:
    """A mail API that honours idempotency keys: a key it has seen delivers nothing again."""

    def __init__(self, root: Path) -> None:
        self.attempts = root / "attempts.log"
        self.outbox = root / "outbox.log"

    def send(self, to: str, body: str, key: str) -> str:
        _append(self.attempts, key)
        delivered = self.outbox.read_text().splitlines() if self.outbox.exists() else []
        if not any(line.startswith(key + " ") for line in delivered):
            _append(self.outbox, f"{key} {to} {body}")
        return f"sent to {to}"


def _append(path: Path, line: str) -> None:
    with path.open("a") as out:
        out.write(line + "\n")
        out.flush()
        os.fsync(out.fileno())


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def build(saver: CheckpointdSaver, root: Path, policy: str, die_after_effect: bool) -> Any:
    provider = FakeMailProvider(root)
    model = ScriptedModel()

    @exactly_once(policy=policy)
    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        sent = provider.send(to, body, key=idempotency_key())
        if die_after_effect:
            os.kill(os.getpid(), signal.SIGKILL)  # the email is out; nothing is recorded yet
        return sent

    def call_model(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([send_email]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=saver)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("thread")
    parser.add_argument("dir", type=Path)
    parser.add_argument("--policy", default="retry_with_key")
    parser.add_argument("--die-after-effect", action="store_true")
    parser.add_argument("--resume", help="a JSON resume value for Command(resume=...)")
    parser.add_argument("--durability", default="async")
    args = parser.parse_args()
    saver = CheckpointdSaver(args.target)
    graph = build(saver, args.dir, args.policy, args.die_after_effect)
    config = {"configurable": {"thread_id": args.thread}}
    if args.resume is not None:
        graph_input: Any = Command(resume=json.loads(args.resume))
    elif graph.get_state(config).next:
        graph_input = None
    else:
        graph_input = {"messages": [HumanMessage("mail ada her invoice")]}
    final = graph.invoke(graph_input, config, durability=args.durability)
    print(
        json.dumps(
            {
                "last": final["messages"][-1].content,
                "interrupts": [i.value for i in final.get("__interrupt__", [])],
            }
        )
    )
    saver.close()


if __name__ == "__main__":
    main()
