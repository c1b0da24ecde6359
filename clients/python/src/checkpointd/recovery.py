"""The recovery loop: resume, step, checkpoint by strategy, resurrect after transient errors.

`RecoverableAgent` runs it in-process; the worker (`checkpointd.worker`) runs the same loop for
tasks claimed from the queue. The semantics are the Rust runner's (crates/runner).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._session import RESULT_KEY, RunStats, Session
from .classify import ApprovalRequired, Decision, ErrorClass, ErrorClassifier, FatalError, is_fenced
from .context import StepContext, _invoke
from .store import CheckpointStore, Resumed
from .strategy import Strategy

log = logging.getLogger("checkpointd")

#: Pause before each resurrection, in seconds: the Rust runner's (crates/runner/src/recovery.rs)
#: and the worker's `--cooldown`. Without one, a failure that lasts a moment (a server
#: restarting, a provider's brief outage) spends the whole resurrection budget at once.
DEFAULT_COOLDOWN = 2.0

AgentFn = Callable[[StepContext], Any]


@dataclass
class Done:
    """Returned by a step to finish the run; `result` (JSON-serialisable) is its result."""

    result: Any = None


@dataclass
class RecoveryPolicy:
    strategy: Strategy = field(default_factory=Strategy)
    #: In-process resurrections after transient errors before giving up.
    max_resurrections: int = 3
    #: Pause before each resurrection, in seconds.
    cooldown: float = DEFAULT_COOLDOWN
    classifier: ErrorClassifier = field(default_factory=ErrorClassifier)
    #: After shutdown begins, how long the current step may still run, in seconds.
    drain_deadline: float = 10.0
    #: A run past this many steps fails fatally (None: no limit).
    max_steps: int | None = None


@dataclass
class Signals:
    """What a step run by the worker watches: shutdown (drain) and a lost lease."""

    shutdown: asyncio.Event = field(default_factory=asyncio.Event)
    lease_lost: asyncio.Event = field(default_factory=asyncio.Event)


class LeaseLost(Exception):
    """Another worker owns the task now: this one stops without writing."""


@dataclass
class Outcome:
    """How a drive of a run ended: `finished`, `approval`, `stopped`, `failed` or `lease_lost`."""

    kind: str
    result: Any = None
    error: BaseException | None = None
    error_class: ErrorClass | None = None
    action: str = ""
    details: Any = None
    resumed: Resumed | None = None
    resurrections: int = 0
    stats: RunStats = field(default_factory=RunStats)


async def _wait_drain(signals: Signals, deadline: float) -> None:
    await signals.shutdown.wait()
    await asyncio.sleep(deadline)


async def _run_step(agent_fn: AgentFn, ctx: StepContext, signals: Signals | None, deadline: float) -> Any:
    """The step's return value; `None` wrapped as `_ABANDONED` when the drain deadline passed."""
    if signals is None:
        return await _invoke(agent_fn, ctx)
    step = asyncio.ensure_future(_invoke(agent_fn, ctx))
    lease = asyncio.ensure_future(signals.lease_lost.wait())
    drain = asyncio.ensure_future(_wait_drain(signals, deadline))
    try:
        await asyncio.wait({step, lease, drain}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in (lease, drain):
            waiter.cancel()
    if step.done():
        return step.result()
    step.cancel()
    await asyncio.gather(step, return_exceptions=True)
    if signals.lease_lost.is_set():
        raise LeaseLost("the task's lease was lost")
    return _ABANDONED


_ABANDONED = object()


async def run_steps(
    agent_fn: AgentFn, session: Session, policy: RecoveryPolicy, signals: Signals | None
) -> Outcome:
    """Steps a session until it finishes, asks for approval, or is stopped; raises on failure."""
    if session.finished is not None:
        return Outcome("finished", result=session.finished[0])
    while True:
        if signals is not None and signals.shutdown.is_set():
            await session.save_completed()
            return Outcome("stopped")
        step = session.completed_step + 1
        if policy.max_steps is not None and step > policy.max_steps:
            raise FatalError(f"run {session.run_id} did not finish within {policy.max_steps} steps")
        # A failed or abandoned step must leave no trace in the state that gets checkpointed.
        rollback = (copy.deepcopy(session.state), len(session.messages))
        ctx = StepContext(session, step)
        try:
            returned = await _run_step(agent_fn, ctx, signals, policy.drain_deadline)
        except BaseException as error:
            session.state = rollback[0]
            del session.messages[rollback[1] :]
            if isinstance(error, ApprovalRequired):
                await session.save_completed()
                return Outcome("approval", action=error.action, details=error.details)
            raise
        if returned is _ABANDONED:
            log.warning(
                "drain deadline passed mid-step; the step is abandoned run_id=%s step=%d",
                session.run_id,
                step,
            )
            session.state = rollback[0]
            del session.messages[rollback[1] :]
            await session.save_completed()
            return Outcome("stopped")
        session.completed_step = step
        session.stats.steps_executed += 1
        if isinstance(returned, Done):
            await session.save_completed({RESULT_KEY: json.dumps(returned.result, separators=(",", ":"))})
            return Outcome("finished", result=returned.result)
        if policy.strategy.saves_after(step, ctx.executed_tools):
            await session.save_completed()


async def drive(
    agent_fn: AgentFn,
    store: CheckpointStore,
    run_id: str,
    task: Any,
    policy: RecoveryPolicy,
    *,
    signals: Signals | None = None,
    decision: Decision | None = None,
    initial_state: Callable[[Any], dict[str, Any]] | None = None,
) -> Outcome:
    """Runs a run to its end for this attempt: resumes it, and resurrects it in-process from
    its latest valid checkpoint after transient errors, up to the policy's budget."""
    resurrections = 0
    stats = RunStats()
    while True:
        resumed: Resumed | None = None
        if signals is not None and signals.lease_lost.is_set():
            # Lost during the cooldown: a Resume now would take the run from its new owner.
            return Outcome("lease_lost", resurrections=resurrections, stats=stats)
        try:
            resumed = await store.resume(run_id)
            log.info(
                "resumed run_id=%s recovered_from_step=%d restarted_from_scratch=%s skipped=%s",
                run_id,
                resumed.recovered_from_step,
                resumed.restarted_from_scratch,
                resumed.skipped_steps,
            )
            fresh = initial_state(task) if initial_state is not None else {}
            session = Session(store, resumed, task, policy.strategy, decision, fresh, stats)
            outcome = await run_steps(agent_fn, session, policy, signals)
        except Exception as error:  # noqa: BLE001 - every failure is classified below
            ended = _failure(error, policy, signals, resurrections)
            if ended is not None:
                ended.resumed, ended.resurrections, ended.stats = resumed, resurrections, stats
                return ended
            resurrections += 1
            log.warning(
                "transient error; resurrecting from the latest valid checkpoint run_id=%s "
                "error=%r resurrection=%d budget=%d",
                run_id,
                error,
                resurrections,
                policy.max_resurrections,
            )
            if await _cooldown(policy.cooldown, signals):
                return Outcome("stopped", resumed=resumed, resurrections=resurrections, stats=stats)
            continue
        outcome.resumed, outcome.resurrections, outcome.stats = resumed, resurrections, stats
        return outcome


def _failure(
    error: Exception, policy: RecoveryPolicy, signals: Signals | None, resurrections: int
) -> Outcome | None:
    """The end a failure makes, or None when the run is resurrected."""
    if (
        isinstance(error, LeaseLost)
        or is_fenced(error)
        or (signals is not None and signals.lease_lost.is_set())
    ):
        return Outcome("lease_lost", error=error)
    error_class = policy.classifier.classify(error)
    if error_class is ErrorClass.FATAL or resurrections >= policy.max_resurrections:
        return Outcome("failed", error=error, error_class=error_class)
    return None


async def _cooldown(seconds: float, signals: Signals | None) -> bool:
    """Waits out the cooldown; True when shutdown began meanwhile."""
    if signals is None:
        await asyncio.sleep(seconds)
        return False
    try:
        await asyncio.wait_for(signals.shutdown.wait(), seconds)
        return True
    except asyncio.TimeoutError:
        return False


class RecoverableAgent:
    """Runs `agent_fn` step by step with checkpoints, and recovers it after crashes.

    `agent_fn(ctx: StepContext)` (sync or async) executes step `ctx.step` (the first is 1): it
    reads and changes `ctx.state` and `ctx.messages`, calls tools through `ctx.call_tool` /
    `ctx.call_side_effect`, and returns `Done(result)` when the run is finished (anything else
    continues). Checkpoints are saved every `checkpoint_every_n` steps (or by `strategy`).
    After a transient error the run is resurrected from its latest valid checkpoint, up to
    `max_resurrections` times, each after `cooldown` seconds (2, as the Rust runner's).
    """

    def __init__(
        self,
        agent_fn: AgentFn,
        checkpoint_store: CheckpointStore,
        checkpoint_every_n: int = 3,
        *,
        strategy: Strategy | str | None = None,
        max_resurrections: int = 3,
        cooldown: float = DEFAULT_COOLDOWN,
        max_steps: int | None = None,
        classifier: ErrorClassifier | None = None,
        initial_state: Callable[[Any], dict[str, Any]] | None = None,
    ) -> None:
        if isinstance(strategy, str):
            strategy = Strategy.parse(strategy)
        self.agent_fn = agent_fn
        self.store = checkpoint_store
        self.initial_state = initial_state
        self.policy = RecoveryPolicy(
            strategy=strategy or Strategy(every_n=checkpoint_every_n),
            max_resurrections=max_resurrections,
            cooldown=cooldown,
            classifier=classifier or ErrorClassifier(),
            max_steps=max_steps,
        )

    async def run_with_recovery(
        self, task: Any, run_id: str, *, decision: Decision | None = None
    ) -> dict[str, Any]:
        """Runs (or resumes) `run_id` to its end. Returns `result`, `recovered_from_step` (the
        step the last recovery restored; 0 from scratch), `restarted_from_scratch`,
        `skipped_steps` (corrupt checkpoints found by the last Resume), `passed_over` (the steps
        of every quarantined checkpoint newer than the one restored, reported, and logged at
        WARNING, on every Resume until an operator drops them), `resurrections`, `steps_executed`,
        `tools_executed` and `tools_replayed`. Raises the agent's error when it is fatal or the
        resurrection budget is spent, and `ApprovalRequired` when a step needs a human."""
        outcome = await drive(
            self.agent_fn,
            self.store,
            run_id,
            task,
            self.policy,
            decision=decision,
            initial_state=self.initial_state,
        )
        if outcome.kind == "approval":
            raise ApprovalRequired(outcome.action, outcome.details)
        if outcome.kind != "finished":
            assert outcome.error is not None
            raise outcome.error
        resumed = outcome.resumed
        assert resumed is not None
        return {
            "run_id": run_id,
            "result": outcome.result,
            "recovered_from_step": resumed.recovered_from_step,
            "restarted_from_scratch": resumed.restarted_from_scratch,
            "skipped_steps": resumed.skipped_steps,
            "passed_over": [p.step for p in resumed.passed_over],
            "resurrections": outcome.resurrections,
            "steps_executed": outcome.stats.steps_executed,
            "tools_executed": outcome.stats.tools_executed,
            "tools_replayed": outcome.stats.tools_replayed,
        }
