"""Reading LangGraph checkpoints back from checkpointd loads.

A load asks only for the messages after the log prefix the saver already holds
(`message_offset`) and for the journal entries of the checkpoint's own step (`JournalScope
STEP`: its pending writes). The rebuilt log is checked against the chain digest the checkpoint
carries in its metadata (covered by its checksum, which the server verified on this read), so a
stale prefix (the thread deleted and written again by another process) is detected, dropped and
loaded again in full instead of being returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from .._proto import checkpoint_pb2 as pb
from ..errors import DataLoss
from . import _codec
from ._effects import Call, Op
from ._fallback import Skipped
from ._runs import JournalEntry, RunState


def langgraph_step(metadata: Any) -> int | None:
    """LangGraph's own step number from a checkpoint's metadata map (its `m.step` entry)."""
    text = metadata.get(_codec.META_PREFIX + "step")
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def passed_over(response: Any) -> list[Skipped]:
    """What a LoadLatest or Resume answer passed over, newest first. A server older than
    `passed_over` names only what it found corrupt on this very read (`skipped_steps`), and
    without their ids (the caller looks them up)."""
    if response.passed_over:
        return [Skipped(p.step, p.label, langgraph_step(p.metadata)) for p in response.passed_over]
    return [Skipped(step) for step in response.skipped_steps]


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
    # Newer checkpoints quarantined as corrupt that the load passed over, newest first.
    passed_over: list[Skipped] = field(default_factory=list)


class Loader:
    """Loads as operations (see `_effects`): they yield their calls."""

    def __init__(self, serde: SerializerProtocol, channel: str | None) -> None:
        self.serde = serde
        self.channel = channel

    def load(
        self, state: RunState, *, label: str | None = None, step: int | None = None
    ) -> Op[Loaded | None]:
        """A checkpoint by LangGraph id (`label`), by step, or the latest valid one (with the
        corrupt ones above it in `passed_over`). NotFound and DataLoss propagate; AllCorrupt
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
                loaded.passed_over = passed_over(response)
            with state.lock:
                state.remember(loaded.checkpoint_id, loaded.step)
            return loaded
        return None

    def load_for_sync(self, state: RunState, step: int, message_count: int) -> Op[Loaded | None]:
        """The run's newest checkpoint with the whole journal, leaving the held log equal to
        the server's. None when the run moved on meanwhile.

        Two heads need a Resume, which restores the newest valid checkpoint, truncates the log
        to it and hands out a new epoch that later writes carry: a corrupt newest checkpoint,
        and a log longer than the newest checkpoint covers (its newer checkpoints were deleted:
        `delete_for_runs` or a prune of a thread's newest run leaves their messages in the
        append-only log, and a save must start where the log ends, past messages no remaining
        checkpoint holds)."""
        offset = state.log_length
        epoch: int | None = None
        try:
            response = yield Call(
                "load_at_step",
                dict(run_id=state.run_id, step=step, journal=pb.JOURNAL_SCOPE_ALL, message_offset=offset),
            )
            checkpoint: pb.Checkpoint | None = response.checkpoint
            results, intents = response.tool_results, response.tool_intents
            truncate = False
            if checkpoint is not None and checkpoint.message_count != message_count:
                head = (yield Call("get_run", dict(run_id=state.run_id))).run
                if not head.HasField("latest_step") or head.latest_step != step:
                    return None  # another writer saved (or deleted) meanwhile
                if head.message_count != message_count:
                    return None
                truncate = checkpoint.message_count < message_count
                if not truncate:
                    return None
        except DataLoss:
            truncate = True
        if truncate:
            state.drop_log()
            resumed = yield Call("resume", dict(run_id=state.run_id, message_offset=0))
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
