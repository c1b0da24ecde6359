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
