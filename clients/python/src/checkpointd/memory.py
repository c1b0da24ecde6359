"""`MemoryBackend`: checkpointd's checkpoint rules in-process, for tests and throwaway runs.

`CheckpointStore.in_memory()` (or `CheckpointStore(backend=MemoryBackend())`) stores runs in
this process's memory, with no server. It answers the calls the store makes (Resume, Save,
LoadLatest, LoadAtStep, Validate, GetRun, ListCheckpoints, RecordToolResult, RecordToolIntent)
with the same messages and the same errors and reasons as the server's memory backend
(crates/server/src/store/plan.rs, service/checkpoints.rs): checksum v1 computed on save and
verified on every read (a corrupt checkpoint is quarantined and skipped; when all are, Resume
restarts from scratch), fencing epochs, idempotent saves and tool results, the message log with
offsets, the tool journal with intents and calls in doubt. Nothing survives the process, and it
has no tenants, auth, size limits, retention or task queue.

Several stores may share one backend, as several processes share one server.
`corrupt_state` and `corrupt_tool_result` damage stored data the way a bad disk would.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from ._proto import checkpoint_pb2 as pb
from ._rpc import CHECKPOINTS, build_request, resume_request
from .checksum import ZERO, MessageChain, ToolChain, checkpoint_checksum, idempotency_key
from .errors import (
    ARGUMENTS_MISMATCH,
    DOMAIN,
    AlreadyExists,
    CheckpointdError,
    DataLoss,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ReplayMismatch,
)

_MAX_ID_BYTES = 256


def _refused(cls: type[CheckpointdError], reason: str, message: str) -> CheckpointdError:
    return cls(message, reason=reason, domain=DOMAIN)


def _now() -> Timestamp:
    stamp = Timestamp()
    stamp.GetCurrentTime()
    return stamp


def _new_id() -> str:
    """A time-ordered UUID v7, as the server's checkpoint ids."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis << 80) | (0x7 << 76) | (((rand >> 62) & 0xFFF) << 64) | (0b10 << 62)
    return str(uuid.UUID(int=value | (rand & ((1 << 62) - 1))))


@dataclass
class _Row:
    """A stored checkpoint."""

    id: str
    epoch: int
    content_type: str
    state: bytes
    metadata: dict[str, str]
    message_count: int
    tool_count: int
    checksum: str
    created_at: Timestamp
    label: str
    quarantine: str | None = None
    quarantined_at: Timestamp | None = None


@dataclass
class _Entry:
    """A journal entry (a result, or an intent when `intent`) and the chain value after it."""

    intent: bool
    call_id: str
    tool_name: str
    step: int
    output: bytes = b""
    is_error: bool = False
    seq: int = 0
    recorded_at: Timestamp = field(default_factory=_now)
    chain: bytes = ZERO
    arguments_digest: str = ""

    def pushed(self, chain: ToolChain) -> ToolChain:
        if self.intent:
            return chain.push_intent(self.call_id, self.tool_name, self.step)
        return chain.push_result(self.call_id, self.tool_name, self.step, self.output, self.is_error)


@dataclass
class _RunData:
    epoch: int = 0
    checkpoints: dict[int, _Row] = field(default_factory=dict)
    #: The message log: role, content and the chain value after each message.
    messages: list[tuple[str, bytes, bytes]] = field(default_factory=list)
    head: MessageChain = MessageChain()
    journal: list[_Entry] = field(default_factory=list)
    tools: ToolChain = ToolChain()
    updated_at: Timestamp = field(default_factory=_now)

    def latest_valid(self, below: int | None = None) -> tuple[int, _Row] | None:
        for step in sorted(self.checkpoints, reverse=True):
            if (below is None or step < below) and self.checkpoints[step].quarantine is None:
                return step, self.checkpoints[step]
        return None


def _check_id(kind: str, raw: str) -> str:
    if not raw:
        raise _refused(InvalidArgument, "INVALID_ARGUMENT", f"{kind} must not be empty")
    if len(raw.encode()) > _MAX_ID_BYTES:
        raise _refused(InvalidArgument, "INVALID_ARGUMENT", f"{kind} is over {_MAX_ID_BYTES} bytes")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in raw):
        raise _refused(InvalidArgument, "INVALID_ARGUMENT", f"{kind} must not contain control characters")
    return raw


def _check_step(step: int, kind: str = "step") -> int:
    if step < 0:
        raise _refused(InvalidArgument, "INVALID_ARGUMENT", f"{kind} must be >= 0, got {step}")
    return step


def _check_epoch(requested: int, current: int) -> None:
    """Fencing: a write carries exactly the run's current epoch."""
    if requested < current:
        raise _refused(
            FailedPrecondition,
            "STALE_EPOCH",
            f"stale epoch {requested}: the run was resumed at epoch {current}; this writer is fenced",
        )
    if requested > current:
        raise _refused(
            FailedPrecondition,
            "EPOCH_NOT_ISSUED",
            f"epoch {requested} was never issued: the run is at epoch {current}",
        )


def _journal_chain(entries: list[_Entry]) -> ToolChain:
    chain = ToolChain()
    for entry in entries:
        chain = entry.pushed(chain)
    return chain


def _verify_journal(journal: list[_Entry]) -> str | None:
    """Why the journal fails verification, or None: every stored chain value must match."""
    chain = ToolChain()
    for index, entry in enumerate(journal):
        if entry.seq != index + 1:
            return f"tool journal has a hole: entry {index + 1} carries seq {entry.seq}"
        chain = entry.pushed(chain)
        if chain.digest != entry.chain:
            return f"tool result {entry.call_id} (seq {entry.seq}) does not match its digest"
    return None


@dataclass
class _Diagnosis:
    """A journal read apart: sound and corrupt entries, and the calls in doubt."""

    sound: list[_Entry]
    corrupt: list[_Entry]
    in_doubt: list[tuple[_Entry, bool]]

    @classmethod
    def of(cls, journal: list[_Entry]) -> _Diagnosis:
        sound: list[_Entry] = []
        corrupt: list[_Entry] = []
        previous = ToolChain()
        for index, entry in enumerate(journal):
            ok = entry.seq == index + 1 and entry.pushed(previous).digest == entry.chain
            (sound if ok else corrupt).append(entry)
            previous = ToolChain(index + 1, entry.chain)
        completed = {e.call_id for e in sound if not e.intent}
        corrupt_calls = {e.call_id for e in corrupt}
        in_doubt: list[tuple[_Entry, bool]] = []
        seen: set[str] = set()
        for entry in [*sound, *corrupt]:
            damaged = entry.call_id in corrupt_calls
            if (entry.intent or damaged) and entry.call_id not in completed and entry.call_id not in seen:
                seen.add(entry.call_id)
                in_doubt.append((entry, damaged))
        order: dict[str, int] = {}
        for index, entry in enumerate(journal):
            order.setdefault(entry.call_id, index)
        in_doubt.sort(key=lambda call: order[call[0].call_id])
        return cls(sound, corrupt, in_doubt)

    def corrupt_call_ids(self) -> list[str]:
        return list(dict.fromkeys(e.call_id for e in self.corrupt))


class MemoryBackend:
    """Runs kept in this process; the subset of `AsyncClient` a `CheckpointStore` calls."""

    def __init__(self, tenant: str = "default") -> None:
        self.tenant = tenant
        self._runs: dict[str, _RunData] = {}

    # Test hooks: damage, as a bad disk would.

    def corrupt_state(self, run_id: str, step: int) -> None:
        """Flips the first byte of the stored state of the checkpoint at `step`."""
        row = self._runs[run_id].checkpoints[step]
        first = (row.state[0] + 1) % 256 if row.state else 0
        row.state = bytes([first]) + row.state[1:]

    def corrupt_tool_result(self, run_id: str, call_id: str) -> None:
        """Flips the first byte of a journalled result's output."""
        for entry in self._runs[run_id].journal:
            if entry.call_id == call_id and not entry.intent:
                entry.output = bytes([(entry.output[0] + 1) % 256 if entry.output else 0]) + entry.output[1:]
                return
        raise KeyError(call_id)

    async def close(self) -> None:
        """Nothing to release; here so a store closes a backend like a client."""

    # Conversions to the wire messages the server sends.

    def _checkpoint(self, run_id: str, step: int, row: _RunData | None, offset: int = 0) -> pb.Checkpoint:
        assert row is not None
        stored = row.checkpoints[step]
        skip = min(offset, stored.message_count)
        return pb.Checkpoint(
            checkpoint_id=stored.id,
            run_id=run_id,
            step=step,
            content_type=stored.content_type,
            state=stored.state,
            messages=[pb.Message(role=r, content=c) for r, c, _ in row.messages[skip : stored.message_count]],
            metadata=stored.metadata,
            epoch=stored.epoch,
            checksum=stored.checksum,
            created_at=stored.created_at,
            message_count=stored.message_count,
            tool_count=stored.tool_count,
            messages_offset=skip,
            label=stored.label,
        )

    def _result(self, entry: _Entry) -> pb.ToolResult:
        return pb.ToolResult(
            call_id=entry.call_id,
            tool_name=entry.tool_name,
            step=entry.step,
            output=entry.output,
            is_error=entry.is_error,
            seq=entry.seq,
            recorded_at=entry.recorded_at,
            arguments_digest=entry.arguments_digest,
        )

    def _intent(self, run_id: str, entry: _Entry) -> pb.ToolIntent:
        return pb.ToolIntent(
            call_id=entry.call_id,
            tool_name=entry.tool_name,
            step=entry.step,
            idempotency_key=idempotency_key(self.tenant, run_id, entry.call_id),
            seq=entry.seq,
            recorded_at=entry.recorded_at,
            arguments_digest=entry.arguments_digest,
        )

    def _journal(self, run_id: str, entries: list[_Entry]) -> dict[str, Any]:
        return {
            "tool_results": [self._result(e) for e in entries if not e.intent],
            "tool_intents": [self._intent(run_id, e) for e in entries if e.intent],
        }

    # Verification, shared by every read.

    @staticmethod
    def _verify(run_id: str, data: _RunData, step: int) -> str | None:
        """Why the checkpoint at `step` does not verify against its checksum, or None."""
        row = data.checkpoints[step]
        if len(data.messages) < row.message_count:
            return f"message log holds {len(data.messages)} of the {row.message_count} messages"
        if len(data.journal) < row.tool_count:
            return f"tool journal holds {len(data.journal)} of the {row.tool_count} entries"
        messages = MessageChain().extend((r, c) for r, c, _ in data.messages[: row.message_count])
        computed = checkpoint_checksum(
            run_id=run_id,
            step=step,
            content_type=row.content_type,
            state=row.state,
            metadata=row.metadata,
            messages=messages,
            tools=_journal_chain(data.journal[: row.tool_count]),
        )
        if computed != row.checksum:
            return f"checksum mismatch: stored {row.checksum}, computed {computed}"
        return None

    def _latest_valid(
        self, run_id: str, data: _RunData | None, fall_back: bool
    ) -> tuple[int | None, list[int]]:
        """The newest step that verifies (corrupt ones above it quarantined on the way) and the
        steps skipped, newest first. A damaged journal is DATA_LOSS unless `fall_back`: then
        the newest checkpoint that does not cover its first corrupt entry is restored."""
        skipped: list[int] = []
        below: int | None = None
        while data is not None and (found := data.latest_valid(below)) is not None:
            step, row = found
            damage = _verify_journal(data.journal)
            if damage is not None:
                if not fall_back:
                    raise _refused(DataLoss, "CHECKPOINT_CORRUPT", f"tool journal is corrupt: {damage}")
                first = _Diagnosis.of(data.journal).corrupt[0].seq
                if row.tool_count >= first:
                    row.quarantine = f"covers tool journal entry {first}, which is corrupt"
                    row.quarantined_at = row.quarantined_at or _now()
                    skipped.append(step)
                    below = step
                    continue
            reason = self._verify(run_id, data, step)
            if reason is None:
                return step, skipped
            row.quarantine = reason
            row.quarantined_at = row.quarantined_at or _now()
            skipped.append(step)
            below = step
        return None, skipped

    @staticmethod
    def _quarantined_above(data: _RunData | None, restored: int | None) -> list[int]:
        if data is None:
            return []
        steps = [s for s, row in data.checkpoints.items() if row.quarantine is not None]
        return sorted((s for s in steps if restored is None or s > restored), reverse=True)

    @classmethod
    def _passed_over(cls, data: _RunData | None, restored: int | None) -> list[pb.PassedOverCheckpoint]:
        """Every quarantined checkpoint above the one a read returns, newest first: sent on every
        read, whether this read found them corrupt or an earlier one did."""
        if data is None:
            return []
        out = []
        for step in cls._quarantined_above(data, restored):
            row = data.checkpoints[step]
            out.append(
                pb.PassedOverCheckpoint(
                    step=step,
                    checkpoint_id=row.id,
                    label=row.label,
                    metadata=row.metadata,
                    quarantined_at=row.quarantined_at,
                    reason=row.quarantine or "",
                )
            )
        return out

    # The RPCs, with `AsyncClient`'s signatures.

    async def resume(
        self, request: pb.ResumeRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ResumeResponse:
        # Declares what the package's clients declare, unless the caller chose otherwise.
        message: Any = resume_request(request, fields)
        run_id = _check_id("run_id", message.run_id)
        if message.require_existing and run_id not in self._runs:
            raise _refused(
                NotFound,
                "RUN_NOT_FOUND",
                f"run {run_id} not found; Resume with require_existing starts no new run",
            )
        data = self._runs.setdefault(run_id, _RunData())
        # The epoch goes up first, so nothing an older owner writes from here on can land.
        data.epoch += 1
        data.updated_at = _now()
        if pb.CLIENT_CAPABILITY_IN_DOUBT_CALLS not in message.capabilities:
            self._refuse_calls_in_doubt(run_id, data)
        step, _ = self._latest_valid(run_id, data, fall_back=True)
        skipped = self._quarantined_above(data, step)
        diagnosis = _Diagnosis.of(data.journal)
        count = data.checkpoints[step].message_count if step is not None else 0
        del data.messages[count:]
        data.head = MessageChain(count, data.messages[count - 1][2] if count else ZERO)
        return pb.ResumeResponse(
            checkpoint=self._checkpoint(run_id, step, data, message.message_offset)
            if step is not None
            else None,
            recovered_from_step=step or 0,
            skipped_steps=skipped,
            passed_over=self._passed_over(data, step),
            epoch=data.epoch,
            restarted_from_scratch=step is None,
            in_doubt=[
                pb.InDoubtCall(
                    call_id=e.call_id,
                    tool_name=e.tool_name,
                    step=e.step,
                    idempotency_key=idempotency_key(self.tenant, run_id, e.call_id),
                    corrupt=damaged,
                )
                for e, damaged in diagnosis.in_doubt
            ],
            corrupt_call_ids=diagnosis.corrupt_call_ids(),
            **self._journal(run_id, diagnosis.sound),
        )

    @staticmethod
    def _refuse_calls_in_doubt(run_id: str, data: _RunData) -> None:
        """The old, safe answer to a Resume that does not declare it reads calls in doubt."""
        diagnosis = _Diagnosis.of(data.journal)
        corrupt = diagnosis.corrupt_call_ids()
        if corrupt:
            raise _refused(
                DataLoss,
                "CHECKPOINT_CORRUPT",
                f"the tool journal of run {run_id} has corrupt entries (calls {', '.join(corrupt)})",
            )
        if diagnosis.in_doubt:
            raise _refused(
                FailedPrecondition,
                "CAPABILITY_REQUIRED",
                f"run {run_id} has {len(diagnosis.in_doubt)} call(s) in doubt; resume with "
                "capability CLIENT_CAPABILITY_IN_DOUBT_CALLS",
            )

    async def save(
        self, request: pb.SaveRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.SaveResponse:
        message: Any = build_request(CHECKPOINTS, "Save", request, fields)
        run_id = _check_id("run_id", message.run_id)
        step = _check_step(message.step)
        data = self._runs.get(run_id) or _RunData()
        _check_epoch(message.epoch, data.epoch)
        offset = message.message_offset
        if offset > data.head.length:
            raise _refused(
                FailedPrecondition,
                "MESSAGE_LOG_BEHIND",
                f"message_offset {offset} is past the stored message log, which holds "
                f"{data.head.length} messages; Resume the run and continue from what it restores",
            )
        prefix = data.messages[offset - 1][2] if offset else ZERO
        rows: list[tuple[str, bytes, bytes]] = []
        chain = MessageChain(offset, prefix)
        for m in message.messages:
            chain = chain.push(m.role, m.content)
            rows.append((m.role, m.content, chain.digest))
        metadata = dict(message.metadata)
        checksum = checkpoint_checksum(
            run_id=run_id,
            step=step,
            content_type=message.content_type,
            state=message.state,
            metadata=metadata,
            messages=chain,
            tools=data.tools,
        )
        if message.HasField("checksum") and message.checksum != checksum:
            raise _refused(
                InvalidArgument,
                "CHECKSUM_MISMATCH",
                f"checksum mismatch: the request carries {message.checksum}, "
                f"the content hashes to {checksum}",
            )
        label = message.label
        taken = next((s for s, r in data.checkpoints.items() if label and r.label == label), None)
        if taken is not None and taken != step:
            raise _refused(
                AlreadyExists, "LABEL_TAKEN", f"label {label!r} already names the checkpoint at step {taken}"
            )
        existing = data.checkpoints.get(step)
        replace = False
        if existing is not None:
            if existing.quarantine is not None:
                replace = True
            elif existing.checksum == checksum and existing.label == label:
                return pb.SaveResponse(
                    checkpoint_id=existing.id,
                    checksum=checksum,
                    created_at=existing.created_at,
                    already_existed=True,
                )
            elif message.epoch > existing.epoch:
                replace = True
            else:
                raise _refused(
                    AlreadyExists,
                    "STEP_CONFLICT",
                    f"step {step} of run {run_id} already holds a different checkpoint",
                )
        latest = data.latest_valid()
        if not replace and latest is not None and latest[0] >= step:
            raise _refused(
                FailedPrecondition,
                "STEP_BEHIND_LATEST",
                f"step {step} is not after the run's latest checkpoint at step {latest[0]}",
            )
        if offset != data.head.length:
            raise _refused(
                InvalidArgument,
                "INVALID_ARGUMENT",
                f"message_offset {offset} does not match the message log's length {data.head.length}",
            )
        data = self._runs.setdefault(run_id, data)
        data.messages.extend(rows)
        data.head = chain
        data.updated_at = created = _now()
        row = _Row(
            id=_new_id(),
            epoch=message.epoch,
            content_type=message.content_type,
            state=message.state,
            metadata=metadata,
            message_count=chain.length,
            tool_count=data.tools.length,
            checksum=checksum,
            created_at=created,
            label=label,
        )
        data.checkpoints[step] = row
        return pb.SaveResponse(checkpoint_id=row.id, checksum=checksum, created_at=created)

    async def load_latest(
        self, request: pb.LoadLatestRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LoadLatestResponse:
        message: Any = build_request(CHECKPOINTS, "LoadLatest", request, fields)
        run_id = _check_id("run_id", message.run_id)
        data = self._runs.get(run_id)
        step, skipped = self._latest_valid(run_id, data, fall_back=False)
        if step is None:
            skipped = skipped or self._quarantined_above(data, None)
            if not skipped:
                raise _refused(NotFound, "CHECKPOINT_NOT_FOUND", f"run {run_id} has no checkpoints")
            raise _refused(
                DataLoss,
                "ALL_CHECKPOINTS_CORRUPT",
                f"every checkpoint of run {run_id} is corrupt ({len(skipped)} quarantined)",
            )
        assert data is not None
        return pb.LoadLatestResponse(
            checkpoint=self._checkpoint(run_id, step, data, message.message_offset),
            skipped_steps=skipped,
            passed_over=self._passed_over(data, step),
            **self._journal(run_id, _scoped(data.journal, message.journal, step)),
        )

    async def load_at_step(
        self, request: pb.LoadAtStepRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LoadAtStepResponse:
        message: Any = build_request(CHECKPOINTS, "LoadAtStep", request, fields)
        run_id = _check_id("run_id", message.run_id)
        data = self._runs.get(run_id)
        checkpoints = data.checkpoints if data is not None else {}
        if message.label:
            step = next((s for s, r in checkpoints.items() if r.label == message.label), None)
            if step is None:
                raise _refused(
                    NotFound,
                    "CHECKPOINT_NOT_FOUND",
                    f"run {run_id} has no checkpoint labelled {message.label!r}",
                )
        else:
            step = _check_step(message.step)
        if data is None or step not in checkpoints:
            raise _refused(NotFound, "CHECKPOINT_NOT_FOUND", f"run {run_id} has no checkpoint at step {step}")
        row = checkpoints[step]
        if row.quarantine is not None:
            raise _refused(
                DataLoss, "CHECKPOINT_CORRUPT", f"checkpoint at step {step} is quarantined: {row.quarantine}"
            )
        damage = _verify_journal(data.journal)
        if damage is not None:
            raise _refused(DataLoss, "CHECKPOINT_CORRUPT", f"tool journal is corrupt: {damage}")
        reason = self._verify(run_id, data, step)
        if reason is not None:
            row.quarantine = reason
            row.quarantined_at = row.quarantined_at or _now()
            raise _refused(DataLoss, "CHECKPOINT_CORRUPT", f"checkpoint at step {step} is corrupt: {reason}")
        return pb.LoadAtStepResponse(
            checkpoint=self._checkpoint(run_id, step, data, message.message_offset),
            **self._journal(run_id, _scoped(data.journal, message.journal, step)),
        )

    async def validate(
        self, request: pb.ValidateRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ValidateResponse:
        message: Any = build_request(CHECKPOINTS, "Validate", request, fields)
        run_id = _check_id("run_id", message.run_id)
        data = self._runs.get(run_id)
        checkpoints = data.checkpoints if data is not None else {}
        steps = [_check_step(message.step)] if message.HasField("step") else sorted(checkpoints)
        if data is None or not steps:
            raise _refused(NotFound, "CHECKPOINT_NOT_FOUND", f"run {run_id} has no checkpoints")
        verdicts = []
        for step in steps:
            if step not in checkpoints:
                raise _refused(
                    NotFound, "CHECKPOINT_NOT_FOUND", f"run {run_id} has no checkpoint at step {step}"
                )
            row = checkpoints[step]
            earlier = row.quarantine
            reason = self._verify(run_id, data, step)
            if reason is not None and earlier is None:
                row.quarantine = reason
                row.quarantined_at = row.quarantined_at or _now()
            shown = reason or (f"quarantined earlier: {earlier}" if earlier else "")
            verdicts.append(
                pb.CheckpointVerdict(
                    step=step,
                    valid=reason is None,
                    reason=shown,
                    stored_checksum=row.checksum,
                    quarantined=earlier is not None or reason is not None,
                )
            )
        return pb.ValidateResponse(verdicts=verdicts)

    async def get_run(
        self, request: pb.GetRunRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.GetRunResponse:
        message: Any = build_request(CHECKPOINTS, "GetRun", request, fields)
        run_id = _check_id("run_id", message.run_id)
        data = self._runs.get(run_id)
        if data is None:
            raise _refused(NotFound, "RUN_NOT_FOUND", f"run {run_id} not found")
        latest_valid = data.latest_valid()
        return pb.GetRunResponse(
            run=pb.RunHead(
                run_id=run_id,
                epoch=data.epoch,
                latest_step=max(data.checkpoints, default=0),
                latest_valid_step=latest_valid[0] if latest_valid else 0,
                message_count=data.head.length,
                tool_count=data.tools.length,
                checkpoint_count=len(data.checkpoints),
                updated_at=data.updated_at,
            )
        )

    async def list_checkpoints(
        self,
        request: pb.ListCheckpointsRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.ListCheckpointsResponse:
        """Every checkpoint of the run in one page (no paging), in step order or `descending`."""
        message: Any = build_request(CHECKPOINTS, "ListCheckpoints", request, fields)
        run_id = _check_id("run_id", message.run_id)
        data = self._runs.get(run_id)
        if data is None:
            raise _refused(NotFound, "RUN_NOT_FOUND", f"run {run_id} not found")
        wanted = dict(message.metadata_filter)
        summaries = [
            pb.CheckpointSummary(
                step=step,
                size_bytes=len(row.state),
                valid=row.quarantine is None,
                quarantine_reason=row.quarantine or "",
                created_at=row.created_at,
                checksum=row.checksum,
                epoch=row.epoch,
                message_count=row.message_count,
                label=row.label,
                metadata=row.metadata,
            )
            for step, row in sorted(data.checkpoints.items(), reverse=message.descending)
            if all(row.metadata.get(k) == v for k, v in wanted.items())
        ]
        return pb.ListCheckpointsResponse(checkpoints=summaries)

    async def record_tool_result(
        self,
        request: pb.RecordToolResultRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RecordToolResultResponse:
        message: Any = build_request(CHECKPOINTS, "RecordToolResult", request, fields)
        run_id = _check_id("run_id", message.run_id)
        call_id = _check_id("call_id", message.call_id)
        data = self._runs.get(run_id) or _RunData()
        _check_epoch(message.epoch, data.epoch)
        digest = _check_digest(message.arguments_digest)
        existing = next((e for e in data.journal if e.call_id == call_id and not e.intent), None)
        intent = next((e for e in data.journal if e.call_id == call_id and e.intent), None)
        for known in (existing, intent):
            if known is not None:
                _check_same_arguments(call_id, known.arguments_digest, digest)
        if existing is not None:
            return pb.RecordToolResultResponse(result=self._result(existing), already_recorded=True)
        step = _check_step(message.step)
        entry = _Entry(False, call_id, message.tool_name, step, message.output, message.is_error)
        entry.arguments_digest = digest
        entry = self._append(run_id, data, entry)
        return pb.RecordToolResultResponse(result=self._result(entry))

    async def record_tool_intent(
        self,
        request: pb.RecordToolIntentRequest | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.RecordToolIntentResponse:
        message: Any = build_request(CHECKPOINTS, "RecordToolIntent", request, fields)
        run_id = _check_id("run_id", message.run_id)
        call_id = _check_id("call_id", message.call_id)
        data = self._runs.get(run_id) or _RunData()
        _check_epoch(message.epoch, data.epoch)
        digest = _check_digest(message.arguments_digest)
        intent = next((e for e in data.journal if e.call_id == call_id and e.intent), None)
        result = next((e for e in data.journal if e.call_id == call_id and not e.intent), None)
        for known in (intent, result):
            if known is not None:
                _check_same_arguments(call_id, known.arguments_digest, digest)
        if intent is not None or result is not None:
            # A call known already (an intent, a result or both) gets no second intent.
            return pb.RecordToolIntentResponse(
                intent=self._intent(run_id, intent) if intent is not None else None,
                result=self._result(result) if result is not None else None,
                already_recorded=True,
            )
        step = _check_step(message.step)
        entry = _Entry(True, call_id, message.tool_name, step)
        entry.arguments_digest = digest
        entry = self._append(run_id, data, entry)
        return pb.RecordToolIntentResponse(intent=self._intent(run_id, entry))

    def _append(self, run_id: str, data: _RunData, entry: _Entry) -> _Entry:
        """Journals a new entry: its seq and chain value are the run's next."""
        data = self._runs.setdefault(run_id, data)
        data.tools = entry.pushed(data.tools)
        entry.seq, entry.chain = data.tools.length, data.tools.digest
        data.journal.append(entry)
        data.updated_at = entry.recorded_at
        return entry


def _check_digest(digest: str) -> str:
    """An arguments digest is empty or 64 lower-case hex characters, as the server checks."""
    if digest and (len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest)):
        raise InvalidArgument(
            "arguments_digest must be 64 lower-case hex characters (SHA-256) or empty",
            reason="INVALID_ARGUMENT",
            domain=DOMAIN,
            metadata={"field": "arguments_digest"},
        )
    return digest


def _check_same_arguments(call_id: str, stored: str, requested: str) -> None:
    """A call id journalled with one digest refuses another (ALREADY_EXISTS, ARGUMENTS_MISMATCH)."""
    if stored and requested and stored != requested:
        raise ReplayMismatch(
            f"call {call_id} is journalled with other arguments",
            reason=ARGUMENTS_MISMATCH,
            domain=DOMAIN,
            metadata={"call_id": call_id, "stored_digest": stored, "request_digest": requested},
        )


def _scoped(journal: list[_Entry], scope: int, step: int) -> list[_Entry]:
    """The entries a load's `journal` scope asks for (0, 1: all; 2: the step's; 3: none)."""
    if scope == pb.JOURNAL_SCOPE_STEP:
        return [e for e in journal if e.step == step]
    if scope == pb.JOURNAL_SCOPE_NONE:
        return []
    return journal
