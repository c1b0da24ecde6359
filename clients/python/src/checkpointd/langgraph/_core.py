"""What every saver operation shares: the serializer, the message channel, the per-run state,
the loader and the saver's policies. Operations are functions of a `Core` (see `_effects`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from .._proto import checkpoint_pb2 as pb
from ..errors import DataLoss, NotFound
from ._effects import Call, Op, T, holding
from ._fallback import CorruptionPolicy
from ._load import Loader
from ._runs import RunCache, RunState


@dataclass
class Core:
    serde: SerializerProtocol
    channel: str | None
    on_corrupt: CorruptionPolicy
    exclusive: bool
    runs: RunCache = field(default_factory=RunCache)
    loader: Loader = field(init=False)
    # A server without `RecordToolResults` and `SaveRequest.tool_count` (learnt from its
    # UNIMPLEMENTED answer): journal writes then go one by one, and a save must exclude them
    # (its checksum covers the whole journal at save time, so the journal must not move).
    legacy_journal: bool = False

    def __post_init__(self) -> None:
        self.loader = Loader(self.serde, self.channel)


def journal_gated(core: Core, state: RunState, op: Op[T]) -> Op[T]:
    """`op`, a journal write of this process: with a `legacy_journal` server it waits for the
    run's saves (gate shared), since such a server checksums a save over the whole journal."""
    if core.legacy_journal:
        return holding(state.gate, False, op)
    return op


def address(configurable: dict[str, Any]) -> tuple[str, str]:
    """(thread id, namespace) of a LangGraph config's `configurable`."""
    return str(configurable["thread_id"]), configurable.get("checkpoint_ns", "") or ""


def step_of(state: RunState, checkpoint_id: str) -> Op[int | None]:
    """The step of a checkpoint by its LangGraph id: remembered, else asked for."""
    with state.lock:
        step = state.labels.get(checkpoint_id)
    if step is not None:
        return step
    try:
        response = yield Call(
            "load_at_step",
            dict(
                run_id=state.run_id, label=checkpoint_id, journal=pb.JOURNAL_SCOPE_NONE, message_offset=2**63
            ),
        )
    except (NotFound, DataLoss):
        return None
    with state.lock:
        state.remember(checkpoint_id, response.checkpoint.step)
    return int(response.checkpoint.step)
