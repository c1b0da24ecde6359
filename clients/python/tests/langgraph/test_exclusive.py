"""Exclusive writing: two processes write one thread; with `exclusive=True` the one superseded
by the other is refused with `ThreadTakenOver` instead of forking the thread, and by default
(LangGraph's model: any worker may serve a thread) both may write in turn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from notes_graph import build

from checkpointd import Client
from checkpointd.langgraph import CheckpointdSaver, ThreadTakenOver, _naming

HERE = Path(__file__).resolve().parent


def other_process_writes(target: str, thread: str, *, exclusive: bool) -> None:
    """A second process takes a turn on the thread, then exits."""
    mode = "exclusive" if exclusive else "shared"
    subprocess.run(
        [sys.executable, str(HERE / "notes_graph.py"), target, thread, "other", mode], check=True, timeout=60
    )


def test_a_superseded_exclusive_writer_is_refused_and_the_thread_does_not_fork(server) -> None:
    config = {"configurable": {"thread_id": "owned"}}
    with CheckpointdSaver(server.target, exclusive=True) as mine:
        graph = build(mine, "mine")
        graph.invoke({"notes": []}, config)
        other_process_writes(server.target, "owned", exclusive=True)
        with pytest.raises(ThreadTakenOver) as refused:
            graph.invoke({"notes": []}, config)
    assert refused.value.reason == "STALE_EPOCH"
    assert refused.value.theirs > refused.value.ours
    with CheckpointdSaver(server.target) as reader:
        assert build(reader, "reader").get_state(config).values["notes"] == ["mine", "other"]
    with Client(server.target) as client:
        head = client.get_run(run_id=_naming.run_id("owned", "")).run
    assert head.epoch == refused.value.theirs


def test_by_default_writers_take_turns_on_a_thread(server) -> None:
    config = {"configurable": {"thread_id": "shared"}}
    with CheckpointdSaver(server.target) as mine:
        graph = build(mine, "mine")
        graph.invoke({"notes": []}, config)
        other_process_writes(server.target, "shared", exclusive=False)
        assert graph.invoke({"notes": []}, config)["notes"] == ["mine", "other", "mine"]


def test_an_exclusive_writer_keeps_writing_while_nobody_takes_over(server) -> None:
    config = {"configurable": {"thread_id": "solo"}}
    with CheckpointdSaver(server.target, exclusive=True) as mine:
        graph = build(mine, "mine")
        for _ in range(3):
            graph.invoke({"notes": []}, config)
        assert graph.get_state(config).values["notes"] == ["mine"] * 3
