"""`AsyncClient`: the asyncio client (grpc.aio), with the same methods as `Client`, awaitable."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any

import grpc
from google.protobuf.message import Message

from ._connection import MAX_MESSAGE_BYTES, Connection, Pem
from ._pages import Rpc, declared, run_async, whole
from ._proto import checkpoint_pb2 as pb
from ._proto import checkpoint_pb2_grpc, task_pb2_grpc
from ._proto import task_pb2 as tpb
from ._rpc import CHECKPOINTS, TASKS, build_request, resume_request
from .errors import Unavailable, from_rpc_error


class AsyncClient:
    """A grpc.aio connection to one checkpointd server; options as for `Client`.

    Create it inside the event loop that uses it (grpc.aio channels belong to one loop).
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
        self._channel = self._connection.aio_channel()
        self._checkpoints = checkpoint_pb2_grpc.CheckpointServiceStub(self._channel)
        self._tasks = task_pb2_grpc.TaskServiceStub(self._channel)

    @property
    def tenant(self) -> str | None:
        return self._connection.tenant

    async def wait_ready(self, timeout: float) -> None:
        """Waits until the channel is connected; `Unavailable` after `timeout` seconds."""
        try:
            await asyncio.wait_for(self._channel.channel_ready(), timeout)
        except asyncio.TimeoutError:
            raise Unavailable(f"{self._connection.address} not reachable within {timeout}s") from None

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _unary(
        self, stub: Any, rpc: str, request: Message | None, fields: dict[str, Any], timeout: float | None
    ) -> Any:
        service = CHECKPOINTS if stub is self._checkpoints else TASKS
        message = build_request(service, rpc, request, fields)
        try:
            return await getattr(stub, rpc)(
                message,
                timeout=timeout if timeout is not None else self._timeout,
                metadata=self._connection.metadata(),
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def _paged_call(self, timeout: float | None) -> Callable[[Rpc], Awaitable[Any]]:
        """Performs one request of a paged call (`_pages.run_async`)."""
        return lambda rpc: self._unary(self._checkpoints, rpc.name, rpc.request, {}, timeout)

    async def validate_tenant(
        self,
        request: pb.ValidateTenantRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> AsyncIterator[pb.ValidateTenantResponse]:
        """CheckpointService/ValidateTenant: the verdicts as the server streams them."""
        message = build_request(CHECKPOINTS, "ValidateTenant", request, fields)
        call = self._checkpoints.ValidateTenant(
            message,
            timeout=timeout if timeout is not None else self._timeout,
            metadata=self._connection.metadata(),
        )
        try:
            async for verdict in call:
                yield verdict
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    async def save(
        self, request: pb.SaveRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.SaveResponse:
        """CheckpointService/Save."""
        return await self._unary(self._checkpoints, "Save", request, fields, timeout)

    async def load_latest(
        self, request: pb.LoadLatestRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LoadLatestResponse:
        """CheckpointService/LoadLatest, with the whole message history however many pages the
        server sends it in (see `_pages`; `timeout` applies to each page)."""
        message = declared(build_request(CHECKPOINTS, "LoadLatest", request, fields))
        return await run_async(whole("LoadLatest", message), self._paged_call(timeout))

    async def load_at_step(
        self, request: pb.LoadAtStepRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LoadAtStepResponse:
        """CheckpointService/LoadAtStep, with the whole message history however many pages the
        server sends it in (see `_pages`; `timeout` applies to each page)."""
        message = declared(build_request(CHECKPOINTS, "LoadAtStep", request, fields))
        return await run_async(whole("LoadAtStep", message), self._paged_call(timeout))

    async def validate(
        self, request: pb.ValidateRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ValidateResponse:
        """CheckpointService/Validate."""
        return await self._unary(self._checkpoints, "Validate", request, fields, timeout)

    async def resume(
        self, request: pb.ResumeRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ResumeResponse:
        """CheckpointService/Resume, declaring that this package handles calls in doubt (see
        `resume_request`; pass `capabilities=[]` to get the answer about them that an older client
        gets), with the restored checkpoint's whole message history however many pages the
        server sends it in (see `_pages`: paging is always declared; a restart is a new Resume,
        so the epoch is the newest one)."""
        message = declared(resume_request(request, fields))
        return await run_async(whole("Resume", message), self._paged_call(timeout))

    async def record_tool_result(
        self,
        request: pb.RecordToolResultRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RecordToolResultResponse:
        """CheckpointService/RecordToolResult."""
        return await self._unary(self._checkpoints, "RecordToolResult", request, fields, timeout)

    async def record_tool_results(
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
        return await self._unary(self._checkpoints, "RecordToolResults", request, fields, timeout)

    async def record_tool_intent(
        self,
        request: pb.RecordToolIntentRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RecordToolIntentResponse:
        """CheckpointService/RecordToolIntent."""
        return await self._unary(self._checkpoints, "RecordToolIntent", request, fields, timeout)

    async def get_journal(
        self, request: pb.GetJournalRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.GetJournalResponse:
        """CheckpointService/GetJournal."""
        return await self._unary(self._checkpoints, "GetJournal", request, fields, timeout)

    async def repair_journal(
        self,
        request: pb.RepairJournalRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RepairJournalResponse:
        """CheckpointService/RepairJournal."""
        return await self._unary(self._checkpoints, "RepairJournal", request, fields, timeout)

    async def list_checkpoints(
        self,
        request: pb.ListCheckpointsRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.ListCheckpointsResponse:
        """CheckpointService/ListCheckpoints."""
        return await self._unary(self._checkpoints, "ListCheckpoints", request, fields, timeout)

    async def delete_run(
        self, request: pb.DeleteRunRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.DeleteRunResponse:
        """CheckpointService/DeleteRun."""
        return await self._unary(self._checkpoints, "DeleteRun", request, fields, timeout)

    async def delete_checkpoints(
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
        return await self._unary(self._checkpoints, "DeleteCheckpoints", request, fields, timeout)

    async def set_retention(
        self, request: pb.SetRetentionRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.SetRetentionResponse:
        """CheckpointService/SetRetention."""
        return await self._unary(self._checkpoints, "SetRetention", request, fields, timeout)

    async def pin_checkpoint(
        self,
        request: pb.PinCheckpointRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.PinCheckpointResponse:
        """CheckpointService/PinCheckpoint."""
        return await self._unary(self._checkpoints, "PinCheckpoint", request, fields, timeout)

    async def unpin_checkpoint(
        self,
        request: pb.UnpinCheckpointRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.UnpinCheckpointResponse:
        """CheckpointService/UnpinCheckpoint."""
        return await self._unary(self._checkpoints, "UnpinCheckpoint", request, fields, timeout)

    async def get_run(
        self, request: pb.GetRunRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.GetRunResponse:
        """CheckpointService/GetRun."""
        return await self._unary(self._checkpoints, "GetRun", request, fields, timeout)

    async def list_runs(
        self, request: pb.ListRunsRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ListRunsResponse:
        """CheckpointService/ListRuns."""
        return await self._unary(self._checkpoints, "ListRuns", request, fields, timeout)

    async def enqueue(
        self, request: tpb.EnqueueRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.EnqueueResponse:
        """TaskService/Enqueue."""
        return await self._unary(self._tasks, "Enqueue", request, fields, timeout)

    async def claim(
        self, request: tpb.ClaimRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ClaimResponse:
        """TaskService/Claim."""
        return await self._unary(self._tasks, "Claim", request, fields, timeout)

    async def heartbeat(
        self, request: tpb.HeartbeatRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.HeartbeatResponse:
        """TaskService/Heartbeat."""
        return await self._unary(self._tasks, "Heartbeat", request, fields, timeout)

    async def complete(
        self, request: tpb.CompleteRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.CompleteResponse:
        """TaskService/Complete."""
        return await self._unary(self._tasks, "Complete", request, fields, timeout)

    async def fail(
        self, request: tpb.FailRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.FailResponse:
        """TaskService/Fail."""
        return await self._unary(self._tasks, "Fail", request, fields, timeout)

    async def release(
        self, request: tpb.ReleaseRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ReleaseResponse:
        """TaskService/Release."""
        return await self._unary(self._tasks, "Release", request, fields, timeout)

    async def request_approval(
        self,
        request: tpb.RequestApprovalRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> tpb.RequestApprovalResponse:
        """TaskService/RequestApproval."""
        return await self._unary(self._tasks, "RequestApproval", request, fields, timeout)

    async def approve(
        self, request: tpb.ApproveRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ApproveResponse:
        """TaskService/Approve."""
        return await self._unary(self._tasks, "Approve", request, fields, timeout)

    async def reject(
        self, request: tpb.RejectRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.RejectResponse:
        """TaskService/Reject."""
        return await self._unary(self._tasks, "Reject", request, fields, timeout)

    async def resume_task(
        self, request: tpb.ResumeTaskRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ResumeTaskResponse:
        """TaskService/ResumeTask."""
        return await self._unary(self._tasks, "ResumeTask", request, fields, timeout)

    async def get_task(
        self, request: tpb.GetRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.GetResponse:
        """TaskService/Get."""
        return await self._unary(self._tasks, "Get", request, fields, timeout)

    async def list_tasks(
        self, request: tpb.ListRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.ListResponse:
        """TaskService/List."""
        return await self._unary(self._tasks, "List", request, fields, timeout)

    async def cancel_task(
        self, request: tpb.CancelRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.CancelResponse:
        """TaskService/Cancel."""
        return await self._unary(self._tasks, "Cancel", request, fields, timeout)

    async def requeue_task(
        self, request: tpb.RequeueRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> tpb.RequeueResponse:
        """TaskService/Requeue."""
        return await self._unary(self._tasks, "Requeue", request, fields, timeout)
