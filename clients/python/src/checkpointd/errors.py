"""Errors: every failed call raises a `CheckpointdError` subclass named after its gRPC code.

Each carries `.code` (a `grpc.StatusCode`) and `.reason`, the machine-readable reason of the
`google.rpc.ErrorInfo` detail the server attaches (`STALE_EPOCH`, `LEASE_LOST`, ...; `None`
when the status has no such detail), so callers branch on data, never on message text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

#: The `ErrorInfo.domain` of the reasons checkpointd itself sets.
DOMAIN = "checkpointd"
_DETAILS_KEY = "grpc-status-details-bin"
#: The reason of a call id journalled with other arguments (`ReplayMismatch`).
ARGUMENTS_MISMATCH = "ARGUMENTS_MISMATCH"


class CheckpointdError(Exception):
    """A call to checkpointd failed."""

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode | None = None,
        reason: str | None = None,
        domain: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.reason = reason
        self.domain = domain
        self.metadata: dict[str, str] = dict(metadata or {})

    def __str__(self) -> str:
        reason = f" [{self.reason}]" if self.reason else ""
        return f"{self.code.name}{reason}: {self.message}"


class Cancelled(CheckpointdError):
    code = grpc.StatusCode.CANCELLED


class Unknown(CheckpointdError):
    code = grpc.StatusCode.UNKNOWN


class InvalidArgument(CheckpointdError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceeded(CheckpointdError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFound(CheckpointdError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(CheckpointdError):
    code = grpc.StatusCode.ALREADY_EXISTS


class ReplayMismatch(AlreadyExists):
    """A journalled call id was reused with other arguments: its recorded result (or intent)
    belongs to a different call, so it is not replayed and the tool is not run under that id.

    Raised by the client before a replay whose stored `arguments_digest` differs from the
    call's, and for the server's `ALREADY_EXISTS` reason `ARGUMENTS_MISMATCH`. `call_id`,
    `stored_digest` and `request_digest` name the call and both digests (see
    `checkpointd.digest`). Fatal: the same call fails the same way on every retry."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.reason = self.reason or ARGUMENTS_MISMATCH
        self.call_id = self.metadata.get("call_id", "")
        self.stored_digest = self.metadata.get("stored_digest", "")
        self.request_digest = self.metadata.get("request_digest", "")

    @classmethod
    def of(cls, call_id: str, stored_digest: str, request_digest: str) -> ReplayMismatch:
        """The mismatch a client finds itself, before replaying."""
        return cls(
            f"tool call {call_id} was journalled with other arguments (digest {stored_digest}); "
            f"this call's arguments have digest {request_digest}: the journalled result is not "
            "replayed and the tool is not called (the call id must name one call)",
            reason=ARGUMENTS_MISMATCH,
            domain=DOMAIN,
            metadata={"call_id": call_id, "stored_digest": stored_digest, "request_digest": request_digest},
        )


class PermissionDenied(CheckpointdError):
    code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(CheckpointdError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(CheckpointdError):
    """The run's state forbids the call; `.reason` says why. Fenced (`STALE_EPOCH`,
    `EPOCH_NOT_ISSUED`, `LEASE_LOST`, `STEP_BEHIND_LATEST`): another writer owns the run.
    `MESSAGE_LOG_BEHIND`: the stored message log lost what this client saved before (a
    failover, say); Resume and continue from what it restores. `CAPABILITY_REQUIRED`: the
    answer needs a capability the request did not declare (`.metadata["capability"]`)."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(CheckpointdError):
    code = grpc.StatusCode.ABORTED


class OutOfRange(CheckpointdError):
    code = grpc.StatusCode.OUT_OF_RANGE


class Unimplemented(CheckpointdError):
    code = grpc.StatusCode.UNIMPLEMENTED


class Internal(CheckpointdError):
    code = grpc.StatusCode.INTERNAL


class Unavailable(CheckpointdError):
    code = grpc.StatusCode.UNAVAILABLE


class DataLoss(CheckpointdError):
    """A checksum did not verify: the data is corrupt (or, on Save, not what the client meant)."""

    code = grpc.StatusCode.DATA_LOSS


class Unauthenticated(CheckpointdError):
    code = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE: dict[grpc.StatusCode, type[CheckpointdError]] = {
    cls.code: cls
    for cls in (
        Cancelled,
        Unknown,
        InvalidArgument,
        DeadlineExceeded,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        OutOfRange,
        Unimplemented,
        Internal,
        Unavailable,
        DataLoss,
        Unauthenticated,
    )
}


def error_info(trailing_metadata: Sequence[tuple[str, Any]] | None) -> error_details_pb2.ErrorInfo | None:
    """The first `google.rpc.ErrorInfo` in a status's details, if any."""
    for key, value in trailing_metadata or ():
        if key != _DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except Exception:  # noqa: BLE001 - a malformed detail is no detail
            return None
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                return info
    return None


def from_rpc_error(error: grpc.RpcError) -> CheckpointdError:
    """The `CheckpointdError` for a failed call (sync `grpc.RpcError` or `grpc.aio.AioRpcError`)."""
    code_of = getattr(error, "code", None)
    code = code_of() if callable(code_of) else grpc.StatusCode.UNKNOWN
    details_of = getattr(error, "details", None)
    message = (details_of() if callable(details_of) else None) or str(error)
    trailers_of = getattr(error, "trailing_metadata", None)
    trailers = trailers_of() if callable(trailers_of) else None
    info = error_info(trailers)
    cls = _BY_CODE.get(code, CheckpointdError)
    if cls is AlreadyExists and info is not None and info.reason == ARGUMENTS_MISMATCH:
        cls = ReplayMismatch
    return cls(
        message,
        code=code,
        reason=info.reason if info is not None and info.reason else None,
        domain=info.domain if info is not None else None,
        metadata=dict(info.metadata) if info is not None else None,
    )
