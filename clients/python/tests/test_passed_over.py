"""Corruption stays loud on every read: a Resume or LoadLatest that lands on an older checkpoint
because newer ones are quarantined warns and reports them (`passed_over`) every time, not only
on the read that found the damage. Against a real server (SQLite, Postgres) and in memory."""

from __future__ import annotations

import logging

import pytest
from agents import CountingAgent

from checkpointd import FatalError, PassedOver, RecoverableAgent
from checkpointd._proto import checkpoint_pb2 as pb
from checkpointd.store import passed_over


def warnings_about(caplog: pytest.LogCaptureFixture, run_id: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "passed_over_steps" in r.getMessage() and run_id in r.getMessage()
    ]


async def test_every_resume_and_load_past_quarantined_checkpoints_warns_and_reports_them(
    stores, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(FatalError):
        agent = CountingAgent(steps=20, fatal_at=10)
        await RecoverableAgent(agent, stores.store(), 3).run_with_recovery(None, "po")
    for step in (9, 6):
        stores.corrupt_state("po", step)

    caplog.set_level(logging.WARNING, "checkpointd")
    for reader in range(3):  # the first read finds the damage; the others must not be quiet
        store = stores.store()
        loaded = await store.load_latest("po")
        assert loaded is not None and loaded.step_number == 3
        assert [p.step for p in loaded.passed_over] == [9, 6], reader
        resumed = await store.resume("po")
        assert resumed.recovered_from_step == 3
        assert [p.step for p in resumed.passed_over] == [9, 6], reader
        assert all(p.reason for p in resumed.passed_over)
        assert len(warnings_about(caplog, "po")) == 2 * (reader + 1)
        await store.close()
    assert "[9, 6]" in warnings_about(caplog, "po")[-1]


async def test_the_recovery_loop_reports_what_it_passed_over(stores, caplog) -> None:
    with pytest.raises(FatalError):
        await RecoverableAgent(CountingAgent(fatal_at=7), stores.store(), 3).run_with_recovery(None, "loop")
    stores.corrupt_state("loop", 6)
    caplog.set_level(logging.WARNING, "checkpointd")
    result = await RecoverableAgent(CountingAgent(steps=8), stores.store(), 3).run_with_recovery(None, "loop")
    assert result["recovered_from_step"] == 3 and result["passed_over"] == [6]
    assert warnings_about(caplog, "loop")
    # The run saved past the quarantined step: later reads are quiet again.
    loaded = await stores.store().load_latest("loop")
    assert loaded is not None and loaded.passed_over == []


def test_an_older_server_s_skipped_steps_stand_in_for_passed_over() -> None:
    """A server without `passed_over` names only what it found corrupt on this read."""
    older = pb.LoadLatestResponse(skipped_steps=[9, 6])
    assert [p.step for p in passed_over(older)] == [9, 6]
    newer = pb.ResumeResponse(
        skipped_steps=[], passed_over=[pb.PassedOverCheckpoint(step=9, label="cp-9", reason="checksum")]
    )
    assert passed_over(newer) == [PassedOver(9, "", "cp-9", {}, "checksum")]
