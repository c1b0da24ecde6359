"""Reading LangGraph checkpoints back from checkpointd loads.

A load asks only for the messages after the log prefix the saver already holds
(`message_offset`) and for the journal entries of the checkpoint's own step (`JournalScope
STEP`: its pending writes). The rebuilt log is checked against the chain digest the checkpoint
carries in its metadata (covered by its checksum, which the server verified on this read), so a
stale prefix (the thread deleted and written again by another process) is detected, dropped and
loaded again in full instead of being returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from .._proto import checkpoint_pb2 as pb
from ..errors import DataLoss
from . import _codec
from ._effects import Call, Op
from ._runs import JournalEntry, RunState


class StaleLog(Exception):
    """The message-log prefix held for a run is not the server's: drop it and load again."""


class AllCorrupt(Exception):
    """Every checkpoint of the run failed verification (the thread must start over)."""


@dataclass
class Loaded:
    """One checkpoint read back, LangGraph-shaped."""

    checkpoint_id: str
    step: int
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    parent_id: str | None
    ns: str
    writes: list[_codec.Write] = field(default_factory=list)
    journal: list[JournalEntry] = field(default_factory=list)
    epoch: int | None = None
    # Newer checkpoints skipped as corrupt on the way to this one, newest first.
    skipped_steps: list[int] = field(default_factory=list)


class Loader:
    """Loads as operations (see `_effects`): they yield their calls."""

    def __init__(self, serde: SerializerProtocol, channel: str | None) -> None:
        self.serde = serde
        self.channel = channel

    def load(
        self, state: RunState, *, label: str | None = None, step: int | None = None
    ) -> Op[Loaded | None]:
        """A checkpoint by LangGraph id (`label`), by step, or the latest valid one (with the
        corrupt ones skipped in `skipped_steps`). NotFound and DataLoss propagate; AllCorrupt
        when the latest is asked for and every checkpoint of the run is corrupt."""
        for attempt in range(2):
            offset = state.log_length
            try:
                fields: dict[str, Any] = dict(
                    run_id=state.run_id, journal=pb.JOURNAL_SCOPE_STEP, message_offset=offset
                )
                method = "load_at_step"
                if label is not None:
                    fields["label"] = label
                elif step is not None:
                    fields["step"] = step
                else:
                    method = "load_latest"
                response = yield Call(method, fields)
            except DataLoss as error:
                if label is None and step is None and error.reason == "ALL_CHECKPOINTS_CORRUPT":
                    raise AllCorrupt() from error
                raise
            try:
                loaded = self._decode(state, response.checkpoint, response.tool_results)
            except StaleLog:
                if attempt:
                    raise
                with state.lock:
                    state.drop_log()
                    state.forget()
                continue
            if label is None and step is None:
                loaded.skipped_steps = list(response.skipped_steps)
            with state.lock:
                state.remember(loaded.checkpoint_id, loaded.step)
            return loaded
        return None

    def load_for_sync(self, state: RunState, step: int, message_count: int) -> Op[Loaded | None]:
        """The run's newest checkpoint with the whole journal, leaving the held log equal to
        the server's. A corrupt newest checkpoint is resolved by Resume, which restores the
        newest valid one, truncates the log to it and hands out a new epoch. None when the run
        moved on meanwhile."""
        offset = state.log_length
        epoch: int | None = None
        try:
            response = yield Call(
                "load_at_step",
                dict(run_id=state.run_id, step=step, journal=pb.JOURNAL_SCOPE_ALL, message_offset=offset),
            )
            checkpoint: pb.Checkpoint | None = response.checkpoint
            results, intents = response.tool_results, response.tool_intents
        except DataLoss:
            resumed = yield Call("resume", dict(run_id=state.run_id, message_offset=offset))
            epoch = resumed.epoch
            checkpoint = None if resumed.restarted_from_scratch else resumed.checkpoint
            results, intents = resumed.tool_results, resumed.tool_intents
            if checkpoint is not None:
                message_count = checkpoint.message_count
        if checkpoint is None:
            state.drop_log()
            loaded = Loaded("", -1, {}, {}, None, "")
        else:
            if checkpoint.message_count != message_count:
                return None
            loaded = self._decode(state, checkpoint, [], exact=True)
        loaded.epoch = epoch
        loaded.journal = [JournalEntry.of_result(r) for r in results] + [
            JournalEntry.of_intent(i) for i in intents
        ]
        return loaded

    def _decode(
        self,
        state: RunState,
        checkpoint: pb.Checkpoint,
        results: Any,
        *,
        exact: bool = False,
    ) -> Loaded:
        envelope = self.serde.loads_typed((checkpoint.content_type, checkpoint.state))
        body = dict(envelope["checkpoint"])
        values = dict(body.get("channel_values", {}))
        messages = self._messages(state, checkpoint, exact=exact)
        if envelope.get("log"):
            values[envelope["log"]] = messages
        body["channel_values"] = values
        mapped = {k: v for k, v in checkpoint.metadata.items() if k.startswith(_codec.META_PREFIX)}
        label = checkpoint.label or str(body.get("id", ""))
        prefix = label + "/"
        writes: dict[tuple[str, int], _codec.Write] = {}
        for result in sorted(results, key=lambda r: r.seq):
            if not result.call_id.startswith(prefix):
                continue
            write = _codec.decode_write(result.output, result.tool_name, result.seq)
            if write is None:
                continue
            key = (write.task_id, write.idx)
            if write.idx >= 0 and key in writes:
                continue  # regular writes: the first one stands
            writes[key] = write  # special channels: the newest one stands
        ordered = sorted(writes.values(), key=lambda w: writes_sort_key(w.task_path, w.task_id, w.idx))
        return Loaded(
            checkpoint_id=label,
            step=checkpoint.step,
            checkpoint=body,
            metadata=_codec.join_metadata(mapped, dict(envelope.get("metadata") or {})),
            parent_id=envelope.get("parent"),
            ns=str(envelope.get("ns", "")),
            writes=ordered,
        )

    def _messages(self, state: RunState, checkpoint: pb.Checkpoint, *, exact: bool) -> list[Any]:
        """The checkpoint's message log: the held prefix plus what the load returned, checked
        against the checkpoint's log digest. With `exact`, the held log becomes exactly it."""
        serialized = [(m.role, m.content) for m in checkpoint.messages]
        with state.lock:
            start = checkpoint.messages_offset
            if start > state.log_length:
                raise StaleLog()
            chain = state.chain_at(start).extend(serialized)
            expected = checkpoint.metadata.get(_codec.LOG_DIGEST_KEY)
            if expected is not None and chain.digest.hex() != expected:
                raise StaleLog()
            objects = [self.serde.loads_typed(s) for s in serialized]
            if exact:
                del state.messages[start:]
                del state.digests[start + 1 :]
            if start == state.log_length and objects:
                state.extend_log(objects, serialized)
                return state.messages[: start + len(objects)]
            return state.messages[:start] + objects

    def to_tuple(self, thread_id: str, ns: str, loaded: Loaded) -> CheckpointTuple:
        config = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": loaded.checkpoint_id,
            }
        }
        parent = (
            {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": loaded.parent_id,
                }
            }
            if loaded.parent_id
            else None
        )
        return CheckpointTuple(
            config=config,  # type: ignore[arg-type]
            checkpoint=loaded.checkpoint,  # type: ignore[arg-type]
            metadata=loaded.metadata,  # type: ignore[arg-type]
            parent_config=parent,  # type: ignore[arg-type]
            pending_writes=[(w.task_id, w.channel, self.serde.loads_typed(w.typed)) for w in loaded.writes],
        )
