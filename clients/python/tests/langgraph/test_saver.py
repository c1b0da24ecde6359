"""What CheckpointdSaver adds to LangGraph's contract, against a real server on SQLite and on
Postgres: the message log, checksums verified on read with corrupt checkpoints skipped,
concurrent writers, a stale cached log, and the pending-write rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.serde.types import INTERRUPT

from checkpointd import Client, DataLoss
from checkpointd.langgraph import CheckpointdSaver, _naming


@pytest.fixture
def saver(server) -> Iterator[CheckpointdSaver]:
    with CheckpointdSaver(server.target) as s:
        yield s


@pytest.fixture
def client(server) -> Iterator[Client]:
    with Client(server.target) as c:
        yield c


def put(
    saver: CheckpointdSaver, thread: str, messages: list[Any], parent: dict | None = None, **extra: Any
) -> dict:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = str(uuid6(clock_seq=-1))
    checkpoint["channel_values"] = {"messages": messages, **extra}
    checkpoint["channel_versions"] = {k: 1 for k in checkpoint["channel_values"]}
    config: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if parent is not None:
        config["configurable"]["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
    return saver.put(config, checkpoint, {"source": "loop", "step": len(messages)}, {})


def conversation(turns: int) -> list[Any]:
    out: list[Any] = []
    for i in range(turns):
        out += [HumanMessage(f"question {i}", id=f"h{i}"), AIMessage(f"answer {i}", id=f"a{i}")]
    return out


def test_only_new_messages_are_stored_and_a_fresh_saver_rebuilds_them(saver, client, server) -> None:
    history = conversation(5)
    parent = None
    configs = []
    for turns in range(1, 6):
        parent = put(saver, "t", history[: 2 * turns], parent)
        configs.append(parent)
    run = _naming.run_id("t", "")
    head = client.get_run(run_id=run).run
    # The log holds each message once (10), not the 2+4+...+10 = 30 a per-step copy would.
    assert head.message_count == 10
    sizes = [c.size_bytes for c in client.list_checkpoints(run_id=run).checkpoints]
    assert max(sizes) - min(sizes) < 64, sizes  # the state does not grow with the history

    with CheckpointdSaver(server.target) as fresh:
        latest = fresh.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        assert latest is not None and latest.checkpoint["channel_values"]["messages"] == history
        second = fresh.get_tuple(configs[1])
        assert second is not None
        assert second.checkpoint["channel_values"]["messages"] == history[:4]
        assert second.parent_config == {"configurable": {**configs[0]["configurable"]}}


def test_a_history_that_does_not_extend_the_log_is_kept_in_the_state(saver) -> None:
    first = put(saver, "fork", conversation(2))
    edited = [HumanMessage("something else", id="x")]
    forked = put(saver, "fork", edited, first)
    got = saver.get_tuple(forked)
    assert got is not None and got.checkpoint["channel_values"]["messages"] == edited
    again = saver.get_tuple(first)
    assert again is not None and again.checkpoint["channel_values"]["messages"] == conversation(2)


def test_every_checkpoint_verifies_and_a_corrupt_one_is_skipped(saver, client, server) -> None:
    configs = []
    parent = None
    for turns in range(1, 4):
        parent = put(saver, "c", conversation(turns), parent)
        configs.append(parent)
    run = _naming.run_id("c", "")
    verdicts = client.validate(run_id=run).verdicts
    assert [v.valid for v in verdicts] == [True, True, True]

    server.database.corrupt_state(run, 2)  # the newest checkpoint
    with CheckpointdSaver(server.target) as fresh:
        latest = fresh.get_tuple({"configurable": {"thread_id": "c", "checkpoint_ns": ""}})
        assert latest is not None
        assert latest.config["configurable"]["checkpoint_id"] == configs[1]["configurable"]["checkpoint_id"]
        assert latest.checkpoint["channel_values"]["messages"] == conversation(2)
        with pytest.raises(DataLoss):
            fresh.get_tuple(configs[2])
        listed = [
            t.config["configurable"]["checkpoint_id"]
            for t in fresh.list({"configurable": {"thread_id": "c"}})
        ]
        assert listed == [c["configurable"]["checkpoint_id"] for c in reversed(configs[:2])]
        # The thread goes on from the newest valid checkpoint.
        nxt = put(fresh, "c", conversation(3), configs[1])
        got = fresh.get_tuple(nxt)
        assert got is not None and got.checkpoint["channel_values"]["messages"] == conversation(3)


def test_two_savers_writing_one_thread_both_land(server) -> None:
    with CheckpointdSaver(server.target) as a, CheckpointdSaver(server.target) as b:
        history = conversation(4)
        one = put(a, "shared", history[:2])
        two = put(b, "shared", history[:4], one)  # b never saw the run: it syncs first
        three = put(a, "shared", history[:6], two)  # a's view is stale: conflict, sync, retry
        four = put(b, "shared", history, three)
        ids = [
            t.config["configurable"]["checkpoint_id"]
            for t in a.list({"configurable": {"thread_id": "shared", "checkpoint_ns": ""}})
        ]
        assert ids == [c["configurable"]["checkpoint_id"] for c in (four, three, two, one)]
        latest = b.get_tuple({"configurable": {"thread_id": "shared", "checkpoint_ns": ""}})
        assert latest is not None and latest.checkpoint["channel_values"]["messages"] == history


def test_a_cached_log_made_stale_by_another_process_is_detected(server) -> None:
    with CheckpointdSaver(server.target) as a, CheckpointdSaver(server.target) as b:
        put(a, "stale", conversation(2))
        assert a.get_tuple({"configurable": {"thread_id": "stale", "checkpoint_ns": ""}}) is not None
        b.delete_thread("stale")
        other = [HumanMessage("a different life", id="z")]
        put(b, "stale", other)
        got = a.get_tuple({"configurable": {"thread_id": "stale", "checkpoint_ns": ""}})
        assert got is not None and got.checkpoint["channel_values"]["messages"] == other
        # and a can write on top of it
        cfg = put(a, "stale", other + [AIMessage("ok", id="y")], got.config)
        again = b.get_tuple(cfg)
        assert again is not None and len(again.checkpoint["channel_values"]["messages"]) == 2


def test_regular_writes_keep_the_first_value_and_special_channels_the_newest(saver) -> None:
    cfg = put(saver, "w", conversation(1))
    saver.put_writes(cfg, [("ch", "first"), (INTERRUPT, "one")], "task")
    saver.put_writes(cfg, [("ch", "second"), (INTERRUPT, "two")], "task")
    got = saver.get_tuple(cfg)
    assert got is not None
    assert sorted(got.pending_writes) == sorted([("task", "ch", "first"), ("task", INTERRUPT, "two")])


def test_listing_spans_namespaces_and_threads_and_a_repeated_put_is_stored_once(saver) -> None:
    root = put(saver, "l1", conversation(1))
    checkpoint = empty_checkpoint()
    checkpoint["id"] = str(uuid6(clock_seq=-1))
    child_cfg = {"configurable": {"thread_id": "l1", "checkpoint_ns": "child:1|grand:2"}}
    saver.put(child_cfg, checkpoint, {"source": "loop", "step": 0}, {})
    saver.put(child_cfg, checkpoint, {"source": "loop", "step": 0}, {})  # a retried put
    put(saver, "l2", conversation(2))

    by_ns = sorted(
        t.config["configurable"]["checkpoint_ns"] for t in saver.list({"configurable": {"thread_id": "l1"}})
    )
    assert by_ns == ["", "child:1|grand:2"]
    threads = sorted(t.config["configurable"]["thread_id"] for t in saver.list(None))
    assert threads == ["l1", "l1", "l2"]
    only = list(saver.list(None, filter={"step": 2}))
    assert [t.config for t in only] == [root]


def test_writes_after_a_retried_put_whose_answer_was_lost_are_journalled(saver, server) -> None:
    """Saver A knows an older checkpoint; checkpoint C lands through B, after another one (as a
    put whose answer A lost would); A's retried put of C finds the id stored, and A's writes for
    C must reach the journal rather than wait for a put that already happened."""
    first = put(saver, "retry", conversation(1))
    checkpoint = empty_checkpoint()
    checkpoint["id"] = str(uuid6(clock_seq=-1))
    checkpoint["channel_values"] = {"messages": conversation(2)}
    config = {"configurable": {"thread_id": "retry", "checkpoint_ns": ""}}
    with CheckpointdSaver(server.target) as other:
        put(other, "retry", conversation(1) + [HumanMessage("meanwhile", id="m")], first)
        other.put(config, checkpoint, {"source": "loop", "step": 2}, {})  # C lands, at another step
    stored = saver.put(config, checkpoint, {"source": "loop", "step": 2}, {})  # the retry
    saver.put_writes(stored, [("ch", "after")], "task")
    with CheckpointdSaver(server.target) as fresh:
        got = fresh.get_tuple(stored)
    assert got is not None and got.pending_writes == [("task", "ch", "after")]
