"""What the sync and async clients share: building a request from keyword fields."""

from __future__ import annotations

from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from ._proto import checkpoint_pb2, task_pb2

CHECKPOINTS: ServiceDescriptor = checkpoint_pb2.DESCRIPTOR.services_by_name["CheckpointService"]
TASKS: ServiceDescriptor = task_pb2.DESCRIPTOR.services_by_name["TaskService"]


def build_request(
    service: ServiceDescriptor, rpc: str, request: Message | None, fields: dict[str, Any]
) -> Message:
    """The request of `service/rpc`: `request` as given, or one built from keyword `fields`
    (`client.save(run_id="r", step=3, state=b"{}")`). Well-known types take Python values:
    a `timedelta` for a Duration, a `datetime` for a Timestamp."""
    method = service.methods_by_name.get(rpc)
    if method is None:
        raise NotImplementedError(
            f"{service.full_name}/{rpc} is not in the protos this package was built from"
        )
    cls = message_factory.GetMessageClass(method.input_type)
    if request is None:
        return cls(**fields)
    if fields:
        raise TypeError(f"{rpc}: pass either a request message or keyword fields, not both")
    if not isinstance(request, cls):
        raise TypeError(f"{rpc} takes a {cls.DESCRIPTOR.full_name}, got {type(request).__name__}")
    return request


#: What this package declares on Resume (see `ResumeRequest.capabilities` in checkpoint.proto):
#: its store and worker read `in_doubt` and `corrupt_call_ids` and never re-run such a call
#: silently, so the server may restore past a corrupt journal entry and report it.
RESUME_CAPABILITIES: tuple[int, ...] = (checkpoint_pb2.CLIENT_CAPABILITY_IN_DOUBT_CALLS,)


def resume_request(request: Message | None, fields: dict[str, Any]) -> Message:
    """The Resume request, declaring `RESUME_CAPABILITIES` unless the caller chose its own.

    A request message without capabilities gets them added (on a copy: the caller's message is
    left alone); an explicit `capabilities=[]` keyword opts out, for a caller that does not look
    at calls in doubt and wants the old answer (DATA_LOSS, or FAILED_PRECONDITION with reason
    CAPABILITY_REQUIRED) instead."""
    if request is None and "capabilities" not in fields:
        fields = {**fields, "capabilities": list(RESUME_CAPABILITIES)}
    message = build_request(CHECKPOINTS, "Resume", request, fields)
    if request is not None and not message.capabilities:
        declared = type(message)()
        declared.CopyFrom(message)
        declared.capabilities.extend(RESUME_CAPABILITIES)
        return declared
    return message
