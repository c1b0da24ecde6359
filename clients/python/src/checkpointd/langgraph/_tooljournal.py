"""The journal of exactly-once tool calls in a LangGraph thread's checkpointd run: call ids,
how a result is stored, and the two writes (intent, result) made through the saver's per-run
state, which learns them so that later checkpoints cover the calls.

Call ids start with `lg.tool/`, which no checkpoint id does, so the saver's pending-write
loader (which reads only entries named `<checkpoint id>/...`) never mistakes them for writes.
Every variable part is percent-encoded, so the forms cannot collide with one another.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._proto import checkpoint_pb2 as pb
from ..digest import check_replay
from . import _naming, _ownership
from ._core import journal_gated
from ._effects import Op
from ._runs import JournalEntry, RunState

if TYPE_CHECKING:
    from .saver import CheckpointdSaver

PREFIX = "lg.tool/"
_MAX_ID_BYTES = _naming.MAX_ID_BYTES
_HEADER_LEN = struct.Struct(">I")


def _pct(text: str) -> str:
    return _naming._pct(text)


def _bounded(call_id: str) -> str:
    """The call id, or a digest form of it when it is too long for the journal."""
    if len(call_id.encode()) <= _MAX_ID_BYTES:
        return call_id
    return f"{PREFIX}h/{hashlib.sha256(call_id.encode()).hexdigest()}"


def for_tool_call(task_ns: str, tool: str, tool_call_id: str) -> str:
    """A model's tool call (ToolNode): the tool call's id, scoped by node path and tool. No
    step: the call is the model's message, which a replay from an older checkpoint (a
    fallback, or time travel, which forks at a new step) carries unchanged."""
    return _bounded(f"{PREFIX}c/{_pct(task_ns)}/{_pct(tool)}/{_pct(tool_call_id)}")


def for_index(task_ns: str, step: int, path: str, tool: str, index: int) -> str:
    """A call without a model tool call id: the n-th call of `tool` in one task."""
    return _bounded(f"{PREFIX}n/{_pct(task_ns)}/{step}/{_pct(path)}/{_pct(tool)}/{index}")


def for_key(graph_ns: str, tool: str, key: str) -> str:
    """A call named by the user's key function: one per (graph, tool, key) in the thread."""
    return _bounded(f"{PREFIX}k/{_pct(graph_ns)}/{_pct(tool)}/{_pct(key)}")


def encode_value(serde: Any, value: Any) -> bytes:
    """A result as journal output: a JSON header with the serializer's type tag, then the
    serialized value (the same framing as a pending write, without its task fields)."""
    type_tag, data = serde.dumps_typed(value)
    header = json.dumps({"v": 1, "type": type_tag}, separators=(",", ":")).encode()
    return _HEADER_LEN.pack(len(header)) + header + data


def decode_value(serde: Any, output: bytes) -> Any:
    (size,) = _HEADER_LEN.unpack_from(output)
    end = _HEADER_LEN.size + size
    header = json.loads(output[_HEADER_LEN.size : end])
    return serde.loads_typed((str(header["type"]), bytes(output[end:])))


@dataclass
class Begun:
    """A call whose intent is journalled: completed already (`replayed`), in doubt (an intent
    from an earlier attempt and no result), or fresh."""

    run_id: str
    call_id: str
    tool_name: str
    step: int
    idempotency_key: str
    replayed: tuple[Any] | None = None
    in_doubt: bool = False
    #: The call's arguments digest ("" when it has none), journalled with the intent and result.
    arguments_digest: str = ""


class ToolJournal:
    """The journal of one thread's run, written through the saver's `RunState`. `begin` and
    `finish` are operations (see `_effects`): the saver runs them with its blocking or its
    asyncio client, so an async tool never blocks its event loop."""

    def __init__(self, saver: CheckpointdSaver, run_id: str) -> None:
        self.saver = saver
        self.run_id = run_id
        self.state: RunState = saver._core.runs.get(run_id)

    def begin(self, call_id: str, tool_name: str, step: int, digest: str = "") -> Op[Begun]:
        """Journals the intent of a call (or finds the one journalled before). A call journalled
        before with other arguments (another non-empty digest) raises `ReplayMismatch`: its
        result is not this call's, and the tool must not run under its id either."""
        request = pb.RecordToolIntentRequest(
            run_id=self.run_id, call_id=call_id, tool_name=tool_name, step=step, arguments_digest=digest
        )
        reply = yield from self._write("record_tool_intent", request)
        if not reply.already_recorded:
            self.state.learn(JournalEntry.of_intent(reply.intent))
        if reply.HasField("result"):
            check_replay(call_id, reply.result.arguments_digest, digest)
        if reply.HasField("intent"):
            check_replay(call_id, reply.intent.arguments_digest, digest)
        begun = Begun(
            self.run_id, call_id, tool_name, step, reply.intent.idempotency_key, arguments_digest=digest
        )
        if reply.HasField("result"):
            begun.replayed = (decode_value(self.saver.serde, reply.result.output),)
        elif reply.already_recorded:
            begun.in_doubt = True
        return begun

    def finish(self, begun: Begun, value: Any, is_error: bool) -> Op[Any]:
        """Journals the call's result; returns the stored one (another life of the run may
        have recorded the call first, and the first result stands)."""
        request = pb.RecordToolResultRequest(
            run_id=self.run_id,
            call_id=begun.call_id,
            tool_name=begun.tool_name,
            step=begun.step,
            output=encode_value(self.saver.serde, value),
            is_error=is_error,
            arguments_digest=begun.arguments_digest,
        )
        reply = yield from self._write("record_tool_result", request)
        self.state.learn(JournalEntry.of_result(reply.result))
        if reply.already_recorded:
            return decode_value(self.saver.serde, reply.result.output)
        return value

    def _write(self, method: str, request: Any) -> Op[Any]:
        """One journal write, fenced and gated as the saver's own pending writes are."""
        return journal_gated(self.saver._core, self.state, _ownership.fenced(self.state, method, request))
