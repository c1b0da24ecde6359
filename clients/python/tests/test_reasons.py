"""Machine-readable reasons (google.rpc.ErrorInfo, domain `checkpointd`) decoded from a real
server's refusals, and the run-level reads a client author needs: GetRun, ListRuns, message
offsets and strict Resume."""

from __future__ import annotations

import datetime

import grpc
import pytest

from checkpointd import (
    CheckpointStore,
    Client,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from checkpointd.checksum import MessageChain, ToolChain, checkpoint_checksum
from checkpointd.errors import DOMAIN


def test_a_wrong_or_upper_case_client_checksum_is_refused_with_its_reason(server) -> None:
    request = dict(run_id="sum", step=1, content_type="application/json", state=b"{}")
    right = checkpoint_checksum(
        run_id="sum",
        step=1,
        content_type="application/json",
        state=b"{}",
        metadata={},
        messages=MessageChain(),
        tools=ToolChain(),
    )
    with Client(server.target) as client:
        with pytest.raises(InvalidArgument) as wrong:
            client.save(**request, checksum="1" * 64)
        assert (wrong.value.reason, wrong.value.domain) == ("CHECKSUM_MISMATCH", DOMAIN)
        with pytest.raises(InvalidArgument) as upper:
            client.save(**request, checksum=right.upper())
        assert upper.value.reason == "INVALID_ARGUMENT"
        assert upper.value.metadata.get("field") == "checksum"
        assert client.save(**request, checksum=right).checksum == right


def test_fencing_refusals_say_which_fence(server) -> None:
    with Client(server.target) as client:
        first = client.resume(run_id="fenced").epoch
        client.resume(run_id="fenced")
        with pytest.raises(FailedPrecondition) as stale:
            client.save(run_id="fenced", step=1, state=b"{}", epoch=first)
        assert stale.value.reason == "STALE_EPOCH"
        with pytest.raises(FailedPrecondition) as ahead:
            client.save(run_id="fenced", step=1, state=b"{}", epoch=first + 100)
        assert ahead.value.reason == "EPOCH_NOT_ISSUED"

        task_id = client.enqueue(run_id="fenced").task.task_id
        lease = datetime.timedelta(seconds=30)
        attempt = client.claim(worker_id="w", lease_duration=lease, batch_size=1).tasks[0].attempt
        with pytest.raises(FailedPrecondition) as lost:
            client.heartbeat(task_id=task_id, attempt=attempt + 1, lease_duration=lease)
        assert lost.value.reason == "LEASE_LOST" and lost.value.code == grpc.StatusCode.FAILED_PRECONDITION


def test_not_found_says_what_is_missing(server) -> None:
    with Client(server.target) as client:
        with pytest.raises(NotFound) as run:
            client.get_run(run_id="never-seen")
        assert run.value.reason == "RUN_NOT_FOUND"
        with pytest.raises(NotFound) as strict:
            client.resume(run_id="typo-run", require_existing=True)
        assert strict.value.reason == "RUN_NOT_FOUND"
        client.save(run_id="known", step=1, state=b"{}")
        with pytest.raises(NotFound) as step:
            client.load_at_step(run_id="known", step=7)
        assert step.value.reason == "CHECKPOINT_NOT_FOUND"
        with pytest.raises(NotFound) as task:
            client.get_task(task_id="00000000-0000-0000-0000-000000000000")
        assert task.value.reason == "TASK_NOT_FOUND"


def test_run_heads_are_read_and_listed_without_payloads(server) -> None:
    with Client(server.target) as client:
        epoch = client.resume(run_id="team/a").epoch
        client.save(
            run_id="team/a",
            step=2,
            state=b"{}",
            epoch=epoch,
            messages=[{"role": "user", "content": b"1"}, {"role": "assistant", "content": b"2"}],
        )
        client.save(run_id="team/b", step=1, state=b"{}")
        client.save(run_id="other", step=1, state=b"{}")
        head = client.get_run(run_id="team/a").run
        assert (head.epoch, head.latest_step, head.latest_valid_step) == (epoch, 2, 2)
        assert (head.message_count, head.checkpoint_count) == (2, 1)
        listed = client.list_runs(run_id_prefix="team/").runs
        assert [r.run_id for r in listed] == ["team/a", "team/b"]


async def test_loads_from_a_message_offset_carry_only_the_tail(server) -> None:
    with Client(server.target) as client:
        client.save(
            run_id="tail",
            step=1,
            state=b"{}",
            messages=[{"role": "user", "content": bytes([n])} for n in range(5)],
        )
        loaded = client.load_latest(run_id="tail", message_offset=3).checkpoint
        assert loaded.messages_offset == 3 and loaded.message_count == 5
        assert [m.content for m in loaded.messages] == [b"\x03", b"\x04"]
    store = CheckpointStore(server.target)
    with pytest.raises(NotFound):
        await store.resume("not-a-run", require_existing=True)
    resumed = await store.resume("tail", require_existing=True)
    assert resumed.checkpoint is not None and resumed.checkpoint.is_valid
    assert len(resumed.checkpoint.messages) == 5
    head = await store.run_head("tail")
    assert head is not None and head.epoch == resumed.epoch and head.message_count == 5
    assert await store.run_head("not-a-run") is None
    await store.close()
