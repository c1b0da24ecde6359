"""What the saver does when a thread's newest checkpoints are corrupt: never silent.

checkpointd verifies every checkpoint's checksum on read. When the newest ones of a thread fail,
the latest *valid* one is served instead (as `LoadLatest` does), and that fallback is:

- logged at WARNING on the `checkpointd.langgraph` logger, with the thread, the namespace, the
  skipped checkpoints (LangGraph ids, LangGraph steps and checkpointd steps) and the id served
  instead;
- visible on the returned tuple: its metadata carries `FALLBACK_KEY` with the same facts, so
  `graph.get_state(config).metadata[FALLBACK_KEY]` shows it to an application or a UI;
- refusable: with `on_corrupt="raise"` the saver raises `CorruptCheckpoints` (a `DataLoss`)
  instead of letting the graph run again from an older checkpoint.

This holds on every read that lands on an older checkpoint, not only the first one that found
the damage: the server reports every quarantined checkpoint above the one it returns
(`passed_over`) until an operator drops them (`checkpointd runs drop-quarantined RUN`) or a
newer checkpoint is saved above them. When every checkpoint is corrupt the thread starts over
(a new run from scratch), logged at ERROR under "warn", raised under "raise". A corrupt
checkpoint asked for by id raises `CorruptCheckpoints` under either policy.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import DataLoss

log = logging.getLogger("checkpointd.langgraph")

#: How the saver answers corruption: "warn" serves the newest valid checkpoint (and says so),
#: "raise" refuses to run from anything older than the thread's newest checkpoint.
CorruptionPolicy = Literal["warn", "raise"]
POLICIES: tuple[str, ...] = ("warn", "raise")

#: Metadata key of a tuple served past corrupt checkpoints.
FALLBACK_KEY = "checkpointd_fallback"


@dataclass(frozen=True)
class Skipped:
    """One corrupt checkpoint a read passed over: its checkpointd step, its LangGraph id (the
    save's label; "" when unknown) and LangGraph's own step number (its metadata `step`; None
    when unknown)."""

    step: int
    checkpoint_id: str = ""
    langgraph_step: int | None = None


@dataclass(frozen=True)
class Fallback:
    """Corrupt checkpoints passed over on the way to the one served (None: none valid), or,
    with `requested_id`, the corrupt checkpoint a read asked for by id."""

    thread_id: str
    ns: str
    skipped: list[Skipped]
    served_id: str | None
    requested_id: str | None = None

    @property
    def skipped_ids(self) -> list[str]:
        """The skipped checkpoints' LangGraph ids, newest first."""
        return [s.checkpoint_id for s in self.skipped]

    @property
    def skipped_steps(self) -> list[int]:
        """Their checkpointd steps, newest first."""
        return [s.step for s in self.skipped]

    @property
    def skipped_langgraph_steps(self) -> list[int | None]:
        """Their LangGraph steps (metadata `step`), newest first."""
        return [s.langgraph_step for s in self.skipped]

    def describe(self) -> str:
        where = f"thread {self.thread_id!r} ns {self.ns!r}"
        what = (
            f"checkpoint ids {self.skipped_ids} (LangGraph steps {self.skipped_langgraph_steps}, "
            f"checkpointd steps {self.skipped_steps})"
        )
        if self.requested_id is not None:
            return f"{where}: checkpoint {self.requested_id} is corrupt: {what}"
        served = f"serving {self.served_id}" if self.served_id else "no valid checkpoint left: starting over"
        return f"{where}: skipped corrupt checkpoints, newest first: {what}; {served}"

    def as_metadata(self) -> dict[str, Any]:
        return {
            "skipped_ids": self.skipped_ids,
            "skipped_langgraph_steps": self.skipped_langgraph_steps,
            "skipped_steps": self.skipped_steps,
            "served_id": self.served_id,
        }


class CorruptCheckpoints(DataLoss):
    """A thread's checkpoints are corrupt where a read needed them: its newest ones, with the
    saver's policy "raise" (raised on every such read, until an operator drops them or a newer
    checkpoint is saved), or the one a read asked for by id (under every policy)."""

    def __init__(self, fallback: Fallback) -> None:
        super().__init__(fallback.describe(), reason="CHECKPOINT_CORRUPT")
        self.fallback = fallback


def check_policy(policy: str) -> CorruptionPolicy:
    if policy not in POLICIES:
        raise ValueError(f"on_corrupt must be one of {POLICIES}, not {policy!r}")
    return policy  # type: ignore[return-value]


def report(policy: CorruptionPolicy, fallback: Fallback) -> None:
    """Logs the fallback, or raises it under the "raise" policy."""
    if policy == "raise":
        log.error("%s; refused (on_corrupt='raise')", fallback.describe())
        raise CorruptCheckpoints(fallback)
    if fallback.served_id is None:
        log.error("%s", fallback.describe())
    else:
        log.warning("%s", fallback.describe())
