"""`CheckpointdSaver`: a LangGraph checkpointer backed by a checkpointd server.

`graph.compile(checkpointer=CheckpointdSaver("127.0.0.1:50051"))` is the only change a graph
needs. How LangGraph's model maps onto checkpointd is described in the package README
("How LangGraph maps onto checkpointd"); in short: one (thread, namespace) is one run, a
checkpoint is a labelled save at the run's next step, the `messages` channel lives in the run's
append-only message log, and pending writes are tool-journal entries at the checkpoint's step.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import ERROR

from .._proto import checkpoint_pb2 as pb
from ..checksum import checkpoint_checksum
from ..client import Client
from ..errors import (
    AlreadyExists,
    CheckpointdError,
    DataLoss,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from . import _codec, _fallback, _naming, _ownership, _queries
from ._fallback import FALLBACK_KEY, CorruptionPolicy, Fallback
from ._load import AllCorrupt, Loader, StaleLog
from ._runs import HeldWrite, JournalEntry, RunCache, RunState

#: Saves retried after a conflict with another writer before giving up.
_SAVE_ATTEMPTS = 8


class CheckpointdSaver(BaseCheckpointSaver[str]):
    """A LangGraph `BaseCheckpointSaver` that stores checkpoints in checkpointd.

    `target` and the keyword options (`token`, `tenant`, `ca_cert`, ...) are those of
    `checkpointd.Client`; or pass a ready `client`. `messages_channel` names the channel kept
    in the run's message log (LangGraph's `MessagesState` uses `messages`); None keeps every
    channel in the checkpoint state.

    Every checkpoint is saved with a client checksum (checksum v1) that the server checks on
    save and verifies on every read. The latest checkpoint of a thread skips corrupt ones, as
    `LoadLatest` does, and says so (see `_fallback`): a log line, and `FALLBACK_KEY` in the
    tuple's metadata; `on_corrupt="raise"` refuses instead. A corrupt checkpoint asked for by
    id raises `checkpointd.DataLoss`; `list` leaves corrupt checkpoints out with a log line.

    `exclusive=True` makes this saver the only writer of each thread it writes: it takes the
    thread with a new fencing epoch (checkpointd's `Resume`) and a saver superseded by another
    exclusive one is refused with `ThreadTakenOver` instead of writing on. Off by default (see
    the package README, "Exclusive writing").

    The async methods run the blocking ones in a worker thread (gRPC releases the GIL).
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        client: Client | None = None,
        serde: SerializerProtocol | None = None,
        messages_channel: str | None = "messages",
        timeout: float | None = 30.0,
        on_corrupt: CorruptionPolicy = "warn",
        exclusive: bool = False,
        **client_options: Any,
    ) -> None:
        super().__init__(serde=serde)
        self.on_corrupt = _fallback.check_policy(on_corrupt)
        self.exclusive = exclusive
        if client is None:
            if target is None:
                raise ValueError("CheckpointdSaver needs a target or a client")
            client = Client(target, timeout=timeout, **client_options)
            self._owns_client = True
        else:
            self._owns_client = False
        self.client = client
        self.messages_channel = messages_channel
        self._runs = RunCache()
        self._loader = Loader(client, self.serde, messages_channel)

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> CheckpointdSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads ------------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        run = _naming.run_id(thread_id, ns)
        state = self._runs.get(run)
        checkpoint_id = get_checkpoint_id(config)
        try:
            if checkpoint_id:
                loaded = self._loader.load(state, label=checkpoint_id)
            else:
                loaded = self._loader.load(state)
        except NotFound:
            return None
        except AllCorrupt:
            labels = _queries.labels_at(self.client, run, None)
            steps = sorted(labels, reverse=True)
            _fallback.report(
                self.on_corrupt, Fallback(thread_id, ns, [labels[s] for s in steps], steps, None)
            )
            return None
        if loaded is None:
            return None
        tup = self._loader.to_tuple(thread_id, ns, loaded)
        if loaded.skipped_steps:
            labels = _queries.labels_at(self.client, run, loaded.skipped_steps)
            fallback = Fallback(
                thread_id,
                ns,
                [labels[s] for s in loaded.skipped_steps if s in labels],
                loaded.skipped_steps,
                loaded.checkpoint_id,
            )
            _fallback.report(self.on_corrupt, fallback)
            tup.metadata[FALLBACK_KEY] = fallback.as_metadata()  # type: ignore[literal-required]
        return tup

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        remaining = limit
        if remaining is not None and remaining <= 0:
            return
        configurable = (config or {}).get("configurable", {})
        wanted_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        for run, thread_id, ns in self._runs_to_list(configurable):
            state = self._runs.get(run)
            before_step = self._step_of(state, before_id) if before_id else None
            summaries = _queries.summaries(
                self.client,
                state.run_id,
                metadata_filter=_codec.server_filter(filter or {}),
                before_step=before_step,
                # a `before` checkpoint not in this run: compare ids, as LangGraph does
                before_label=before_id if before_id and before_step is None else None,
            )
            for summary in summaries:
                if wanted_id and summary.label != wanted_id:
                    continue
                try:
                    loaded = self._loader.load(state, step=summary.step)
                except NotFound:
                    continue  # pruned meanwhile
                except DataLoss:
                    _fallback.log.warning(
                        "thread %r ns %r: checkpoint %s (step %s) is corrupt; left out of the listing",
                        thread_id,
                        ns,
                        summary.label,
                        summary.step,
                    )
                    continue
                if loaded is None:
                    continue
                tup = self._loader.to_tuple(thread_id, ns if ns is not None else loaded.ns, loaded)
                if filter and not all(tup.metadata.get(k) == v for k, v in filter.items()):
                    continue
                yield tup
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return

    def _runs_to_list(self, configurable: dict[str, Any]) -> Iterator[tuple[str, str, str | None]]:
        """(run id, thread id, namespace or None when only the checkpoint knows it)."""
        if "thread_id" in configurable:
            thread_id = str(configurable["thread_id"])
            if "checkpoint_ns" in configurable and configurable["checkpoint_ns"] is not None:
                ns = configurable["checkpoint_ns"]
                yield _naming.run_id(thread_id, ns), thread_id, ns
                return
            prefix = _naming.thread_prefix(thread_id)
        else:
            prefix = _naming.PREFIX
        for run in _queries.list_runs(self.client, prefix):
            parsed = _naming.parse_run_id(run)
            if parsed is not None:
                yield run, parsed[0], parsed[1]

    def _step_of(self, state: RunState, checkpoint_id: str) -> int | None:
        """The step of a checkpoint by its LangGraph id: remembered, else asked for."""
        with state.lock:
            step = state.labels.get(checkpoint_id)
        if step is not None:
            return step
        try:
            response = self.client.load_at_step(
                run_id=state.run_id,
                label=checkpoint_id,
                journal=pb.JOURNAL_SCOPE_NONE,
                message_offset=2**63,
            )
        except NotFound:
            return None
        except DataLoss:
            return None
        with state.lock:
            state.remember(checkpoint_id, response.checkpoint.step)
        return response.checkpoint.step

    # -- writes -----------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "") or ""
        parent_id = configurable.get("checkpoint_id")
        run = _naming.run_id(thread_id, ns)
        state = self._runs.get(run)
        full_metadata = dict(get_serializable_checkpoint_metadata(config, metadata))
        with state.lock:
            state.wait_idle()
            for attempt in range(_SAVE_ATTEMPTS):
                if not state.synced and not self._sync(state, hard=attempt >= 2):
                    continue
                if self._save(state, ns, checkpoint, full_metadata, parent_id):
                    self._record_held(state, checkpoint["id"])
                    break
            else:
                raise AlreadyExists(
                    f"could not save checkpoint {checkpoint['id']} of run {run}: "
                    f"{_SAVE_ATTEMPTS} conflicting writers in a row"
                )
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def _save(
        self,
        state: RunState,
        ns: str,
        checkpoint: Checkpoint,
        metadata: dict[str, Any],
        parent_id: str | None,
    ) -> bool:
        """One save attempt at the run's next step; False when the run moved on under us
        (then the state is marked for a sync)."""
        values = dict(checkpoint.get("channel_values", {}))
        body: dict[str, Any] = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        new: list[Any] = []
        in_log = False
        channel = self.messages_channel
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
        content_type, payload = self.serde.dumps_typed(envelope)
        serialized = [self.serde.dumps_typed(m) for m in new]
        chain = state.chain_at(state.log_length).extend(serialized)
        mapped[_codec.LOG_DIGEST_KEY] = chain.digest.hex()
        step = state.next_step
        checksum = checkpoint_checksum(
            run_id=state.run_id,
            step=step,
            content_type=content_type,
            state=payload,
            metadata=mapped,
            messages=chain,
            tools=state.tools,
        )
        request = pb.SaveRequest(
            run_id=state.run_id,
            step=step,
            content_type=content_type,
            state=payload,
            messages=[pb.Message(role=role, content=content) for role, content in serialized],
            message_offset=state.log_length,
            metadata=mapped,
            epoch=state.epoch,
            checksum=checksum,
            label=checkpoint["id"],
        )
        try:
            self.client.save(request)
        except AlreadyExists as error:
            if error.reason == "LABEL_TAKEN":
                # This checkpoint id is stored already (a retried put whose answer was lost).
                state.forget()
                return True
            state.forget()
            return False
        except FailedPrecondition:
            state.forget()  # a stale epoch, a step behind the latest, a log that grew: resync
            return False
        except InvalidArgument as error:
            if error.reason != "CHECKSUM_MISMATCH":
                raise
            state.forget()
            state.drop_log()  # the server's log or journal is not what this process held
            return False
        state.extend_log(new, serialized)
        state.next_step = step + 1
        state.remember(checkpoint["id"], step)
        return True

    def _sync(self, state: RunState, *, hard: bool) -> bool:
        """Learns the run's next step, epoch, log and journal chain from the server; False
        when the run moved on while it looked (the caller tries again)."""
        if hard:
            state.drop_log()
        if self.exclusive:
            _ownership.take(self.client, state)
        try:
            head = self.client.get_run(run_id=state.run_id).run
        except NotFound:
            state.drop_log()
            state.next_step, state.epoch, state.synced = 0, 0, True
            state.reset_journal([])
            return True
        _ownership.check(state, head.epoch)
        entries: list[JournalEntry]
        if head.HasField("latest_step"):
            try:
                loaded = self._loader.load_for_sync(state, head.latest_step, head.message_count)
            except StaleLog:
                state.drop_log()
                loaded = self._loader.load_for_sync(state, head.latest_step, head.message_count)
            if loaded is None:
                return False
            entries = loaded.journal
            epoch = loaded.epoch if loaded.epoch is not None else head.epoch
            if loaded.epoch is not None and state.owned_epoch is not None:
                state.owned_epoch = loaded.epoch  # our own Resume past a corrupt newest checkpoint
            next_step = head.latest_step + 1
        else:
            state.drop_log()
            journal = self.client.get_journal(run_id=state.run_id).entries if head.tool_count else []
            entries = [
                JournalEntry(
                    seq=e.seq,
                    intent=e.kind == pb.JOURNAL_ENTRY_KIND_INTENT,
                    call_id=e.call_id,
                    tool_name=e.tool_name,
                    step=e.step,
                    output=e.output,
                    is_error=e.is_error,
                )
                for e in journal
            ]
            epoch, next_step = head.epoch, 0
        state.synced = True
        if not state.reset_journal(entries):
            state.synced = False
            raise DataLoss(f"the tool journal of run {state.run_id} has a gap; see GetJournal")
        state.epoch, state.next_step = epoch, next_step
        return True

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "") or ""
        checkpoint_id = configurable["checkpoint_id"]
        state = self._runs.get(_naming.run_id(thread_id, ns))
        held = [
            HeldWrite(
                task_id, task_path, WRITES_IDX_MAP.get(channel, idx), channel, self.serde.dumps_typed(value)
            )
            for idx, (channel, value) in enumerate(writes)
        ]
        step = self._step_of(state, checkpoint_id)
        with state.lock:  # never while a save is being checksummed over the journal
            if step is None:
                step = state.labels.get(checkpoint_id)
            if step is None:
                # The checkpoint's put has not landed: under LangGraph's default durability
                # ("async") it runs in the background beside these writes. Its put records
                # them right after its save, before it returns.
                state.hold(checkpoint_id, held)
                return
            if self.exclusive:
                _ownership.take(self.client, state)
            state.begin_write()
        try:
            for write in held:
                self._record_write(state, checkpoint_id, step, write)
        finally:
            state.end_write()

    def _record_held(self, state: RunState, checkpoint_id: str) -> None:
        """Records the writes that arrived before this checkpoint's put landed (run locked)."""
        held = state.take_held(checkpoint_id)
        if not held:
            return
        step = self._step_of(state, checkpoint_id)
        if step is None:
            raise NotFound(f"checkpoint {checkpoint_id} of run {state.run_id} vanished after its save")
        for write in held:
            self._record_write(state, checkpoint_id, step, write)

    def _record_write(self, state: RunState, checkpoint_id: str, step: int, write: HeldWrite) -> None:
        version = uuid.uuid4().hex if write.idx < 0 else ""
        request = pb.RecordToolResultRequest(
            run_id=state.run_id,
            call_id=_naming.write_call_id(checkpoint_id, write.task_id, write.idx, version),
            tool_name=write.channel,
            step=step,
            output=_codec.encode_write(write.task_id, write.task_path, write.idx, write.typed),
            is_error=write.channel == ERROR,
            epoch=state.owned_epoch if state.owned_epoch is not None else state.epoch,
        )
        self._record(state, request)

    def _record(self, state: RunState, request: pb.RecordToolResultRequest) -> None:
        for _ in range(3):
            try:
                result = self.client.record_tool_result(request).result
            except FailedPrecondition:
                # Fenced by a newer epoch (a Resume after corruption): take the run's epoch,
                # unless this saver writes exclusively and another writer took the thread.
                head = self.client.get_run(run_id=state.run_id).run
                _ownership.check(state, head.epoch)
                request.epoch = head.epoch
                continue
            state.learn(
                JournalEntry(
                    seq=result.seq,
                    intent=False,
                    call_id=result.call_id,
                    tool_name=result.tool_name,
                    step=result.step,
                    output=result.output,
                    is_error=result.is_error,
                )
            )
            return
        raise FailedPrecondition(f"run {state.run_id}: fenced out three times recording a write")

    def delete_thread(self, thread_id: str) -> None:
        for run in list(_queries.list_runs(self.client, _naming.thread_prefix(str(thread_id)))):
            try:
                self.client.delete_run(run_id=run)
            except NotFound:
                pass
            self._runs.drop(run)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint of every namespace, oldest first, with its pending writes,
        keeping checkpoint ids, parents and metadata."""
        for run in list(_queries.list_runs(self.client, _naming.thread_prefix(str(source_thread_id)))):
            parsed = _naming.parse_run_id(run)
            if parsed is None:
                continue
            source = self._runs.get(run)
            for step in _queries.steps_ascending(self.client, run):
                try:
                    loaded = self._loader.load(source, step=step)
                except (NotFound, DataLoss):
                    continue
                if loaded is None:
                    continue
                ns = parsed[1] if parsed[1] is not None else loaded.ns
                config: dict[str, Any] = {
                    "configurable": {"thread_id": str(target_thread_id), "checkpoint_ns": ns}
                }
                if loaded.parent_id:
                    config["configurable"]["checkpoint_id"] = loaded.parent_id
                stored = self.put(config, loaded.checkpoint, loaded.metadata, {})  # type: ignore[arg-type]
                if not loaded.writes:
                    continue
                target = self._runs.get(_naming.run_id(str(target_thread_id), ns))
                target_step = self._step_of(target, loaded.checkpoint_id)
                if target_step is None:
                    raise NotFound(f"copied checkpoint {loaded.checkpoint_id} vanished")
                with target.lock:
                    target.begin_write()
                try:
                    for w in loaded.writes:
                        self._record_write(
                            target,
                            stored["configurable"]["checkpoint_id"],
                            target_step,
                            HeldWrite(w.task_id, w.task_path, w.idx, w.channel, w.typed),
                        )
                finally:
                    target.end_write()

    def get_next_version(self, current: str | None, channel: None) -> str:
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # -- async: the blocking calls in a worker thread ---------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        iterator = self.list(config, filter=filter, before=before, limit=limit)
        done = object()
        while True:
            item = await asyncio.to_thread(next, iterator, done)
            if item is done:
                return
            yield item  # type: ignore[misc]

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)


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


__all__ = ["CheckpointdSaver", "CheckpointdError"]
