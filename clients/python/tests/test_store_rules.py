"""The checkpoint rules a store relies on, once against the server (SQLite, Postgres) and once
against the in-process memory backend, through the store's own client: idempotent saves and
tool results, the client checksum, fencing, message offsets, intents in doubt with their key,
and `require_existing`. The memory backend's damage hooks then prove its verification."""

from __future__ import annotations

import pytest

from checkpointd import Checkpoint, CheckpointStore, DataLoss, NotFound
from checkpointd.checksum import idempotency_key
from checkpointd.errors import AlreadyExists, FailedPrecondition, InvalidArgument


async def test_a_retried_save_changes_nothing_and_other_content_at_its_step_conflicts(stores) -> None:
    store = stores.store()
    epoch = (await store.resume("idem")).epoch
    save = dict(run_id="idem", step=1, content_type="application/json", state=b"{}", epoch=epoch)
    first = await store.client.save(**save)
    again = await store.client.save(**save)
    assert again.already_existed and (again.checkpoint_id, again.checksum) == (
        first.checkpoint_id,
        first.checksum,
    )
    with pytest.raises(AlreadyExists) as conflict:
        await store.client.save(**{**save, "state": b'{"other":1}'})
    assert conflict.value.reason == "STEP_CONFLICT"
    with pytest.raises(FailedPrecondition) as behind:
        await store.client.save(**{**save, "step": 0, "state": b"{}"})
    assert behind.value.reason == "STEP_BEHIND_LATEST"
    with pytest.raises(InvalidArgument) as mismatch:
        await store.client.save(**{**save, "step": 2, "checksum": "0" * 64})
    assert mismatch.value.reason == "CHECKSUM_MISMATCH"
    await store.close()


async def test_writes_under_a_superseded_or_unissued_epoch_are_fenced(stores) -> None:
    store = stores.store()
    old = (await store.resume("fenced")).epoch
    new = (await stores.store().resume("fenced")).epoch
    assert new == old + 1
    for epoch, reason in ((old, "STALE_EPOCH"), (new + 1, "EPOCH_NOT_ISSUED")):
        with pytest.raises(FailedPrecondition) as fenced:
            await store.client.record_tool_result(
                run_id="fenced", call_id="c", tool_name="t", step=1, output=b"1", epoch=epoch
            )
        assert fenced.value.reason == reason
    await store.close()


async def test_a_retried_tool_result_returns_the_stored_one(stores) -> None:
    store = stores.store()
    first = await store.record_tool_result("tools", "step-1/lookup/0", "lookup", 1, b'"a"')
    again = await store.client.record_tool_result(
        run_id="tools",
        call_id="step-1/lookup/0",
        tool_name="lookup",
        step=1,
        output=b'"b"',
        epoch=store.epoch("tools"),
    )
    assert again.already_recorded and again.result.output == b'"a"' and again.result.seq == first.seq == 1
    await store.close()


async def test_an_intent_without_a_result_is_in_doubt_after_a_resume_with_its_key(stores) -> None:
    store = stores.store()
    reply = await store.record_tool_intent("email", "step-2/send/0", "send", 2)
    assert not reply.already_recorded
    resumed = await stores.store().resume("email")
    (call,) = resumed.in_doubt
    assert (call.call_id, call.step, call.corrupt) == ("step-2/send/0", 2, False)
    # Idempotency key v1 of the tenant that wrote it (`default` with auth off).
    assert call.idempotency_key == reply.intent.idempotency_key
    assert call.idempotency_key == idempotency_key("default", "email", "step-2/send/0")
    await store.close()


async def test_saves_send_only_new_messages_and_loads_return_a_tail(stores) -> None:
    store = stores.store()
    history = [{"role": "user", "content": n} for n in range(5)]
    await store.save(Checkpoint(run_id="log", step_number=1, state={}, messages=history[:2]))
    await store.save(Checkpoint(run_id="log", step_number=2, state={}, messages=history))
    head = await store.run_head("log")
    assert head is not None and (head.message_count, head.checkpoint_count) == (5, 2)
    tail = (await store.client.load_latest(run_id="log", message_offset=3)).checkpoint
    assert (tail.messages_offset, tail.message_count, len(tail.messages)) == (3, 5, 2)
    loaded = await store.load_latest("log")
    assert loaded is not None and loaded.is_valid and loaded.messages == history
    await store.close()


async def test_require_existing_refuses_a_run_never_seen(stores) -> None:
    store = stores.store()
    with pytest.raises(NotFound) as unknown:
        await store.resume("never-seen", require_existing=True)
    assert unknown.value.reason == "RUN_NOT_FOUND"
    assert await store.run_head("never-seen") is None
    await store.close()


async def test_in_memory_a_corrupt_checkpoint_is_quarantined_and_skipped() -> None:
    store = CheckpointStore.in_memory()
    for step in (1, 2):
        await store.save(Checkpoint(run_id="m", step_number=step, state={"step": step}))
    assert store.backend is not None
    store.backend.corrupt_state("m", 2)
    with pytest.raises(DataLoss):
        await store.load_at_step("m", 2)
    latest = await store.load_latest("m")
    assert latest is not None and latest.step_number == 1 and latest.is_valid
    assert not await store.validate("m")
    resumed = await store.resume("m")
    assert (resumed.recovered_from_step, resumed.skipped_steps) == (1, [2])
    store.backend.corrupt_state("m", 1)
    assert await store.load_latest("m") is None
    resumed = await store.resume("m")
    assert resumed.restarted_from_scratch and resumed.checkpoint is None
    assert resumed.skipped_steps == [2, 1]


async def test_in_memory_a_corrupt_journal_entry_restores_before_it_and_is_in_doubt() -> None:
    store = CheckpointStore.in_memory()
    await store.record_tool_result("j", "step-1/lookup/0", "lookup", 1, b"1")
    await store.save(Checkpoint(run_id="j", step_number=1, state={}))
    await store.record_tool_result("j", "step-2/send/0", "send", 2, b"2")
    await store.save(Checkpoint(run_id="j", step_number=2, state={}))
    assert store.backend is not None
    store.backend.corrupt_tool_result("j", "step-2/send/0")
    # A plain read refuses: dropping a journalled result could run a side effect twice.
    with pytest.raises(DataLoss):
        await store.client.load_latest(run_id="j")
    resumed = await store.resume("j")
    assert resumed.recovered_from_step == 1 and resumed.skipped_steps == [2]
    assert resumed.corrupt_call_ids == ["step-2/send/0"]
    assert [(c.call_id, c.corrupt) for c in resumed.in_doubt] == [("step-2/send/0", True)]
    assert store.journalled("j", "step-1/lookup/0") is not None
    assert store.journalled("j", "step-2/send/0") is None
