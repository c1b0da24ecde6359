"""The saver's writes as operations (see `_effects`): `put` saves a checkpoint at the run's next
step, `put_writes` journals pending writes at their checkpoint's step.

A put holds the run's gate exclusively (puts of a run go one at a time), from the sync that
learns the run's head through the save to the recording of the writes that arrived before it.
A save names the journal prefix its checksum covers (`tool_count`), so journal writes go on
meanwhile; only with a server that lacks it (`Core.legacy_journal`) do they wait for saves.
Under LangGraph's default durability ("async") a checkpoint's put runs in
the background beside its tasks, so its pending writes may come first: they are held and the
put records them right after its save, before it returns, so when a graph call returns its
writes are durable as with any other durability mode.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.base import get_serializable_checkpoint_metadata as serializable
from langgraph.checkpoint.serde.types import ERROR

from .._proto import checkpoint_pb2 as pb
from ..checksum import checkpoint_checksum
from ..errors import AlreadyExists, DataLoss, FailedPrecondition, InvalidArgument, NotFound, Unimplemented
from . import _codec, _naming, _ownership
from ._core import Core, address, journal_gated, step_of
from ._effects import Call, Op, holding
from ._load import StaleLog
from ._runs import HeldWrite, JournalEntry, RunState

#: Saves retried after a conflict with another writer before giving up.
_SAVE_ATTEMPTS = 8


def put(
    core: Core, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata
) -> Op[RunnableConfig]:
    thread_id, ns = address(config["configurable"])
    parent_id = config["configurable"].get("checkpoint_id")
    state = core.runs.get(_naming.run_id(thread_id, ns))
    full_metadata = dict(serializable(config, metadata))
    yield from holding(state.gate, True, _put_held(core, state, ns, checkpoint, full_metadata, parent_id))
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}


def _put_held(
    core: Core,
    state: RunState,
    ns: str,
    checkpoint: Checkpoint,
    metadata: dict[str, Any],
    parent_id: str | None,
) -> Op[None]:
    """A put's saves, with the run's gate held: syncs when needed, retries after conflicts."""
    for attempt in range(_SAVE_ATTEMPTS):
        if not state.synced and not (yield from _sync(core, state, hard=attempt >= 2)):
            continue
        if (yield from _save(core, state, ns, checkpoint, metadata, parent_id)):
            yield from _record_held(core, state, checkpoint["id"])
            return
    raise AlreadyExists(
        f"could not save checkpoint {checkpoint['id']} of run {state.run_id}: "
        f"{_SAVE_ATTEMPTS} conflicting writers in a row"
    )


def _save(
    core: Core,
    state: RunState,
    ns: str,
    checkpoint: Checkpoint,
    metadata: dict[str, Any],
    parent_id: str | None,
) -> Op[bool]:
    """One save attempt at the run's next step; False when the run moved on under us (then
    the state is marked for a sync)."""
    values = dict(checkpoint.get("channel_values", {}))
    body: dict[str, Any] = {k: v for k, v in checkpoint.items() if k != "channel_values"}
    new: list[Any] = []
    in_log = False
    channel = core.channel
    if channel is not None and isinstance(values.get(channel), list):
        messages = values[channel]
        if _extends(messages, state.messages):
            in_log = True
            new = messages[state.log_length :]
            del values[channel]
    mapped, rest = _codec.split_metadata(metadata)
    envelope = {
        "v": _codec.ENVELOPE_VERSION,
        "checkpoint": {**body, "channel_values": values},
        "parent": parent_id,
        "ns": ns,
        "log": channel if in_log else None,
        "metadata": rest,
    }
    content_type, payload = core.serde.dumps_typed(envelope)
    serialized = [core.serde.dumps_typed(m) for m in new]
    chain = state.chain_at(state.log_length).extend(serialized)
    mapped[_codec.LOG_DIGEST_KEY] = chain.digest.hex()
    step = state.next_step
    tools = state.tools  # one reading: concurrent journal writes may advance the state's chain
    request = pb.SaveRequest(
        run_id=state.run_id,
        step=step,
        content_type=content_type,
        state=payload,
        messages=[pb.Message(role=role, content=content) for role, content in serialized],
        message_offset=state.log_length,
        metadata=mapped,
        epoch=state.epoch,
        checksum=checkpoint_checksum(
            run_id=state.run_id,
            step=step,
            content_type=content_type,
            state=payload,
            metadata=mapped,
            messages=chain,
            tools=tools,
        ),
        label=checkpoint["id"],
    )
    if not core.legacy_journal:
        request.tool_count = tools.length  # the journal prefix the checksum covers
    try:
        yield Call("save", request=request)
    except AlreadyExists as error:
        state.forget()
        if error.reason != "LABEL_TAKEN":
            return False
        # This checkpoint id is stored already (a retried put whose answer was lost): learn its
        # step, so writes for it that come later are journalled, not held for a put to come.
        return (yield from step_of(state, checkpoint["id"])) is not None
    except FailedPrecondition:
        state.forget()  # a stale epoch, a step behind the latest, a log that grew: resync
        return False
    except InvalidArgument as error:
        if error.reason != "CHECKSUM_MISMATCH":
            raise
        state.forget()
        state.drop_log()  # the server's log or journal is not what this process held
        return False
    with state.lock:
        state.extend_log(new, serialized)
        state.next_step = step + 1
        state.remember(checkpoint["id"], step)
    return True


def _sync(core: Core, state: RunState, *, hard: bool) -> Op[bool]:
    """Learns the run's next step, epoch, log and journal chain from the server; False when
    the run moved on while it looked (the caller tries again)."""
    if hard:
        state.drop_log()
    if core.exclusive:
        yield from _ownership.take(state)
    try:
        head = (yield Call("get_run", dict(run_id=state.run_id))).run
    except NotFound:
        state.drop_log()
        state.next_step, state.epoch, state.synced = 0, 0, True
        state.reset_journal([])
        return True
    _ownership.check(state, head.epoch)
    entries: list[JournalEntry]
    if head.HasField("latest_step"):
        try:
            loaded = yield from core.loader.load_for_sync(state, head.latest_step, head.message_count)
        except StaleLog:
            state.drop_log()
            loaded = yield from core.loader.load_for_sync(state, head.latest_step, head.message_count)
        if loaded is None:
            return False
        entries = loaded.journal
        epoch = loaded.epoch if loaded.epoch is not None else head.epoch
        if loaded.epoch is not None and state.owned_epoch is not None:
            state.owned_epoch = loaded.epoch  # our own Resume past a corrupt newest checkpoint
        next_step = head.latest_step + 1
    elif head.message_count:
        # Every checkpoint was deleted (delete_for_runs of each of its runs) and the log still
        # holds their messages: a save would have to start past them. Resume restarts the run
        # from scratch, which empties the log, and hands out the epoch later writes carry.
        state.drop_log()
        resumed = yield Call("resume", dict(run_id=state.run_id))
        if state.owned_epoch is not None:
            state.owned_epoch = resumed.epoch
        if not resumed.restarted_from_scratch:
            return False  # another writer saved meanwhile: sync again
        entries = [JournalEntry.of_result(r) for r in resumed.tool_results] + [
            JournalEntry.of_intent(i) for i in resumed.tool_intents
        ]
        epoch, next_step = resumed.epoch, 0
    else:
        state.drop_log()
        journal = (yield Call("get_journal", dict(run_id=state.run_id))).entries if head.tool_count else []
        entries = [JournalEntry.of_journal(e) for e in journal]
        epoch, next_step = head.epoch, 0
    state.synced = True
    if not state.reset_journal(entries):
        state.synced = False
        raise DataLoss(f"the tool journal of run {state.run_id} has a gap; see GetJournal")
    state.epoch, state.next_step = epoch, next_step
    return True


def put_writes(
    core: Core, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
) -> Op[None]:
    thread_id, ns = address(config["configurable"])
    checkpoint_id = config["configurable"]["checkpoint_id"]
    state = core.runs.get(_naming.run_id(thread_id, ns))
    held = [
        HeldWrite(
            task_id, task_path, WRITES_IDX_MAP.get(channel, idx), channel, core.serde.dumps_typed(value)
        )
        for idx, (channel, value) in enumerate(writes)
    ]
    with state.lock:
        # A process runs a checkpoint's tasks only after saving or loading it, and either
        # teaches it the id; so an id it does not know yet, on a run it knows, is one whose
        # put is still on its way here: no need to ask the server.
        pending = checkpoint_id not in state.labels and state.newer_than_known(checkpoint_id)
    step = None if pending else (yield from step_of(state, checkpoint_id))
    if core.exclusive and state.owned_epoch is None:
        yield from holding(state.gate, True, _ownership.take(state))
    with state.lock:  # the put's save remembers the id before it takes what is held
        if step is None:
            step = state.labels.get(checkpoint_id)
        if step is None:
            # Not saved yet: its put (running beside these writes) records them.
            state.hold(checkpoint_id, held)
            return
    yield from journal_gated(core, state, record_writes(core, state, checkpoint_id, step, held))


def _record_held(core: Core, state: RunState, checkpoint_id: str) -> Op[None]:
    """Records the writes that arrived before this checkpoint's put landed (gate held)."""
    with state.lock:
        held = state.take_held(checkpoint_id)
    if not held:
        return
    step = yield from step_of(state, checkpoint_id)
    if step is None:
        raise NotFound(f"checkpoint {checkpoint_id} of run {state.run_id} vanished after its save")
    yield from record_writes(core, state, checkpoint_id, step, held)


def record_writes(
    core: Core, state: RunState, checkpoint_id: str, step: int, writes: list[HeldWrite]
) -> Op[None]:
    """Journals a task's pending writes in one `RecordToolResults` call (one transaction); one
    call per write on a server without it."""
    entries = [_write_input(checkpoint_id, step, w) for w in writes]
    if not core.legacy_journal:
        request = pb.RecordToolResultsRequest(run_id=state.run_id, results=entries)
        try:
            response = yield from _ownership.fenced(state, "record_tool_results", request)
        except Unimplemented:
            core.legacy_journal = True
        else:
            for recorded in response.results:
                state.learn(JournalEntry.of_result(recorded.result))
            return
    for entry in entries:
        single = pb.RecordToolResultRequest(
            run_id=state.run_id,
            call_id=entry.call_id,
            tool_name=entry.tool_name,
            step=entry.step,
            output=entry.output,
            is_error=entry.is_error,
        )
        state.learn(
            JournalEntry.of_result((yield from _ownership.fenced(state, "record_tool_result", single)).result)
        )


def _write_input(checkpoint_id: str, step: int, write: HeldWrite) -> pb.ToolResultInput:
    """One pending write as a journal entry (see `_naming.write_call_id` for its idempotency)."""
    version = uuid.uuid4().hex if write.idx < 0 else ""
    return pb.ToolResultInput(
        call_id=_naming.write_call_id(checkpoint_id, write.task_id, write.idx, version),
        tool_name=write.channel,
        step=step,
        output=_codec.encode_write(write.task_id, write.task_path, write.idx, write.typed),
        is_error=write.channel == ERROR,
    )


def _extends(messages: list[Any], log: list[Any]) -> bool:
    """True when `messages` starts with the log prefix held. Identity first: LangGraph's
    reducers carry the same message objects from step to step, so the common case costs one
    pointer comparison per message."""
    if len(messages) < len(log):
        return False
    for new, old in zip(messages, log, strict=False):
        if new is not old and new != old:
            return False
    return True
