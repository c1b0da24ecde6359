"""Old clients never change behaviour silently: a Resume sent as a client built before
`ResumeRequest.capabilities` existed (raw stubs, nothing declared) gets the old, safe answer
over a corrupt journal entry or a call in doubt; this package's clients declare
CLIENT_CAPABILITY_IN_DOUBT_CALLS by default and get the fallback with the calls reported."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from checkpointd import AsyncClient, Client, DataLoss, FailedPrecondition
from checkpointd._proto import checkpoint_pb2 as pb
from checkpointd._proto import checkpoint_pb2_grpc

CALL = "step-2/send_email/0"


@pytest.fixture
def raw(server) -> Iterator[checkpoint_pb2_grpc.CheckpointServiceStub]:
    """A stub with no package code between it and the wire: what an older client sends."""
    with grpc.insecure_channel(server.target) as channel:
        yield checkpoint_pb2_grpc.CheckpointServiceStub(channel)


def reason_of(error: grpc.RpcError) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """The code, the ErrorInfo reason and its metadata, decoded by hand as any client would."""
    details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")  # type: ignore[attr-defined]
    assert details, error
    status = status_pb2.Status.FromString(details)
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return error.code(), info.reason, dict(info.metadata)  # type: ignore[attr-defined]
    raise AssertionError(f"no ErrorInfo in {status}")


def corrupt_result(server, run_id: str) -> None:
    """Checkpoints at steps 1 and 2 with the email's result journalled between them, then the
    result's stored output damaged: step 2 covers a corrupt entry, step 1 does not."""
    with Client(server.target) as client:
        client.save(run_id=run_id, step=1, state=b"{}")
        client.record_tool_result(
            run_id=run_id, call_id=CALL, tool_name="send_email", step=2, output=b'{"sent":true}'
        )
        client.save(run_id=run_id, step=2, state=b"{}")
    if server.database.kind == "sqlite":
        flip, not_intent = "output = CAST(X'00' || substr(output, 2) AS BLOB)", "intent = 0"
    else:
        flip, not_intent = "output = set_byte(output, 0, 0)", "NOT intent"
    server.database.execute(
        f"UPDATE tool_results SET {flip} WHERE run_id = '{run_id}' AND call_id = '{CALL}' AND {not_intent}"
    )


def quarantined(server, run_id: str) -> list[tuple[int, bool]]:
    with Client(server.target) as client:
        listed = client.list_checkpoints(run_id=run_id).checkpoints
    return [(c.step, bool(c.quarantine_reason)) for c in listed]


def test_an_older_client_gets_data_loss_over_a_corrupt_journal_entry_and_nothing_moves(server, raw) -> None:
    corrupt_result(server, "corrupt")
    with pytest.raises(grpc.RpcError) as refused:
        raw.Resume(pb.ResumeRequest(run_id="corrupt"))
    assert reason_of(refused.value)[:2] == (grpc.StatusCode.DATA_LOSS, "CHECKPOINT_CORRUPT")
    assert quarantined(server, "corrupt") == [(1, False), (2, False)]

    with Client(server.target) as client:
        resumed = client.resume(run_id="corrupt")
        assert resumed.recovered_from_step == 1
        assert list(resumed.corrupt_call_ids) == [CALL]
        assert [(c.call_id, c.corrupt) for c in resumed.in_doubt] == [(CALL, True)]
        # Opting out is the older client's answer, through the package's typed errors.
        with pytest.raises(DataLoss) as opted_out:
            client.resume(run_id="corrupt", capabilities=[])
        assert opted_out.value.reason == "CHECKPOINT_CORRUPT"
    assert quarantined(server, "corrupt") == [(1, False), (2, True)]


def test_an_older_client_is_refused_over_an_intent_without_a_result(server, raw) -> None:
    with Client(server.target) as client:
        client.save(run_id="intent", step=1, state=b"{}")
        client.record_tool_intent(run_id="intent", call_id=CALL, tool_name="send_email", step=2)
    with pytest.raises(grpc.RpcError) as refused:
        raw.Resume(pb.ResumeRequest(run_id="intent"))
    assert reason_of(refused.value) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "CAPABILITY_REQUIRED",
        {"capability": "CLIENT_CAPABILITY_IN_DOUBT_CALLS"},
    )
    with Client(server.target) as client:
        with pytest.raises(FailedPrecondition) as opted_out:
            client.resume(run_id="intent", capabilities=[])
        assert opted_out.value.reason == "CAPABILITY_REQUIRED"
        # A request message without capabilities is declared for too (on a copy).
        request = pb.ResumeRequest(run_id="intent")
        resumed = client.resume(request)
        assert not request.capabilities
    assert [(c.call_id, c.corrupt) for c in resumed.in_doubt] == [(CALL, False)]


async def test_the_async_client_declares_too(server) -> None:
    corrupt_result(server, "async")
    async with AsyncClient(server.target) as client:
        resumed = await client.resume(run_id="async")
    assert resumed.recovered_from_step == 1
    assert list(resumed.corrupt_call_ids) == [CALL]


def test_a_save_past_the_stored_log_says_the_log_is_behind(server) -> None:
    with Client(server.target) as client:
        client.save(run_id="lost", step=1, state=b"{}", messages=[pb.Message(role="user", content=b"a")])
        with pytest.raises(FailedPrecondition) as behind:
            client.save(
                run_id="lost",
                step=3,
                state=b"{}",
                message_offset=2,
                messages=[pb.Message(role="user", content=b"c")],
            )
    assert behind.value.reason == "MESSAGE_LOG_BEHIND"
