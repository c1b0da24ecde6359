"""What the saver does when a thread's newest checkpoints are corrupt: never silent.

checkpointd verifies every checkpoint's checksum on read. When the newest ones of a thread fail,
the latest *valid* one is served instead (as `LoadLatest` does), and that fallback is:

- logged at WARNING on the `checkpointd.langgraph` logger, with the thread, the namespace, the
  LangGraph ids and steps of the skipped checkpoints and the id served instead;
- visible on the returned tuple: its metadata carries `FALLBACK_KEY` with the same facts, so
  `graph.get_state(config).metadata[FALLBACK_KEY]` shows it to an application or a UI;
- refusable: with `on_corrupt="raise"` the saver raises `CorruptCheckpoints` (a `DataLoss`)
  instead of letting the graph run again from an older checkpoint.

When every checkpoint is corrupt the thread starts over (a new run from scratch), logged at
ERROR under "warn", raised under "raise".
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
class Fallback:
    """Checkpoints skipped as corrupt on the way to the one served (None: none valid)."""

    thread_id: str
    ns: str
    skipped_ids: list[str]
    skipped_steps: list[int]
    served_id: str | None

    def describe(self) -> str:
        served = f"serving {self.served_id}" if self.served_id else "no valid checkpoint left: starting over"
        return (
            f"thread {self.thread_id!r} ns {self.ns!r}: skipped corrupt checkpoints "
            f"{self.skipped_ids or self.skipped_steps} (steps {self.skipped_steps}); {served}"
        )

    def as_metadata(self) -> dict[str, Any]:
        return {"skipped_ids": list(self.skipped_ids), "skipped_steps": list(self.skipped_steps)}


class CorruptCheckpoints(DataLoss):
    """The newest checkpoints of a thread are corrupt and the saver's policy is "raise"."""

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
