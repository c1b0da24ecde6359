"""One run has one state in a process: the saver's per-run cache never hands out a second state
for a run still in use or holding writes that wait for their checkpoint."""

from __future__ import annotations

from checkpointd.langgraph._runs import HeldWrite, RunCache


def test_a_run_holding_writes_is_not_evicted() -> None:
    cache = RunCache(capacity=2)
    waiting = cache.get("a")
    waiting.hold("checkpoint-1", [HeldWrite("task", "", 0, "channel", ("json", b"1"))])
    for other in ("b", "c", "d", "e"):
        cache.get(other)
    assert cache.get("a") is waiting
    assert waiting.take_held("checkpoint-1")


def test_a_run_evicted_while_in_use_is_found_again() -> None:
    cache = RunCache(capacity=2)
    in_use = cache.get("a")  # an operation still holds it
    for other in ("b", "c", "d", "e"):
        cache.get(other)
    assert cache.get("a") is in_use


def test_idle_runs_beyond_the_capacity_are_evicted_least_recently_used_first() -> None:
    cache = RunCache(capacity=2)
    for run in ("a", "b", "c", "d"):
        cache.get(run)  # nobody keeps them
    assert list(cache._runs) == ["c", "d"]
