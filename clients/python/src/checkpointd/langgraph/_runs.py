"""What the saver remembers about each checkpointd run between calls.

A run's message log is append-only, so the saver keeps the prefix it has seen (the messages,
deserialized, and the chain digest `d_k` after each) to send only new messages on a save and to
ask loads for the rest only (`message_offset`). To send a client checksum it also keeps the
run's tool-journal chain `t_n`, the next step and the fencing epoch, learnt from the server by
a sync and advanced by its own writes. Anything that proves this knowledge stale (a conflict on
save, a checksum the server computes differently, a log digest that does not match) drops it
and the next call syncs again.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from .._proto import checkpoint_pb2 as pb
from ..checksum import ZERO, MessageChain, ToolChain
from ._effects import Gate

log = logging.getLogger(__name__)

#: Checkpoint id -> step entries kept per run.
_MAX_LABELS = 4096
#: Checkpoints per run whose pending writes may wait for their checkpoint to land.
_MAX_HELD = 256
#: Journal entries learnt past a gap before the chain is given up and learnt again by a sync.
_MAX_EARLY = 1024


@dataclass
class JournalEntry:
    """What one journal entry contributes to the tool chain."""

    seq: int
    intent: bool
    call_id: str
    tool_name: str
    step: int
    output: bytes = b""
    is_error: bool = False

    @classmethod
    def of_result(cls, r: pb.ToolResult) -> JournalEntry:
        return cls(r.seq, False, r.call_id, r.tool_name, r.step, r.output, r.is_error)

    @classmethod
    def of_intent(cls, i: pb.ToolIntent) -> JournalEntry:
        return cls(i.seq, True, i.call_id, i.tool_name, i.step)

    @classmethod
    def of_journal(cls, e: pb.JournalEntry) -> JournalEntry:
        kind = e.kind == pb.JOURNAL_ENTRY_KIND_INTENT
        return cls(e.seq, kind, e.call_id, e.tool_name, e.step, e.output, e.is_error)

    def pushed(self, chain: ToolChain) -> ToolChain:
        """`chain` advanced by this entry."""
        if self.intent:
            return chain.push_intent(self.call_id, self.tool_name, self.step)
        return chain.push_result(self.call_id, self.tool_name, self.step, self.output, self.is_error)


@dataclass(frozen=True)
class HeldWrite:
    """A pending write that arrived before its checkpoint landed (LangGraph's default
    durability sends both at once); it is recorded as soon as the checkpoint is saved."""

    task_id: str
    task_path: str
    idx: int
    channel: str
    typed: tuple[str, bytes]


@dataclass
class RunState:
    run_id: str
    # `lock` guards these fields for a moment, never across a call; `gate` is held across calls
    # (by a save exclusively; by journal writes, shared, only with a `Core.legacy_journal` server).
    lock: threading.RLock = field(default_factory=threading.RLock)
    gate: Gate = field(default_factory=Gate)
    # The message log prefix held: messages[i] is log position i; digests[k] is d_k.
    messages: list[Any] = field(default_factory=list)
    digests: list[bytes] = field(default_factory=lambda: [ZERO])
    # Save-side knowledge, valid only while `synced`.
    synced: bool = False
    next_step: int = 0
    epoch: int = 0
    tools: ToolChain = field(default_factory=ToolChain)
    early: dict[int, JournalEntry] = field(default_factory=dict)
    labels: OrderedDict[str, int] = field(default_factory=OrderedDict)
    held: OrderedDict[str, list[HeldWrite]] = field(default_factory=OrderedDict)
    newest_label: str | None = None
    # A load of the latest checkpoint found none: every id this process meets next is new.
    seen_empty: bool = False
    # Exclusive writing: the epoch this saver took the run with, None until it takes it.
    owned_epoch: int | None = None

    # -- message log ------------------------------------------------------------------------

    @property
    def log_length(self) -> int:
        return len(self.messages)

    def chain_at(self, length: int) -> MessageChain:
        return MessageChain(length, self.digests[length])

    def extend_log(self, objects: list[Any], serialized: list[tuple[str, bytes]]) -> None:
        chain = self.chain_at(self.log_length)
        for obj, (role, content) in zip(objects, serialized, strict=False):
            chain = chain.push(role, content)
            self.messages.append(obj)
            self.digests.append(chain.digest)

    def drop_log(self) -> None:
        self.messages = []
        self.digests = [ZERO]

    # -- journal chain ----------------------------------------------------------------------

    def learn(self, entry: JournalEntry) -> None:
        """Advances the tool chain by an entry the server confirmed, in `seq` order; entries
        that arrive ahead of a gap wait in `early`."""
        with self.lock:  # writers of one run record in parallel
            if not self.synced or entry.seq <= self.tools.length:
                return
            self.early[entry.seq] = entry
            while (nxt := self.early.pop(self.tools.length + 1, None)) is not None:
                self.tools = nxt.pushed(self.tools)
            if len(self.early) > _MAX_EARLY:
                # A gap that does not fill (an answer lost, another process's entries): the
                # chain stays a valid prefix, but stale; the next save learns it again.
                self.forget()

    def reset_journal(self, entries: list[JournalEntry]) -> bool:
        """Rebuilds the tool chain from the whole journal; False when it has a gap."""
        chain = ToolChain()
        for entry in sorted(entries, key=lambda e: e.seq):
            if entry.seq != chain.length + 1:
                return False
            chain = entry.pushed(chain)
        with self.lock:  # journal writes of this process may be learning meanwhile
            early = [e for e in self.early.values() if e.seq > chain.length]
            self.tools = chain
            self.early.clear()
        for entry in early:
            self.learn(entry)
        return True

    # -- labels -----------------------------------------------------------------------------

    def remember(self, checkpoint_id: str, step: int) -> None:
        if self.newest_label is None or checkpoint_id > self.newest_label:
            self.newest_label = checkpoint_id
        self.labels[checkpoint_id] = step
        self.labels.move_to_end(checkpoint_id)
        while len(self.labels) > _MAX_LABELS:
            self.labels.popitem(last=False)

    def newer_than_known(self, checkpoint_id: str) -> bool:
        """True when this process knows the run's checkpoints (or found it had none) and
        `checkpoint_id` sorts after every one it knows (LangGraph's ids are time-ordered UUIDv6
        strings)."""
        if self.newest_label is None:
            return self.seen_empty
        return checkpoint_id > self.newest_label

    def hold(self, checkpoint_id: str, writes: list[HeldWrite]) -> None:
        """Keeps writes for a checkpoint not saved yet; the oldest checkpoints' go first."""
        self.held.setdefault(checkpoint_id, []).extend(writes)
        self.held.move_to_end(checkpoint_id)
        while len(self.held) > _MAX_HELD:
            dropped, _ = self.held.popitem(last=False)
            log.warning("run %s: dropped pending writes of checkpoint %s, never saved", self.run_id, dropped)

    def take_held(self, checkpoint_id: str) -> list[HeldWrite]:
        return self.held.pop(checkpoint_id, [])

    def forget_labels(self) -> None:
        """Drops the ids learnt (some checkpoints were deleted)."""
        self.labels.clear()
        self.newest_label = None
        self.seen_empty = False

    def forget(self) -> None:
        """Drops everything: the next save syncs from the server."""
        self.synced = False
        self.early.clear()


class RunCache:
    """A bounded map of run id -> RunState (least recently used runs go first).

    One run never has two states in a process (two gates would let two saves race, and writes
    held by one would never be recorded by a put holding the other): a state evicted while an
    operation still holds it is found again through `_alive`, and a state holding writes for a
    checkpoint not yet saved is not evicted at all."""

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._runs: OrderedDict[str, RunState] = OrderedDict()
        self._alive: weakref.WeakValueDictionary[str, RunState] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def get(self, run_id: str) -> RunState:
        with self._lock:
            state = self._runs.get(run_id) or self._alive.get(run_id)
            if state is None:
                state = RunState(run_id)
                self._alive[run_id] = state
            self._runs[run_id] = state
            self._runs.move_to_end(run_id)
            for old in list(self._runs)[: max(0, len(self._runs) - self._capacity)]:
                if not self._runs[old].held:
                    del self._runs[old]
            return state

    def drop(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)
            self._alive.pop(run_id, None)
