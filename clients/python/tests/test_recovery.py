"""RecoverableAgent and CheckpointStore against a real server (SQLite, Postgres) and in memory
(`CheckpointStore.in_memory`, no server), one scenario each: the reference example, corruption
fallback, restart from scratch, fencing, and the store's own interface."""

from __future__ import annotations

import grpc
import pytest
from agents import CountingAgent

from checkpointd import Checkpoint, Done, FatalError, RecoverableAgent


async def test_a_crash_at_step_5_with_checkpoints_every_3_recovers_from_step_3(stores) -> None:
    agent = CountingAgent(steps=8, crash_at=5)
    store = stores.store()
    recoverable = RecoverableAgent(agent, store, checkpoint_every_n=3)

    result = await recoverable.run_with_recovery({"goal": "count"}, "reference-run")

    assert result["recovered_from_step"] == 3
    assert result["resurrections"] == 1
    assert result["result"] == {"total": sum(10 * s for s in range(1, 9)), "messages": 8}
    # Steps 4 and 5 ran twice; their lookups ran once, and were replayed the second time.
    assert all(count == 1 for count in agent.executions.values()), agent.executions
    assert len(agent.executions) == 8
    assert result["tools_replayed"] == 2
    assert await stores.steps("reference-run") == [3, 6, 8]
    # Three saves (3 before the crash; 6 and 8 after it), each with the client's checksum v1,
    # which the server (or the memory backend) verified.
    assert store.stats.with_client_checksum == len(store.stats.latencies) == 3
    await store.close()


async def test_a_finished_run_is_not_stepped_again(stores) -> None:
    store = stores.store()
    first = CountingAgent(steps=4)
    done = await RecoverableAgent(first, store).run_with_recovery(None, "finished-run")
    again = CountingAgent(steps=4)
    replayed = await RecoverableAgent(again, store).run_with_recovery(None, "finished-run")
    assert replayed["result"] == done["result"] and replayed["recovered_from_step"] == 4
    assert replayed["steps_executed"] == 0 and not again.executions
    await store.close()


async def test_a_corrupt_latest_checkpoint_falls_back_to_the_one_before(stores) -> None:
    store = stores.store()
    with pytest.raises(FatalError):
        await RecoverableAgent(CountingAgent(fatal_at=7), store).run_with_recovery(None, "r")
    stores.corrupt_state("r", 6)

    agent = CountingAgent(steps=8)
    result = await RecoverableAgent(agent, stores.store()).run_with_recovery(None, "r")

    assert result["recovered_from_step"] == 3 and result["skipped_steps"] == [6]
    # Steps 4 to 7 re-ran from the journal (step 7's lookup was journalled before it failed):
    # only step 8, never reached before, ran its tool.
    assert sorted(agent.executions) == ["lookup@8"]
    assert result["result"]["total"] == sum(10 * s for s in range(1, 9))


async def test_when_every_checkpoint_is_corrupt_the_run_restarts_from_scratch(stores) -> None:
    store = stores.store()
    with pytest.raises(FatalError):
        await RecoverableAgent(CountingAgent(fatal_at=7), store).run_with_recovery(None, "all-bad")
    for step in (3, 6):
        stores.corrupt_state("all-bad", step)

    agent = CountingAgent(steps=8)
    result = await RecoverableAgent(agent, stores.store()).run_with_recovery(None, "all-bad")

    assert result["restarted_from_scratch"] and result["recovered_from_step"] == 0
    assert result["skipped_steps"] == [6, 3]
    # From scratch, yet no journalled tool ran again.
    assert sorted(agent.executions) == ["lookup@8"]
    assert result["result"]["total"] == sum(10 * s for s in range(1, 9))


async def test_the_store_saves_loads_and_validates_checkpoints(stores) -> None:
    store = stores.store()
    history = [{"role": "user", "content": "plan a trip"}]
    first = await store.save(Checkpoint(run_id="s", step_number=1, state={"a": 1}, messages=history))
    history = [*history, {"role": "assistant", "content": "ok", "tool_calls": [{"id": "t1"}]}]
    second = await store.save(
        Checkpoint(run_id="s", step_number=2, state={"a": 2}, messages=history, metadata={"k": "v"})
    )
    assert len(first.checksum) == 64 and first.checkpoint_id and first.timestamp is not None

    latest = await store.load_latest("s")
    assert latest is not None and latest.is_valid
    assert (latest.step_number, latest.state, latest.messages) == (2, {"a": 2}, history)
    assert latest.checksum == second.checksum and latest.metadata == {"k": "v"}
    at_one = await store.load_at_step("s", 1)
    assert at_one is not None and at_one.messages == history[:1] and at_one.state == {"a": 1}
    assert await store.load_at_step("s", 9) is None
    assert await store.load_latest("nothing-here") is None
    assert await store.validate(latest) and await store.validate("s")

    stores.corrupt_state("s", 2)
    assert not await store.validate(latest)
    fallback = await store.load_latest("s")
    assert fallback is not None and fallback.step_number == 1


async def test_a_store_that_lost_the_run_to_a_newer_writer_is_fenced(stores) -> None:
    old, new = stores.store(), stores.store()
    await old.save(Checkpoint(run_id="f", step_number=1, state={}))
    await new.resume("f")
    with pytest.raises(Exception) as fenced:
        await old.save(Checkpoint(run_id="f", step_number=2, state={}))
    assert getattr(fenced.value, "code", None) == grpc.StatusCode.FAILED_PRECONDITION
    assert getattr(fenced.value, "reason", None) == "STALE_EPOCH"


async def test_before_llm_saves_the_state_a_step_starts_from_and_after_tools_the_steps_with_tools(
    stores,
) -> None:
    crashed: list[int] = []

    async def model(step: int) -> str:
        if step == 4 and not crashed:
            crashed.append(step)
            raise TimeoutError("the model call timed out")
        return f"answer {step}"

    async def agent(ctx):
        ctx.add_message("assistant", await ctx.llm(model, ctx.step))
        if ctx.step == 2:
            await ctx.call_tool("lookup", lambda: "looked up")
        return Done(ctx.step) if ctx.step == 5 else None

    store = stores.store()
    llm = RecoverableAgent(agent, store, strategy="every_n:100,before_llm")
    result = await llm.run_with_recovery(None, "before-llm")
    # Each model call first saved the step before it, so the timeout at step 4 lost nothing.
    assert result["recovered_from_step"] == 3 and result["result"] == 5
    tools = RecoverableAgent(agent, store, strategy="every_n:100,after_tools")
    await tools.run_with_recovery(None, "after-tools")
    before, after = await stores.steps("before-llm"), await stores.steps("after-tools")
    assert before == [1, 2, 3, 4, 5]
    assert after == [2, 5]
    await store.close()
