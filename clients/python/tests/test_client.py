"""The sync and async clients against a real server: every call shape, metadata and errors."""

from __future__ import annotations

import datetime

import grpc
import pytest

from checkpointd import AsyncClient, Client, InvalidArgument, NotFound
from checkpointd.checksum import MessageChain, ToolChain, checkpoint_checksum
from checkpointd.errors import CheckpointdError


def test_sync_client_saves_loads_and_lists(server) -> None:
    with Client(server.target) as client:
        saved = client.save(
            run_id="run-1",
            step=1,
            content_type="application/json",
            state=b'{"n":1}',
            messages=[{"role": "user", "content": b"hi"}],
        )
        assert len(saved.checksum) == 64 and not saved.already_existed
        latest = client.load_latest(run_id="run-1")
        assert latest.checkpoint.step == 1 and latest.checkpoint.state == b'{"n":1}'
        assert [m.content for m in latest.checkpoint.messages] == [b"hi"]
        listed = client.list_checkpoints(run_id="run-1")
        assert [c.step for c in listed.checkpoints] == [1]
        verdicts = list(client.validate_tenant())
        assert [(v.run_id, v.verdict.step, v.verdict.valid) for v in verdicts] == [("run-1", 1, True)]


def test_the_tenant_header_scopes_every_call(server) -> None:
    with Client(server.target, tenant="acme") as acme, Client(server.target) as default:
        acme.save(run_id="shared-name", step=1, state=b"acme")
        with pytest.raises(NotFound):
            default.load_latest(run_id="shared-name")
        assert acme.load_latest(run_id="shared-name").checkpoint.state == b"acme"


def test_a_16_mib_state_loads_back_past_grpcios_default_4_mib_limit(server) -> None:
    state = bytes(range(256)) * (16 * 1024 * 1024 // 256 - 64)
    with Client(server.target) as client:
        client.save(run_id="big", step=1, state=state)
        assert client.load_latest(run_id="big").checkpoint.state == state


def test_errors_are_typed_with_their_grpc_code(server) -> None:
    with Client(server.target) as client:
        with pytest.raises(NotFound) as missing:
            client.load_latest(run_id="never-saved")
        assert missing.value.code == grpc.StatusCode.NOT_FOUND
        assert isinstance(missing.value, CheckpointdError)
        with pytest.raises(InvalidArgument) as bad:
            client.save(run_id="", step=1)
        assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_a_client_checksum_is_accepted_and_a_wrong_one_refused(server) -> None:
    state = b'{"k":"v"}'
    messages = [("user", b"hello")]
    right = checkpoint_checksum(
        run_id="sum",
        step=2,
        content_type="application/json",
        state=state,
        metadata={"agent": "py"},
        messages=MessageChain().extend(messages),
        tools=ToolChain(),
    )
    with Client(server.target) as client:
        request = dict(
            run_id="sum",
            step=2,
            content_type="application/json",
            state=state,
            metadata={"agent": "py"},
            messages=[{"role": r, "content": c} for r, c in messages],
        )
        with pytest.raises(InvalidArgument) as refused:
            client.save(**request, checksum="0" * 64)
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.reason == "CHECKSUM_MISMATCH"
        saved = client.save(**request, checksum=right)
        assert saved.checksum == right


def test_a_request_message_or_keywords_but_not_both(server) -> None:
    from checkpointd import v1 as pb

    with Client(server.target) as client:
        with pytest.raises(TypeError):
            client.load_latest(pb.LoadLatestRequest(run_id="x"), run_id="y")
        with pytest.raises(TypeError):
            client.load_latest(pb.SaveRequest(run_id="x"))


async def test_async_client_resumes_fences_and_runs_the_queue(server) -> None:
    async with AsyncClient(f"http://{server.addr}") as client:
        await client.wait_ready(10)
        resumed = await client.resume(run_id="arun")
        assert resumed.restarted_from_scratch and resumed.epoch >= 1
        await client.save(run_id="arun", step=1, state=b"{}", epoch=resumed.epoch)
        again = await client.resume(run_id="arun")
        assert again.recovered_from_step == 1 and again.epoch > resumed.epoch
        with pytest.raises(CheckpointdError) as fenced:
            await client.save(run_id="arun", step=2, state=b"{}", epoch=resumed.epoch)
        assert fenced.value.code == grpc.StatusCode.FAILED_PRECONDITION

        enqueued = await client.enqueue(run_id="arun", input=b'{"go":1}')
        task_id = enqueued.task.task_id
        claimed = await client.claim(
            worker_id="w1", lease_duration=datetime.timedelta(seconds=30), batch_size=1
        )
        assert [t.task_id for t in claimed.tasks] == [task_id]
        attempt = claimed.tasks[0].attempt
        await client.heartbeat(
            task_id=task_id, attempt=attempt, lease_duration=datetime.timedelta(seconds=30)
        )
        await client.complete(task_id=task_id, attempt=attempt, result=b"done")
        task = (await client.get_task(task_id=task_id)).task
        assert task.result == b"done"
        verdicts = [v async for v in client.validate_tenant()]
        assert [v.verdict.step for v in verdicts] == [1]


def test_targets_and_tls_options_are_checked() -> None:
    with pytest.raises(ValueError):
        Client("http://127.0.0.1:1", ca_cert=b"-----BEGIN CERTIFICATE-----")
    with pytest.raises(ValueError):
        Client("127.0.0.1:1", client_cert=b"x")
    with pytest.raises(ValueError):
        Client("https://host/with/path")
