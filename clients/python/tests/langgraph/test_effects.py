"""The run gate that threads and coroutines share (`_effects.Gate`), and the drivers that perform
one operation with a blocking or an asyncio client."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from checkpointd.langgraph._effects import Call, Emit, Gate, Hold, Op, iterate_sync, run_async, run_sync


async def test_a_coroutine_waiting_for_the_gate_leaves_the_loop_free() -> None:
    gate = Gate()
    gate.acquire(exclusive=True)  # held by "a thread"
    watchdog = threading.Timer(10, gate.release, args=(True,))  # a blocked loop fails, not hangs
    watchdog.start()
    waiter = asyncio.create_task(gate.aacquire(exclusive=False))
    ticks = 0
    for _ in range(5):
        await asyncio.sleep(0)
        ticks += 1  # the loop runs while the waiter waits
    assert ticks == 5 and not waiter.done()
    watchdog.cancel()
    threading.Thread(target=gate.release, args=(True,)).start()  # released from another thread
    await asyncio.wait_for(waiter, 5)
    gate.release(exclusive=False)


async def test_a_save_excludes_writers_across_threads_and_coroutines() -> None:
    gate = Gate()
    inside: list[str] = []
    overlaps: list[tuple[str, ...]] = []

    def enter(who: str) -> None:
        inside.append(who)
        if len(inside) > 1 and any(w.startswith("save") for w in inside):
            overlaps.append(tuple(inside))

    def thread_save(i: int) -> None:
        gate.acquire(exclusive=True)
        enter(f"save-thread-{i}")
        threading.Event().wait(0.002)
        inside.remove(f"save-thread-{i}")
        gate.release(exclusive=True)

    async def coroutine_write(i: int) -> None:
        await gate.aacquire(exclusive=False)
        enter(f"write-{i}")
        await asyncio.sleep(0.001)
        inside.remove(f"write-{i}")
        gate.release(exclusive=False)

    threads = [threading.Thread(target=thread_save, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    await asyncio.wait_for(asyncio.gather(*(coroutine_write(i) for i in range(50))), 30)
    for t in threads:
        t.join(30)
    assert overlaps == []


def test_new_writers_wait_behind_a_waiting_save() -> None:
    gate = Gate()
    gate.acquire(exclusive=False)
    saved = threading.Event()
    save = threading.Thread(target=lambda: (gate.acquire(True), saved.set(), gate.release(True)))
    save.start()
    while gate._exclusive_waiting == 0:  # the save is queued
        threading.Event().wait(0.001)
    late = threading.Thread(target=lambda: (gate.acquire(False), gate.release(False)))
    late.start()
    late.join(0.05)
    assert late.is_alive() and not saved.is_set()  # the late writer waits behind the save
    gate.release(exclusive=False)
    save.join(5)
    late.join(5)
    assert saved.is_set() and not late.is_alive()


class Echo:
    """A client whose `echo` answers its field, and whose `boom` fails."""

    def echo(self, _request: Any, value: int) -> int:
        return value

    def boom(self, _request: Any) -> int:
        raise KeyError("boom")


class AsyncEcho:
    async def echo(self, _request: Any, value: int) -> int:
        return value

    async def boom(self, _request: Any) -> int:
        raise KeyError("boom")


def operation(gate: Gate) -> Op[int]:
    """Holds the gate, sums two answers, and recovers from a failed call."""
    yield Hold(gate, exclusive=True)
    try:
        total = (yield Call("echo", dict(value=2))) + (yield Call("echo", dict(value=3)))
        try:
            yield Call("boom")
        except KeyError:
            total += 100
        return total
    finally:
        gate.release(exclusive=True)


async def test_one_operation_runs_the_same_on_both_drivers() -> None:
    gate = Gate()
    assert run_sync(Echo(), operation(gate)) == 105
    assert await run_async(AsyncEcho(), operation(gate)) == 105
    gate.acquire(exclusive=True)  # released both times
    gate.release(exclusive=True)


def test_an_iterating_operation_emits_and_a_result_operation_must_not() -> None:
    def listing() -> Op[None]:
        for i in range(3):
            yield Emit((yield Call("echo", dict(value=i))))

    assert list(iterate_sync(Echo(), listing())) == [0, 1, 2]
    with pytest.raises(TypeError, match="emitted"):
        run_sync(Echo(), listing())


class Stalled:
    """An asyncio client whose calls never answer."""

    async def save(self, _request: Any) -> None:
        await asyncio.Event().wait()


async def test_a_cancelled_async_call_releases_the_gate_at_once() -> None:
    gate = Gate()

    def saving() -> Op[None]:
        yield Hold(gate, exclusive=True)
        try:
            yield Call("save")
        finally:
            gate.release(exclusive=True)

    task = asyncio.create_task(run_async(Stalled(), saving()))
    while not gate._exclusive:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not gate._exclusive  # released now, not whenever the task's traceback is collected


def test_a_waiter_of_a_closed_loop_does_not_stop_the_others_waking() -> None:
    gate = Gate()
    gate.acquire(exclusive=True)

    async def give_up() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(gate.aacquire(exclusive=False), 0.01)

    asyncio.run(give_up())  # its loop is closed now, its waker still listed
    assert len(gate._wakers) == 1
    woken = threading.Event()
    waiter = threading.Thread(target=lambda: (gate.acquire(True), woken.set(), gate.release(True)))
    waiter.start()
    for _ in range(5000):  # until the thread waits too
        if len(gate._wakers) >= 2:
            break
        threading.Event().wait(0.001)
    gate.release(exclusive=True)
    waiter.join(5)
    assert woken.is_set()
