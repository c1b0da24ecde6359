"""Paged answers, once for `Client` and `AsyncClient`: LoadLatest, LoadAtStep and Resume
declare `CLIENT_CAPABILITY_PAGED_MESSAGES`, and a history too long for one answer is fetched
page by page and handed back whole, as if the server had sent it in one piece.

The first answer carries the checkpoint with the first page of its messages and a
`continuation`; each LoadAtStep with that token returns the next page (messages only: the state,
metadata and journal came with the first answer) and the token for the one after, empty on the
last page. If the checkpoint is rewritten, deleted or rewound between pages (FailedPrecondition,
reason `CHECKPOINT_CHANGED`), or a later page fails verification and the server quarantines the
step (DataLoss), the pages fetched so far belong to an answer that no longer holds: the whole
call starts again from its first request, at most `RESTARTS` times, then the last error is
raised. A `timeout` applies to each request, not to the pages together.

`whole` is written once as a generator that *yields* each request (`Rpc`) and is sent the
answer, or has the call's error thrown into it; `run_sync` and `run_async` perform the requests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from ._proto import checkpoint_pb2 as pb
from .errors import CheckpointdError, DataLoss, FailedPrecondition, Internal

#: How often a call starts again after its checkpoint changed between pages.
RESTARTS = 3
#: The reason a continuation gets when its checkpoint changed since the first page.
CHECKPOINT_CHANGED = "CHECKPOINT_CHANGED"
PAGED = pb.CLIENT_CAPABILITY_PAGED_MESSAGES


@dataclass(frozen=True)
class Rpc:
    """One request of a paged call: `name` is the CheckpointService method."""

    name: str
    request: Message


Load = Generator[Rpc, Any, Any]


def declared(request: Message) -> Message:
    """`request` declaring the paging capability: itself when it does already, else a copy (the
    caller's message is left alone)."""
    message: Any = request
    if PAGED in message.capabilities:
        return request
    copy: Any = type(request)()
    copy.CopyFrom(request)
    copy.capabilities.append(PAGED)
    return copy


def whole(name: str, request: Message) -> Load:
    """`name` (LoadLatest, LoadAtStep or Resume) with `request`, then every further page of its
    checkpoint's messages; starts again when the checkpoint changed between pages."""
    run_id: str = request.run_id
    restarts = 0
    while True:
        answer = yield Rpc(name, request)
        try:
            return (yield from _follow(run_id, answer))
        except (FailedPrecondition, DataLoss) as error:
            if restarts >= RESTARTS or not changed_between_pages(error):
                raise
            restarts += 1


def changed_between_pages(error: CheckpointdError) -> bool:
    """Whether a continuation's failure means the answer begun no longer holds, so that loading
    again from the start gives a consistent one."""
    return isinstance(error, DataLoss) or (
        isinstance(error, FailedPrecondition) and error.reason == CHECKPOINT_CHANGED
    )


def _follow(run_id: str, answer: Any) -> Load:
    """Appends every page after `answer` to its checkpoint and clears its continuation."""
    token: bytes = answer.continuation
    if not token:
        return answer
    answer.continuation = b""
    if not answer.HasField("checkpoint"):
        raise Internal("the server sent a continuation without a checkpoint")
    checkpoint: pb.Checkpoint = answer.checkpoint
    while token:
        page = yield Rpc(
            "LoadAtStep", pb.LoadAtStepRequest(run_id=run_id, continuation=token, capabilities=[PAGED])
        )
        token = page.continuation
        _append(checkpoint, page.checkpoint)
    held = checkpoint.messages_offset + len(checkpoint.messages)
    if held != checkpoint.message_count:
        raise Internal(
            f"the pages of step {checkpoint.step} ended at message {held} of {checkpoint.message_count}"
        )
    return answer


def _append(checkpoint: pb.Checkpoint, page: pb.Checkpoint) -> None:
    """Appends one page after checking that it is this checkpoint's and starts where the
    messages held so far end."""
    if page.checkpoint_id != checkpoint.checkpoint_id or page.step != checkpoint.step:
        raise Internal(f"a page of step {checkpoint.step} came back for step {page.step}")
    following = checkpoint.messages_offset + len(checkpoint.messages)
    if page.messages_offset != following:
        raise Internal(
            f"a page of step {checkpoint.step} starts at message {page.messages_offset}, not {following}"
        )
    checkpoint.messages.extend(page.messages)


def run_sync(load: Load, call: Callable[[Rpc], Any]) -> Any:
    """Performs `load`'s requests with the blocking `call`."""
    answer: Any = None
    failure: CheckpointdError | None = None
    while True:
        try:
            rpc = load.send(answer) if failure is None else load.throw(failure)
        except StopIteration as stop:
            return stop.value
        try:
            answer, failure = call(rpc), None
        except CheckpointdError as error:
            answer, failure = None, error


async def run_async(load: Load, call: Callable[[Rpc], Awaitable[Any]]) -> Any:
    """Performs `load`'s requests with the coroutine `call`."""
    answer: Any = None
    failure: CheckpointdError | None = None
    while True:
        try:
            rpc = load.send(answer) if failure is None else load.throw(failure)
        except StopIteration as stop:
            return stop.value
        try:
            answer, failure = await call(rpc), None
        except CheckpointdError as error:
            answer, failure = None, error
