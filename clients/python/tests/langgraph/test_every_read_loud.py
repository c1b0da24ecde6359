"""Corruption is loud on every read, not only the first: with the three newest checkpoints of a
thread rotted on disk, every read that lands on an older checkpoint (the same saver, a new
saver, new processes) warns naming the thread and what was skipped (LangGraph ids, LangGraph
steps and checkpointd steps) and puts the fallback on the state's metadata; a saver with
`on_corrupt="raise"` raises every time, and no exactly-once side effect of the skipped
super-steps runs again. Real graphs, real servers; the state bytes are damaged in the database."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import rot_reader
from test_fallback import corrupt_newest

from checkpointd import DataLoss
from checkpointd._proto import checkpoint_pb2 as pb
from checkpointd.langgraph import FALLBACK_KEY, CheckpointdSaver, CorruptCheckpoints
from checkpointd.langgraph._fallback import Skipped
from checkpointd.langgraph._load import passed_over

HERE = Path(__file__).resolve().parent


def process(server: Any, thread: str, root: Path, mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(HERE / "rot_reader.py"), server.target, thread, str(root), mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def effects(root: Path) -> list[str]:
    return sorted((root / "effects.log").read_text().splitlines())


def rotted_thread(server: Any, thread: str, root: Path) -> tuple[list[int], list[str]]:
    """The fan-out graph run to its end, then its three newest checkpoints rotted."""
    finished = process(server, thread, root, "run")
    assert finished["closed"] and len(finished["delivered"]) == rot_reader.BRANCHES
    assert effects(root) == [f"delivery-{n}" for n in range(rot_reader.BRANCHES)]
    return corrupt_newest(server, thread, 3)


def test_three_new_processes_each_read_loudly_and_a_raising_saver_refuses_each_time(server, tmp_path) -> None:
    steps, ids = rotted_thread(server, "rot", tmp_path)
    for reader in range(3):
        seen = process(server, "rot", tmp_path, "read")
        fallback = seen["fallback"]
        assert fallback is not None, f"reader {reader} was not told about the fallback"
        assert fallback["skipped_ids"] == ids and fallback["skipped_steps"] == steps, fallback
        # LangGraph's own numbering: the checkpoints after collect, branches and plan.
        assert fallback["skipped_langgraph_steps"] == [3, 2, 1], fallback
        assert fallback["served_id"] and fallback["served_id"] not in ids
        line = next((w for w in seen["warnings"] if "skipped corrupt checkpoints" in w), None)
        assert line is not None, f"reader {reader} logged no warning: {seen['warnings']}"
        assert "'rot'" in line and all(i in line for i in ids), line
        assert seen["raised_get_state"] == ids and seen["raised_invoke"] == ids, seen
        assert effects(tmp_path) == [f"delivery-{n}" for n in range(rot_reader.BRANCHES)], reader

    # Run on from the older checkpoint: the branches re-run, their deliveries replay.
    finished = process(server, "rot", tmp_path, "finish")
    assert finished["closed"] and len(finished["delivered"]) == rot_reader.BRANCHES
    assert effects(tmp_path) == [f"delivery-{n}" for n in range(rot_reader.BRANCHES)]
    # A newer checkpoint now stands above the rotted ones: reads are quiet again.
    assert process(server, "rot", tmp_path, "read")["fallback"] is None


def test_the_same_saver_and_new_savers_are_loud_on_every_read(server, tmp_path, caplog) -> None:
    steps, ids = rotted_thread(server, "again", tmp_path)
    config = {"configurable": {"thread_id": "again"}}
    caplog.set_level(logging.WARNING, "checkpointd.langgraph")
    with CheckpointdSaver(server.target) as saver:
        graph = rot_reader.build(saver, tmp_path / "effects.log")
        for _ in range(3):
            assert graph.get_state(config).metadata[FALLBACK_KEY]["skipped_ids"] == ids
            assert saver.get_tuple(config).metadata[FALLBACK_KEY]["skipped_steps"] == steps
    warned = [r for r in caplog.records if "skipped corrupt checkpoints" in r.getMessage()]
    assert len(warned) == 6 and all(r.levelno == logging.WARNING for r in warned)
    with CheckpointdSaver(server.target, on_corrupt="raise") as strict:
        graph = rot_reader.build(strict, tmp_path / "effects.log")
        for _ in range(3):
            with pytest.raises(CorruptCheckpoints) as raised:
                graph.invoke(None, config)
            assert raised.value.fallback.skipped_langgraph_steps == [3, 2, 1]
    assert effects(tmp_path) == [f"delivery-{n}" for n in range(rot_reader.BRANCHES)]


@pytest.mark.parametrize("policy", ["warn", "raise"])
async def test_a_corrupt_checkpoint_read_by_id_raises_corrupt_checkpoints(server, tmp_path, policy) -> None:
    _, ids = rotted_thread(server, f"by-id-{policy}", tmp_path)
    config = {"configurable": {"thread_id": f"by-id-{policy}", "checkpoint_ns": "", "checkpoint_id": ids[1]}}
    async with CheckpointdSaver(server.target, on_corrupt=policy) as saver:
        with pytest.raises(CorruptCheckpoints) as raised:
            saver.get_tuple(config)
        assert isinstance(raised.value, DataLoss) and raised.value.fallback.requested_id == ids[1]
        assert raised.value.fallback.skipped_langgraph_steps == [2]
        with pytest.raises(CorruptCheckpoints):
            await saver.aget_tuple(config)


def test_an_older_server_s_skipped_steps_are_reported_as_passed_over() -> None:
    """Without `passed_over` (an older server) the saver reports what that read found corrupt,
    and looks their ids up; with it, the ids and LangGraph steps come with the answer."""
    older = passed_over(pb.LoadLatestResponse(skipped_steps=[5, 4]))
    assert older == [Skipped(5), Skipped(4)]
    newer = pb.LoadLatestResponse(
        passed_over=[
            pb.PassedOverCheckpoint(step=5, label="lg-id", metadata={"m.step": "3", "m.source": '"loop"'})
        ]
    )
    assert passed_over(newer) == [Skipped(5, "lg-id", 3)]
