"""`Client`: the synchronous client, one snake_case method per RPC of CheckpointService and
TaskService.

Every method takes the request message, or its fields as keywords, plus an optional `timeout`
in seconds, and returns the response message. A failed call raises a `CheckpointdError`
subclass carrying the gRPC code and the server's machine-readable reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import grpc
from google.protobuf.message import Message

from ._connection import MAX_MESSAGE_BYTES, Connection, Pem
from ._pages import Rpc, declared, run_sync, whole
from ._proto import checkpoint_pb2 as pb
from ._proto import checkpoint_pb2_grpc, task_pb2_grpc
from ._proto import task_pb2 as tpb
from ._rpc import CHECKPOINTS, TASKS, build_request, resume_request
from .errors import Unavailable, from_rpc_error


class Client:
    """A blocking connection to one checkpointd server.

    `target` is `host:port`, `http://host:port` or `https://host:port` (TLS; also implied by
    any certificate option). `ca_cert`, `client_cert` and `client_key` are PEM bytes or file
    paths; `token` is sent as `authorization: Bearer TOKEN`; `tenant` as `x-tenant-id`.
    """

    def __init__(
        self,
        target: str,
        *,
        ca_cert: Pem | None = None,
        client_cert: Pem | None = None,
        client_key: Pem | None = None,
        token: str | None = None,
        tenant: str | None = None,
        timeout: float | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self._connection = Connection.parse(
            target,
            ca_cert=ca_cert,
            client_cert=client_cert,
            client_key=client_key,
            token=token,
            tenant=tenant,
            max_message_bytes=max_message_bytes,
        )
        self._timeout = timeout
        self._channel = self._connection.sync_channel()
        self._checkpoints = checkpoint_pb2_grpc.CheckpointServiceStub(self._channel)
        self._tasks = task_pb2_grpc.TaskServiceStub(self._channel)

    @property
    def tenant(self) -> str | None:
        return self._connection.tenant

    def wait_ready(self, timeout: float) -> None:
        """Blocks until the channel is connected; `Unavailable` after `timeout` seconds."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise Unavailable(f"{self._connection.address} not reachable within {timeout}s") from None

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _unary(
        self, stub: Any, rpc: str, request: Message | None, fields: dict[str, Any], timeout: float | None
    ) -> Any:
        service = CHECKPOINTS if stub is self._checkpoints else TASKS
        message = build_request(service, rpc, request, fields)
        try:
            return getattr(stub, rpc)(
                message,
                timeout=timeout if timeout is not None else self._timeout,
                metadata=self._connection.metadata(),
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def _paged_call(self, timeout: float | None) -> Callable[[Rpc], Any]:
        """Performs one request of a paged call (`_pages.run_sync`)."""
        return lambda rpc: self._unary(self._checkpoints, rpc.name, rpc.request, {}, timeout)

    def validate_tenant(
        self,
        request: pb.ValidateTenantRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> Iterator[pb.ValidateTenantResponse]:
        """CheckpointService/ValidateTenant: the verdicts as the server streams them."""
        message = build_request(CHECKPOINTS, "ValidateTenant", request, fields)
        stream = self._checkpoints.ValidateTenant(
            message,
            timeout=timeout if timeout is not None else self._timeout,
            metadata=self._connection.metadata(),
        )
        try:
            yield from stream
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def save(
        self, request: pb.SaveRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.SaveResponse:
        """CheckpointService/Save."""
        return self._unary(self._checkpoints, "Save", request, fields, timeout)

    def load_latest(
        self, request: pb.LoadLatestRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LoadLatestResponse:
        """CheckpointService/LoadLatest, with the whole message history however many pages the
        server sends it in (see `_pages`; `timeout` applies to each page)."""
        message = declared(build_request(CHECKPOINTS, "LoadLatest", request, fields))
        return run_sync(whole("LoadLatest", message), self._paged_call(timeout))

    def load_at_step(
        self, request: pb.LoadAtStepRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LoadAtStepResponse:
        """CheckpointService/LoadAtStep, with the whole message history however many pages the
        server sends it in (see `_pages`; `timeout` applies to each page)."""
        message = declared(build_request(CHECKPOINTS, "LoadAtStep", request, fields))
        return run_sync(whole("LoadAtStep", message), self._paged_call(timeout))

    def validate(
        self, request: pb.ValidateRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ValidateResponse:
        """CheckpointService/Validate."""
        return self._unary(self._checkpoints, "Validate", request, fields, timeout)

    def resume(
        self, request: pb.ResumeRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ResumeResponse:
        """CheckpointService/Resume, declaring that this package handles calls in doubt (see
        `resume_request`; pass `capabilities=[]` to get the answer about them that an older client
        gets), with the restored checkpoint's whole message history however many pages the
        server sends it in (see `_pages`: paging is always declared; a restart is a new Resume,
        so the epoch is the newest one)."""
        message = declared(resume_request(request, fields))
        return run_sync(whole("Resume", message), self._paged_call(timeout))

    def record_tool_result(
        self,
        request: pb.RecordToolResultRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RecordToolResultResponse:
        """CheckpointService/RecordToolResult."""
        return self._unary(self._checkpoints, "RecordToolResult", request, fields, timeout)

    def record_tool_results(
        self,
        request: pb.RecordToolResultsRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RecordToolResultsResponse:
        """CheckpointService/RecordToolResults: a batch of one run's results in one transaction.

        Keywords: ``run_id``, ``epoch``, ``results`` (``ToolResultInput`` messages or dicts with
        ``call_id``, ``tool_name``, ``step``, ``output``, ``is_error``; at most 1000). The
        response's ``results`` holds one ``RecordToolResultResponse`` per entry, in order.
        """
        return self._unary(self._checkpoints, "RecordToolResults", request, fields, timeout)

    def record_tool_intent(
        self,
        request: pb.RecordToolIntentRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RecordToolIntentResponse:
        """CheckpointService/RecordToolIntent."""
        return self._unary(self._checkpoints, "RecordToolIntent", request, fields, timeout)

    def get_journal(
        self, request: pb.GetJournalRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.GetJournalResponse:
        """CheckpointService/GetJournal."""
        return self._unary(self._checkpoints, "GetJournal", request, fields, timeout)

    def repair_journal(
        self,
        request: pb.RepairJournalRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RepairJournalResponse:
        """CheckpointService/RepairJournal."""
        return self._unary(self._checkpoints, "RepairJournal", request, fields, timeout)

    def list_checkpoints(
        self,
        request: pb.ListCheckpointsRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.ListCheckpointsResponse:
        """CheckpointService/ListCheckpoints."""
        return self._unary(self._checkpoints, "ListCheckpoints", request, fields, timeout)

    def delete_run(
        self, request: pb.DeleteRunRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.DeleteRunResponse:
        """CheckpointService/DeleteRun."""
        return self._unary(self._checkpoints, "DeleteRun", request, fields, timeout)

    def delete_checkpoints(
        self,
        request: pb.DeleteCheckpointsRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.DeleteCheckpointsResponse:
        """CheckpointService/DeleteCheckpoints: delete chosen checkpoints of a run now.

        Fields: ``run_id``, ``steps`` (at most 1000) and an optional ``epoch`` fence. Steps
        without a checkpoint are ignored; pinned ones are kept and named in ``pinned_steps``;
        the message log and the tool journal stay.
        """
        return self._unary(self._checkpoints, "DeleteCheckpoints", request, fields, timeout)

    def set_retention(
        self, request: pb.SetRetentionRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.SetRetentionResponse:
        """CheckpointService/SetRetention."""
        return self._unary(self._checkpoints, "SetRetention", request, fields, timeout)

    def pin_checkpoint(
        self,
        request: pb.PinCheckpointRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.PinCheckpointResponse:
        """CheckpointService/PinCheckpoint."""
        return self._unary(self._checkpoints, "PinCheckpoint", request, fields, timeout)

    def unpin_checkpoint(
        self,
        request: pb.UnpinCheckpointRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.UnpinCheckpointResponse:
        """CheckpointService/UnpinCheckpoint."""
        return self._unary(self._checkpoints, "UnpinCheckpoint", request, fields, timeout)

    def get_run(
        self, request: pb.GetRunRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.GetRunResponse:
        """CheckpointService/GetRun."""
        return self._unary(self._checkpoints, "GetRun", request, fields, timeout)

    def list_runs(
        self, request: pb.ListRunsRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ListRunsResponse:
        """CheckpointService/ListRuns."""
        return self._unary(self._checkpoints, "ListRuns", request, fields, timeout)

    def enqueue(
        self, request: tpb.EnqueueRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.EnqueueResponse:
        """TaskService/Enqueue."""
        return self._unary(self._tasks, "Enqueue", request, fields, timeout)

    def claim(
        self, request: tpb.ClaimRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ClaimResponse:
        """TaskService/Claim."""
        return self._unary(self._tasks, "Claim", request, fields, timeout)

    def heartbeat(
        self, request: tpb.HeartbeatRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.HeartbeatResponse:
        """TaskService/Heartbeat."""
        return self._unary(self._tasks, "Heartbeat", request, fields, timeout)

    def complete(
        self, request: tpb.CompleteRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.CompleteResponse:
        """TaskService/Complete."""
        return self._unary(self._tasks, "Complete", request, fields, timeout)

    def fail(
        self, request: tpb.FailRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.FailResponse:
        """TaskService/Fail."""
        return self._unary(self._tasks, "Fail", request, fields, timeout)

    def release(
        self, request: tpb.ReleaseRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ReleaseResponse:
        """TaskService/Release."""
        return self._unary(self._tasks, "Release", request, fields, timeout)

    def request_approval(
        self,
        request: tpb.RequestApprovalRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> tpb.RequestApprovalResponse:
        """TaskService/RequestApproval."""
        return self._unary(self._tasks, "RequestApproval", request, fields, timeout)

    def approve(
        self, request: tpb.ApproveRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ApproveResponse:
        """TaskService/Approve."""
        return self._unary(self._tasks, "Approve", request, fields, timeout)

    def reject(
        self, request: tpb.RejectRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.RejectResponse:
        """TaskService/Reject."""
        return self._unary(self._tasks, "Reject", request, fields, timeout)

    def resume_task(
        self, request: tpb.ResumeTaskRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ResumeTaskResponse:
        """TaskService/ResumeTask."""
        return self._unary(self._tasks, "ResumeTask", request, fields, timeout)

    def get_task(
        self, request: tpb.GetRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.GetResponse:
        """TaskService/Get."""
        return self._unary(self._tasks, "Get", request, fields, timeout)

    def list_tasks(
        self, request: tpb.ListRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ListResponse:
        """TaskService/List."""
        return self._unary(self._tasks, "List", request, fields, timeout)

    def cancel_task(
        self, request: tpb.CancelRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.CancelResponse:
        """TaskService/Cancel."""
        return self._unary(self._tasks, "Cancel", request, fields, timeout)

    def requeue_task(
        self, request: tpb.RequeueRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.RequeueResponse:
        """TaskService/Requeue."""
        return self._unary(self._tasks, "Requeue", request, fields, timeout)
