"""One life of a run: what Resume restored and the live state since, saved by strategy.

Below both the recovery loop and the step context, which each use it, so neither imports the
other for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .classify import Decision
from .store import Checkpoint, CheckpointStore, Resumed
from .strategy import Strategy

#: Checkpoint metadata key of a finished run's result (JSON): a run restored from its final
#: checkpoint is finished, and no step past the end runs again (nor any tool of one).
RESULT_KEY = "checkpointd.result"


@dataclass
class RunStats:
    steps_executed: int = 0
    tools_executed: int = 0
    tools_replayed: int = 0


class Session:
    """One life of a run: what Resume restored and the live state since."""

    def __init__(
        self,
        store: CheckpointStore,
        resumed: Resumed,
        task: Any,
        strategy: Strategy,
        decision: Decision | None,
        initial_state: dict[str, Any],
        stats: RunStats,
    ) -> None:
        self.store = store
        self.run_id = resumed.run_id
        self.task = task
        self.strategy = strategy
        self.decision = decision
        self.stats = stats
        restored: Checkpoint | None = resumed.checkpoint
        self.state: dict[str, Any] = restored.state if restored else initial_state
        self.messages: list[dict[str, Any]] = restored.messages if restored else []
        self.completed_step = restored.step_number if restored else 0
        self.last_saved_step = restored.step_number if restored else None
        self.finished: tuple[Any] | None = None
        if restored is not None and RESULT_KEY in restored.metadata:
            self.finished = (json.loads(restored.metadata[RESULT_KEY]),)

    async def save(
        self, step: int, state: dict[str, Any], message_count: int, metadata: dict[str, str] | None = None
    ) -> None:
        if self.last_saved_step == step:
            return
        await self.store.save(
            Checkpoint(
                run_id=self.run_id,
                step_number=step,
                state=state,
                messages=self.messages[:message_count],
                metadata=metadata or {},
            )
        )
        self.last_saved_step = step

    async def save_completed(self, metadata: dict[str, str] | None = None) -> None:
        """Checkpoints the last completed step, unless it already is."""
        if self.completed_step > 0:
            await self.save(self.completed_step, self.state, len(self.messages), metadata)
