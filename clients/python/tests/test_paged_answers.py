"""Paged answers against a real server whose pages hold about 1000 bytes of messages: LoadLatest,
LoadAtStep (by step and by label, from an offset) and Resume, sync and async, hand back the
whole history exactly as saved, following each continuation without the caller seeing it; a
checkpoint deleted between pages makes the call start again, at most three times."""

from __future__ import annotations

from typing import Any

import pytest

from checkpointd import AsyncClient, Client, FailedPrecondition
from checkpointd._pages import RESTARTS
from checkpointd._proto import checkpoint_pb2 as pb

RUN = "long-run"
STEPS = 5
PER_STEP = 10
# 50 messages of ~160 bytes: about eight pages of 1000 bytes for the whole history.
BODY = 150


@pytest.fixture
def server_args() -> list[str]:
    return ["--max-answer-message-bytes", "1000"]


def message(index: int) -> dict[str, Any]:
    role = "user" if index % 2 == 0 else "assistant"
    return {"role": role, "content": f"{index:04d}".encode() + bytes([65 + index % 26]) * BODY}


def history(count: int) -> list[pb.Message]:
    return [pb.Message(**message(i)) for i in range(count)]


def save_long_run(client: Client, run_id: str = RUN, steps: int = STEPS) -> None:
    """`steps` checkpoints of PER_STEP new messages each, labelled `label-<step>`, with a tool
    result journalled at step 2."""
    for step in range(1, steps + 1):
        start = (step - 1) * PER_STEP
        client.save(
            run_id=run_id,
            step=step,
            content_type="application/json",
            state=f'{{"step": {step}}}'.encode(),
            messages=[message(i) for i in range(start, start + PER_STEP)],
            message_offset=start,
            metadata={"step": str(step)},
            label=f"label-{step}",
        )
        if step == 2:
            client.record_tool_result(
                run_id=run_id, call_id="step-2/lookup/0", tool_name="lookup", step=2, output=b"found"
            )


class CountingClient(Client):
    """A `Client` that keeps the name of each request it sends, and whether it was a page."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.sent: list[tuple[str, bool]] = []

    def _unary(self, stub: Any, rpc: str, request: Any, fields: dict[str, Any], timeout: float | None) -> Any:
        self.sent.append((rpc, bool(getattr(request, "continuation", b""))))
        return super()._unary(stub, rpc, request, fields, timeout)

    def pages(self) -> int:
        return sum(1 for _, page in self.sent if page)


def assert_whole(checkpoint: pb.Checkpoint, step: int, offset: int = 0) -> None:
    count = step * PER_STEP
    assert checkpoint.step == step
    assert checkpoint.state == f'{{"step": {step}}}'.encode()
    assert dict(checkpoint.metadata) == {"step": str(step)}
    assert (checkpoint.messages_offset, checkpoint.message_count) == (offset, count)
    assert list(checkpoint.messages) == history(count)[offset:]


def test_load_latest_follows_every_page_and_returns_the_history_as_saved(server) -> None:
    with CountingClient(server.target) as client:
        save_long_run(client)
        client.sent.clear()
        answer = client.load_latest(run_id=RUN)
        assert_whole(answer.checkpoint, STEPS)
        assert answer.continuation == b""
        assert [r.call_id for r in answer.tool_results] == ["step-2/lookup/0"]
        # The history is ~8 KB, so it came back in several pages, not in one answer.
        assert client.pages() >= 5, client.sent
        assert client.sent[0] == ("LoadLatest", False)


def test_load_at_step_by_step_by_label_and_from_an_offset_returns_whole_answers(server) -> None:
    with CountingClient(server.target) as client:
        save_long_run(client)
        assert_whole(client.load_at_step(run_id=RUN, step=4).checkpoint, 4)
        by_label = client.load_at_step(run_id=RUN, label="label-3")
        assert_whole(by_label.checkpoint, 3)
        assert [r.call_id for r in by_label.tool_results] == ["step-2/lookup/0"]
        assert_whole(client.load_latest(run_id=RUN, message_offset=23).checkpoint, STEPS, offset=23)
        assert_whole(client.load_at_step(run_id=RUN, step=5, message_offset=37).checkpoint, 5, offset=37)
        # Past the end: no messages and no page to follow.
        client.sent.clear()
        tail = client.load_at_step(run_id=RUN, step=2, message_offset=2**63).checkpoint
        assert (len(tail.messages), tail.messages_offset) == (0, 2 * PER_STEP)
        assert client.pages() == 0


def test_resume_returns_the_restored_history_whole_with_its_journal(server) -> None:
    with CountingClient(server.target) as client:
        save_long_run(client)
        client.sent.clear()
        resumed = client.resume(run_id=RUN)
        assert resumed.recovered_from_step == STEPS and not resumed.restarted_from_scratch
        assert_whole(resumed.checkpoint, STEPS)
        assert [r.call_id for r in resumed.tool_results] == ["step-2/lookup/0"]
        assert client.pages() >= 5
        # The epoch handed out is the run's: a save under it is accepted.
        client.save(
            run_id=RUN, step=STEPS + 1, state=b"{}", message_offset=STEPS * PER_STEP, epoch=resumed.epoch
        )


async def test_the_async_client_returns_the_same_whole_answers(server) -> None:
    with Client(server.target) as client:
        save_long_run(client)
        expected = client.load_latest(run_id=RUN)
    async with AsyncClient(server.target) as client:
        latest = await client.load_latest(run_id=RUN)
        assert latest == expected
        assert_whole((await client.load_at_step(run_id=RUN, label="label-2")).checkpoint, 2)
        assert_whole((await client.load_latest(run_id=RUN, message_offset=11)).checkpoint, STEPS, offset=11)
        assert_whole((await client.resume(run_id=RUN)).checkpoint, STEPS)


class DeletingClient(CountingClient):
    """Deletes the run's latest checkpoint just before the first page of each answer is asked
    for (up to `deletions` times), as a concurrent prune would."""

    def __init__(self, target: str, deletions: int) -> None:
        super().__init__(target)
        self.deletions = deletions

    def _unary(self, stub: Any, rpc: str, request: Any, fields: dict[str, Any], timeout: float | None) -> Any:
        first_page = bool(getattr(request, "continuation", b"")) and not self.sent[-1][1]
        if first_page and self.deletions:
            self.deletions -= 1
            latest = super()._unary(stub, "GetRun", pb.GetRunRequest(run_id=RUN), {}, None).run.latest_step
            super()._unary(
                stub, "DeleteCheckpoints", pb.DeleteCheckpointsRequest(run_id=RUN, steps=[latest]), {}, None
            )
        return super()._unary(stub, rpc, request, fields, timeout)


def test_a_checkpoint_deleted_between_pages_makes_the_load_start_again(server) -> None:
    with DeletingClient(server.target, deletions=1) as client:
        save_long_run(client)
        client.sent.clear()
        answer = client.load_latest(run_id=RUN)
        # Step 5 went between its pages; the second LoadLatest found step 4, whole.
        assert_whole(answer.checkpoint, STEPS - 1)
        assert [rpc for rpc, page in client.sent if rpc == "LoadLatest"] == ["LoadLatest"] * 2


def test_a_checkpoint_that_keeps_changing_fails_after_three_restarts(server) -> None:
    with DeletingClient(server.target, deletions=RESTARTS + 1) as client:
        save_long_run(client, steps=STEPS + 1)
        client.sent.clear()
        with pytest.raises(FailedPrecondition) as changed:
            client.resume(run_id=RUN)
        assert changed.value.reason == "CHECKPOINT_CHANGED"
        assert [rpc for rpc, _ in client.sent if rpc == "Resume"] == ["Resume"] * (RESTARTS + 1)
        # The next call, unhindered, gets the latest checkpoint that is left, whole.
        client.deletions = 0
        assert_whole(client.load_latest(run_id=RUN).checkpoint, STEPS + 1 - (RESTARTS + 1))


def test_a_corrupt_message_on_a_later_page_ends_in_the_previous_valid_checkpoint_whole(
    server, backend
) -> None:
    with CountingClient(server.target) as client:
        save_long_run(client)
        # Message 45 belongs to step 5 only, far past the first page of its answer.
        backend.execute(f"UPDATE messages SET role = 'tampered' WHERE run_id = '{RUN}' AND seq = 45")
        client.sent.clear()
        answer = client.load_latest(run_id=RUN)
        assert_whole(answer.checkpoint, STEPS - 1)
        # Loading again gives the same answer.
        assert_whole(client.load_latest(run_id=RUN).checkpoint, STEPS - 1)
