"""Client.delete_checkpoints and AsyncClient.delete_checkpoints against a real server: chosen
checkpoints go at once, the previous one becomes the latest, and an epoch fences the call."""

from __future__ import annotations

import pytest

from checkpointd import AsyncClient, Client, FailedPrecondition, ResourceExhausted


def _save_steps(client: Client, run_id: str, last: int) -> None:
    for step in range(1, last + 1):
        client.save(
            run_id=run_id,
            step=step,
            state=b"{}",
            messages=[{"role": "assistant", "content": f"reply {step}".encode()}],
            message_offset=step - 1,
        )


def test_deleting_the_latest_checkpoint_makes_the_previous_one_latest(server) -> None:
    with Client(server.target) as client:
        _save_steps(client, "run-1", 3)
        answer = client.delete_checkpoints(run_id="run-1", steps=[3, 9], epoch=None)
        assert answer.deleted_checkpoints == 1 and list(answer.pinned_steps) == []
        assert client.load_latest(run_id="run-1").checkpoint.step == 2
        head = client.get_run(run_id="run-1").run
        assert (head.latest_step, head.checkpoint_count, head.message_count) == (2, 2, 3)
        # A retry is harmless; the run goes on from the log as it stands.
        assert client.delete_checkpoints(run_id="run-1", steps=[3]).deleted_checkpoints == 0
        client.save(run_id="run-1", step=4, state=b"{}", message_offset=head.message_count)
        assert client.load_latest(run_id="run-1").checkpoint.step == 4
        with pytest.raises(ResourceExhausted) as refused:
            client.delete_checkpoints(run_id="run-1", steps=list(range(1001)))
        assert refused.value.reason == "TOO_LARGE"


async def test_the_async_client_deletes_under_the_runs_epoch_only(server) -> None:
    with Client(server.target) as client:
        _save_steps(client, "arun", 2)
    async with AsyncClient(server.target) as client:
        epoch = (await client.resume(run_id="arun")).epoch
        with pytest.raises(FailedPrecondition) as fenced:
            await client.delete_checkpoints(run_id="arun", steps=[1], epoch=epoch - 1)
        assert fenced.value.reason == "STALE_EPOCH"
        answer = await client.delete_checkpoints(run_id="arun", steps=[1], epoch=epoch)
        assert answer.deleted_checkpoints == 1
        assert (await client.get_run(run_id="arun")).run.checkpoint_count == 1
