"""The LangGraph saver over a long thread, against a real server whose answers hold about 1000
bytes of messages a page: a fresh saver (nothing cached) gets every checkpoint back with its
whole message history, sync and async, because the client follows the pages for it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6

from checkpointd import Client
from checkpointd.langgraph import CheckpointdSaver, _naming

PAD = "x" * 120


@pytest.fixture
def server_args() -> list[str]:
    return ["--max-answer-message-bytes", "1000"]


def conversation(turns: int) -> list[Any]:
    out: list[Any] = []
    for i in range(turns):
        out += [
            HumanMessage(f"question {i} {PAD}", id=f"h{i}"),
            AIMessage(f"answer {i} {PAD}", id=f"a{i}"),
        ]
    return out


def put(saver: CheckpointdSaver, thread: str, messages: list[Any], parent: dict | None) -> dict:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = str(uuid6(clock_seq=-1))
    checkpoint["channel_values"] = {"messages": messages}
    checkpoint["channel_versions"] = {"messages": len(messages)}
    config: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if parent is not None:
        config["configurable"]["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
    return saver.put(config, checkpoint, {"source": "loop", "step": len(messages)}, {})


def save_thread(server: Any, thread: str) -> tuple[list[Any], list[dict]]:
    """Five checkpoints of a 50-turn conversation (100 messages, ~15 KB of log), ten turns each."""
    history = conversation(50)
    configs: list[dict] = []
    parent = None
    with CheckpointdSaver(server.target) as saver:
        for turns in range(10, 51, 10):
            parent = put(saver, thread, history[: 2 * turns], parent)
            configs.append(parent)
    return history, configs


def test_get_tuple_of_a_long_thread_returns_every_message(server) -> None:
    history, configs = save_thread(server, "long")
    with Client(server.target) as client:
        run = _naming.run_id("long", "")
        assert client.get_run(run_id=run).run.message_count == len(history)
    with CheckpointdSaver(server.target) as fresh:
        latest = fresh.get_tuple({"configurable": {"thread_id": "long", "checkpoint_ns": ""}})
        assert latest is not None
        assert latest.checkpoint["channel_values"]["messages"] == history
        third = fresh.get_tuple(configs[2])
        assert third is not None and third.checkpoint["channel_values"]["messages"] == history[:60]
        thread = {"configurable": {"thread_id": "long", "checkpoint_ns": ""}}
        listed = [t.checkpoint["channel_values"]["messages"] for t in fresh.list(thread)]
        assert [len(messages) for messages in listed] == [100, 80, 60, 40, 20]
        assert listed[0] == history


async def test_aget_tuple_of_a_long_thread_returns_every_message(server) -> None:
    history, configs = save_thread(server, "along")
    async with CheckpointdSaver(server.target) as fresh:
        latest = await fresh.aget_tuple({"configurable": {"thread_id": "along", "checkpoint_ns": ""}})
        assert latest is not None
        assert latest.checkpoint["channel_values"]["messages"] == history
        second = await fresh.aget_tuple(configs[1])
        assert second is not None and second.checkpoint["channel_values"]["messages"] == history[:40]
