"""Exclusive writing of a thread: one saver owns it, a superseded one is refused.

checkpointd fences writers by epoch: `Resume` hands out a new, strictly larger epoch and every
later Save or journal write carrying an older one is refused (`FAILED_PRECONDITION`,
`STALE_EPOCH`). By default the saver follows LangGraph's model, where any process may write a
thread (a load-balanced app serves one conversation from whichever worker gets the request): it
writes with the thread's current epoch and, when fenced, learns the new one. With
`exclusive=True` it takes the thread instead, once, with a `Resume`, and never adopts an epoch it
did not take: a saver that another exclusive saver superseded gets `ThreadTakenOver` on its next
write, so two processes can never fork one thread.
"""

from __future__ import annotations

from typing import Any

from ..errors import FailedPrecondition
from ._effects import Call, Op
from ._runs import RunState


class ThreadTakenOver(FailedPrecondition):
    """Another writer took this thread (a newer epoch); this saver must not write it again."""

    def __init__(self, run_id: str, ours: int, theirs: int) -> None:
        super().__init__(
            f"run {run_id} was taken over by another writer (epoch {theirs}, this saver holds {ours}); "
            "this saver no longer writes it",
            reason="STALE_EPOCH",
        )
        self.run_id = run_id
        self.ours = ours
        self.theirs = theirs


def take(state: RunState) -> Op[None]:
    """Makes this saver the thread's writer with a new epoch, once (gate held exclusively)."""
    if state.owned_epoch is None:
        resumed = yield Call("resume", dict(run_id=state.run_id, message_offset=2**63 - 1))
        state.owned_epoch = resumed.epoch
        state.drop_log()  # Resume may have truncated the log to the newest valid checkpoint


def check(state: RunState, epoch: int) -> None:
    """Refuses to go on when the run's epoch is no longer the one this saver took."""
    if state.owned_epoch is not None and epoch != state.owned_epoch:
        raise ThreadTakenOver(state.run_id, state.owned_epoch, epoch)


def fenced(state: RunState, method: str, request: Any) -> Op[Any]:
    """Calls `method` with `request` carrying the run's epoch (the one taken, when exclusive).
    Fenced by a newer epoch (a Resume after corruption, another shared writer's), it takes that
    one and tries again, three times at most, unless this saver writes exclusively and another
    writer took the thread (`ThreadTakenOver`)."""
    request.epoch = state.owned_epoch if state.owned_epoch is not None else state.epoch
    for attempt in range(3):
        try:
            return (yield Call(method, request=request))
        except FailedPrecondition:
            if attempt == 2:
                raise
            head = (yield Call("get_run", dict(run_id=state.run_id))).run
            check(state, head.epoch)
            request.epoch = head.epoch
    raise AssertionError("unreachable")
