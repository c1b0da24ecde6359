"""`Checkpoint` and `CheckpointStore`: the checkpoint interface agent authors know, over gRPC
(or in this process's memory, with `CheckpointStore.in_memory()`).

The store keeps, per run it writes, what a correct writer must carry: the fencing epoch from the
last Resume, the message log's length (so a save sends only new messages), the checksum v1
chains (so every save carries the client's checksum for the server to verify) and the tool
journal. Loads verify the checksum on the client too and say so in `Checkpoint.is_valid`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from opentelemetry import trace

from . import _codec
from ._connection import Pem
from ._proto import checkpoint_pb2 as pb
from .aio import AsyncClient
from .checksum import MessageChain, ToolChain, checkpoint_checksum
from .errors import DataLoss, NotFound
from .memory import MemoryBackend

_tracer = trace.get_tracer("checkpointd")
log = logging.getLogger("checkpointd")


@dataclass(frozen=True)
class PassedOver:
    """A quarantined (corrupt) checkpoint newer than the one a read returned: the read fell
    back past it. Its fields other than `step` come from the corrupt row, for telling people
    what was skipped. Every read reports it until an operator drops the quarantined
    checkpoints (`checkpointd runs drop-quarantined RUN`) or a newer checkpoint is saved."""

    step: int
    checkpoint_id: str = ""
    label: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    @classmethod
    def of(cls, entry: pb.PassedOverCheckpoint) -> PassedOver:
        return cls(entry.step, entry.checkpoint_id, entry.label, dict(entry.metadata), entry.reason)


def passed_over(reply: pb.LoadLatestResponse | pb.ResumeResponse) -> list[PassedOver]:
    """What a LoadLatest or Resume answer fell back past, newest first. A server older than
    `passed_over` names only the checkpoints it found corrupt on this read (`skipped_steps`)."""
    if reply.passed_over:
        return [PassedOver.of(p) for p in reply.passed_over]
    return [PassedOver(step) for step in reply.skipped_steps]


def _warn_passed_over(run_id: str, served: int | None, entries: list[PassedOver]) -> None:
    """Every read that falls back says so, not only the first one that found the damage."""
    if entries:
        log.warning(
            "newer checkpoints are quarantined as corrupt; the read fell back past them "
            "run_id=%s passed_over_steps=%s served_step=%s",
            run_id,
            [p.step for p in entries],
            served if served is not None else "none (from scratch)",
        )


@dataclass(kw_only=True)
class Checkpoint:
    """A restorable snapshot of an agent run. `tool_results` lists the run's journalled tool
    calls (`call_id`, `tool_name`, `step`, `output`, `is_error`); on save they are ignored, as
    tools are journalled when they run (see `StepContext.call_tool`)."""

    checkpoint_id: str = ""
    run_id: str
    step_number: int
    state: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    timestamp: datetime | None = None
    checksum: str = ""
    is_valid: bool = True
    metadata: dict[str, str] = field(default_factory=dict)
    epoch: int = 0
    #: Quarantined checkpoints newer than this one that the load fell back past, newest first
    #: (`load_latest` only; empty when it returned the run's newest checkpoint).
    passed_over: list[PassedOver] = field(default_factory=list)


@dataclass
class InDoubt:
    """A side-effecting call whose outcome is unknown after a crash."""

    call_id: str
    tool_name: str
    step: int
    idempotency_key: str
    corrupt: bool


@dataclass
class Resumed:
    """What Resume restored: where the run continues, under which epoch."""

    run_id: str
    epoch: int
    checkpoint: Checkpoint | None
    recovered_from_step: int
    restarted_from_scratch: bool
    skipped_steps: list[int]
    in_doubt: list[InDoubt]
    corrupt_call_ids: list[str]
    #: Every quarantined checkpoint newer than the restored one, newest first, on every
    #: Resume until they are dropped (`skipped_steps`: only those found on this one).
    passed_over: list[PassedOver] = field(default_factory=list)


@dataclass
class _Run:
    """What the store carries for a run it writes."""

    epoch: int
    messages: MessageChain = MessageChain()
    #: None when the journal seen has a gap (a corrupt entry): saves then carry no checksum.
    tools: ToolChain | None = ToolChain()
    journal: dict[str, pb.ToolResult] = field(default_factory=dict)
    intents: dict[str, pb.ToolIntent] = field(default_factory=dict)
    in_doubt: dict[str, InDoubt] = field(default_factory=dict)
    last_saved_step: int | None = None


@dataclass
class SaveStats:
    """Latency (seconds) and state size of every save this store made."""

    latencies: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    #: Saves that carried the client's checksum (all but those after a gap in the journal).
    with_client_checksum: int = 0


def _timestamp(value: Any) -> datetime | None:
    if value is None or (value.seconds == 0 and value.nanos == 0):
        return None
    return value.ToDatetime(tzinfo=timezone.utc)


def _result_dict(result: pb.ToolResult) -> dict[str, Any]:
    return {
        "call_id": result.call_id,
        "tool_name": result.tool_name,
        "step": result.step,
        "output": _codec.decode_output(result.output),
        "is_error": result.is_error,
    }


def _journal_chain(results: Any, intents: Any, upto: int | None = None) -> ToolChain | None:
    """The tool chain over journal entries `seq` 1..`upto` (all when None); None on a gap."""
    entries = sorted([(r.seq, r) for r in results] + [(i.seq, i) for i in intents], key=lambda e: e[0])
    chain = ToolChain()
    for seq, entry in entries:
        if upto is not None and seq > upto:
            break
        if seq != chain.length + 1:
            return None
        chain = _push(chain, entry)
    if upto is not None and chain.length != upto:
        return None
    return chain


def _push(chain: ToolChain, entry: Any) -> ToolChain:
    if isinstance(entry, pb.ToolIntent):
        return chain.push_intent(entry.call_id, entry.tool_name, entry.step)
    return chain.push_result(entry.call_id, entry.tool_name, entry.step, entry.output, entry.is_error)


def _checkpoint(message: pb.Checkpoint, results: Any, intents: Any) -> Checkpoint:
    """The dataclass of a loaded checkpoint, its checksum recomputed here: `is_valid` is False
    when what arrived does not match (a journal with a gap is left to the server's word)."""
    tools = _journal_chain(results, intents, upto=message.tool_count)
    valid = True
    # A load from a message offset carries only the log's tail: the chain needs all of it.
    if tools is not None and message.messages_offset == 0:
        chain = MessageChain().extend((m.role, m.content) for m in message.messages)
        valid = chain.length == message.message_count and message.checksum == checkpoint_checksum(
            run_id=message.run_id,
            step=message.step,
            content_type=message.content_type,
            state=message.state,
            metadata=dict(message.metadata),
            messages=chain,
            tools=tools,
        )
    try:
        state = _codec.decode_state(message.state)
    except ValueError:
        # Written by a client whose state is not a JSON object: shown, not interpreted.
        state = {"raw": message.state.decode("utf-8", "replace")}
    return Checkpoint(
        checkpoint_id=message.checkpoint_id,
        run_id=message.run_id,
        step_number=message.step,
        state=state,
        messages=[_codec.decode_message(m.role, m.content) for m in message.messages],
        tool_results=[_result_dict(r) for r in sorted(results, key=lambda r: r.seq)],
        timestamp=_timestamp(message.created_at),
        checksum=message.checksum,
        is_valid=valid,
        metadata=dict(message.metadata),
        epoch=message.epoch,
    )


class CheckpointStore:
    """Checkpoints of agent runs in a checkpointd server (asyncio).

    `target` and the connection options are those of `AsyncClient`. A store is the writer of
    the runs it saves: the first save of a run it has not resumed calls `resume` first, which
    takes the run over (a new fencing epoch; writers holding an older one are refused).
    `backend=MemoryBackend()` instead of a target keeps the runs in this process, with the
    server's rules and no server (see `in_memory`).
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        backend: MemoryBackend | None = None,
        tenant: str | None = None,
        token: str | None = None,
        ca_cert: Pem | None = None,
        client_cert: Pem | None = None,
        client_key: Pem | None = None,
        timeout: float | None = None,
    ) -> None:
        self._options: dict[str, Any] = dict(
            tenant=tenant,
            token=token,
            ca_cert=ca_cert,
            client_cert=client_cert,
            client_key=client_key,
            timeout=timeout,
        )
        if (target is None) == (backend is None):
            raise ValueError("CheckpointStore takes a server target or an in-memory backend, not both")
        self._target = target
        self.backend = backend
        self._client_by_loop: tuple[asyncio.AbstractEventLoop, AsyncClient] | None = None
        self._runs: dict[str, _Run] = {}
        self.stats = SaveStats()

    @classmethod
    def in_memory(cls, backend: MemoryBackend | None = None) -> CheckpointStore:
        """A store whose runs live in this process's memory (a new `MemoryBackend` unless one is
        given to share): for tests and throwaway runs; nothing survives the process."""
        return cls(backend=backend or MemoryBackend())

    @property
    def client(self) -> AsyncClient | MemoryBackend:
        """The store's client, bound to the running event loop (grpc.aio channels belong to one
        loop, and a store may outlive an `asyncio.run`); its backend when in memory."""
        if self.backend is not None:
            return self.backend
        assert self._target is not None
        loop = asyncio.get_running_loop()
        if self._client_by_loop is None or self._client_by_loop[0] is not loop:
            self._client_by_loop = (loop, AsyncClient(self._target, **self._options))
        return self._client_by_loop[1]

    async def close(self) -> None:
        if self._client_by_loop is not None:
            await self._client_by_loop[1].close()
            self._client_by_loop = None

    async def resume(self, run_id: str, *, require_existing: bool = False) -> Resumed:
        """Takes the run over: a new epoch, the latest valid checkpoint (corrupt ones skipped),
        the message log truncated to it, and the whole tool journal to replay from. With
        `require_existing`, a run never seen is `NotFound` (reason RUN_NOT_FOUND) instead of a
        new run, so a mistyped run id is an error."""
        # The client declares that calls in doubt and corrupt journal entries are read (they
        # are, see `Resumed`).
        fields = {"require_existing": True} if require_existing else {}
        reply = await self.client.resume(run_id=run_id, **fields)
        run = _Run(epoch=reply.epoch)
        run.tools = _journal_chain(reply.tool_results, reply.tool_intents)
        run.journal = {r.call_id: r for r in reply.tool_results}
        run.intents = {i.call_id: i for i in reply.tool_intents}
        run.in_doubt = {
            c.call_id: InDoubt(c.call_id, c.tool_name, c.step, c.idempotency_key, c.corrupt)
            for c in reply.in_doubt
        }
        checkpoint = None
        if reply.HasField("checkpoint") and not reply.restarted_from_scratch:
            checkpoint = _checkpoint(reply.checkpoint, reply.tool_results, reply.tool_intents)
            run.messages = MessageChain().extend((m.role, m.content) for m in reply.checkpoint.messages)
            run.last_saved_step = reply.checkpoint.step
        self._runs[run_id] = run
        skipped = passed_over(reply)
        _warn_passed_over(run_id, reply.recovered_from_step if checkpoint is not None else None, skipped)
        return Resumed(
            run_id=run_id,
            epoch=reply.epoch,
            checkpoint=checkpoint,
            recovered_from_step=reply.recovered_from_step,
            restarted_from_scratch=reply.restarted_from_scratch,
            skipped_steps=list(reply.skipped_steps),
            in_doubt=list(run.in_doubt.values()),
            corrupt_call_ids=list(reply.corrupt_call_ids),
            passed_over=skipped,
        )

    async def run_head(self, run_id: str) -> pb.RunHead | None:
        """The run's head (epoch, latest and latest valid step, message and journal lengths,
        checkpoint count) without its payload and without fencing anyone; None when unknown."""
        try:
            return (await self.client.get_run(run_id=run_id)).run
        except NotFound:
            return None

    async def _run(self, run_id: str) -> _Run:
        if run_id not in self._runs:
            await self.resume(run_id)
        return self._runs[run_id]

    def epoch(self, run_id: str) -> int | None:
        """The epoch this store writes `run_id` under; None before it resumed the run."""
        run = self._runs.get(run_id)
        return run.epoch if run is not None else None

    def journalled(self, run_id: str, call_id: str) -> pb.ToolResult | None:
        run = self._runs.get(run_id)
        return run.journal.get(call_id) if run is not None else None

    def journalled_intent(self, run_id: str, call_id: str) -> pb.ToolIntent | None:
        run = self._runs.get(run_id)
        return run.intents.get(call_id) if run is not None else None

    def in_doubt(self, run_id: str, call_id: str) -> InDoubt | None:
        run = self._runs.get(run_id)
        return run.in_doubt.get(call_id) if run is not None else None

    async def save(self, checkpoint: Checkpoint) -> Checkpoint:
        """Saves `checkpoint` durably: the state, the messages past what the run's log holds
        (`messages` is the whole history, append-only), and the metadata, with the client's
        checksum v1 and the run's epoch. Returns it with its id, checksum and timestamp."""
        run = await self._run(checkpoint.run_id)
        if len(checkpoint.messages) < run.messages.length:
            raise ValueError(
                f"run {checkpoint.run_id} holds {run.messages.length} messages and the "
                f"checkpoint has {len(checkpoint.messages)}: the message log is append-only"
            )
        new = [_codec.encode_message(m) for m in checkpoint.messages[run.messages.length :]]
        chain = run.messages.extend(new)
        state = _codec.encode_state(checkpoint.state)
        checksum = None
        if run.tools is not None:
            checksum = checkpoint_checksum(
                run_id=checkpoint.run_id,
                step=checkpoint.step_number,
                content_type=_codec.CONTENT_TYPE,
                state=state,
                metadata=checkpoint.metadata,
                messages=chain,
                tools=run.tools,
            )
        attributes: dict[str, str | int] = {
            "checkpoint.run_id": checkpoint.run_id,
            "checkpoint.step": checkpoint.step_number,
            "checkpoint.bytes": len(state),
        }
        with _tracer.start_as_current_span(
            "checkpoint.save", kind=trace.SpanKind.CLIENT, attributes=attributes
        ) as span:
            started = time.perf_counter()
            reply = await self.client.save(
                run_id=checkpoint.run_id,
                step=checkpoint.step_number,
                content_type=_codec.CONTENT_TYPE,
                state=state,
                messages=[pb.Message(role=role, content=content) for role, content in new],
                message_offset=run.messages.length,
                metadata=checkpoint.metadata,
                epoch=run.epoch,
                checksum=checksum,
            )
            latency = time.perf_counter() - started
            span.set_attribute("checkpoint.save.latency_ms", latency * 1000.0)
        self.stats.latencies.append(latency)
        self.stats.sizes.append(len(state))
        self.stats.with_client_checksum += checksum is not None
        run.messages = chain
        run.last_saved_step = checkpoint.step_number
        return Checkpoint(
            checkpoint_id=reply.checkpoint_id,
            run_id=checkpoint.run_id,
            step_number=checkpoint.step_number,
            state=checkpoint.state,
            messages=list(checkpoint.messages),
            tool_results=[_result_dict(r) for r in sorted(run.journal.values(), key=lambda r: r.seq)],
            timestamp=_timestamp(reply.created_at),
            checksum=reply.checksum,
            is_valid=True,
            metadata=dict(checkpoint.metadata),
            epoch=run.epoch,
        )

    async def load_latest(self, run_id: str) -> Checkpoint | None:
        """The latest valid checkpoint (corrupt ones are quarantined and skipped, logged at
        WARNING on every load and listed in its `passed_over`); None when the run has none,
        or when every checkpoint is corrupt."""
        try:
            reply = await self.client.load_latest(run_id=run_id)
        except (NotFound, DataLoss):
            return None
        loaded = _checkpoint(reply.checkpoint, reply.tool_results, reply.tool_intents)
        loaded.passed_over = passed_over(reply)
        _warn_passed_over(run_id, loaded.step_number, loaded.passed_over)
        return loaded

    async def load_at_step(self, run_id: str, step: int) -> Checkpoint | None:
        """The checkpoint at `step`; None when there is none. `DataLoss` when it is corrupt."""
        try:
            reply = await self.client.load_at_step(run_id=run_id, step=step)
        except NotFound:
            return None
        return _checkpoint(reply.checkpoint, reply.tool_results, reply.tool_intents)

    async def validate(self, checkpoint: Checkpoint | str, step: int | None = None) -> bool:
        """Whether a checkpoint is intact. Given a `Checkpoint`: its checksum verified here and
        the stored one verified by the server, and both equal. Given a run id: the server's
        verdict on `step`, or on every checkpoint of the run. The server quarantines what fails."""
        if isinstance(checkpoint, Checkpoint):
            run_id, step = checkpoint.run_id, checkpoint.step_number
        else:
            run_id = checkpoint
        try:
            reply = await self.client.validate(run_id=run_id, step=step)
        except NotFound:
            return False
        if not reply.verdicts or not all(v.valid for v in reply.verdicts):
            return False
        if isinstance(checkpoint, Checkpoint):
            return checkpoint.is_valid and reply.verdicts[0].stored_checksum == checkpoint.checksum
        return True

    async def record_tool_result(
        self,
        run_id: str,
        call_id: str,
        tool_name: str,
        step: int,
        output: bytes,
        is_error: bool = False,
        *,
        arguments_digest: str = "",
    ) -> pb.ToolResult:
        """Journals a tool's result (the stored one when the call id was journalled already
        with the same arguments; `ReplayMismatch` when with other ones, see
        `checkpointd.digest`)."""
        run = await self._run(run_id)
        reply = await self.client.record_tool_result(
            run_id=run_id,
            call_id=call_id,
            tool_name=tool_name,
            step=step,
            output=output,
            is_error=is_error,
            epoch=run.epoch,
            arguments_digest=arguments_digest,
        )
        self._journalled(run, reply.result)
        run.in_doubt.pop(call_id, None)
        return reply.result

    async def record_tool_intent(
        self, run_id: str, call_id: str, tool_name: str, step: int, *, arguments_digest: str = ""
    ) -> pb.RecordToolIntentResponse:
        """Journals that a side-effecting call is about to run; the reply has its key."""
        run = await self._run(run_id)
        reply = await self.client.record_tool_intent(
            run_id=run_id,
            call_id=call_id,
            tool_name=tool_name,
            step=step,
            epoch=run.epoch,
            arguments_digest=arguments_digest,
        )
        if reply.HasField("result"):
            self._journalled(run, reply.result)
        elif not reply.already_recorded:
            self._journalled(run, reply.intent)
        return reply

    @staticmethod
    def _journalled(run: _Run, entry: pb.ToolResult | pb.ToolIntent) -> None:
        """Adds a new journal entry; the chain extends only when it is the next one."""
        known = run.journal if isinstance(entry, pb.ToolResult) else run.intents
        if entry.call_id in known:
            return
        if run.tools is not None:
            run.tools = _push(run.tools, entry) if entry.seq == run.tools.length + 1 else None
        known[entry.call_id] = entry
