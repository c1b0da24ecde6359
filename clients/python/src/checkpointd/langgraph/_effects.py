"""One implementation of the saver for both `Client` and `AsyncClient`.

Every saver operation is written once, as a generator that *yields* what it needs done instead
of doing it: a `Call` to an RPC, a `Hold` on a run's gate, an `Emit` of a result (for `list`).
`run_sync` performs those with the blocking `Client`, `run_async` with `AsyncClient` on the
event loop; either sends the answer back into the generator, or throws the RPC's exception
into it, so retries and error handling live in the operation alone. No thread is spawned for
an async call and no async code is kept as a copy of the sync code.

A run's `Gate` is the one lock held across calls: a save holds it exclusively (a run's saves go
one at a time); journal writes share it only with a server whose saves are checksummed over the
whole journal (`Core.legacy_journal`). Threads and coroutines both wait on it, and waiting
never blocks an event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """Calls `method` of the client (`Client` and `AsyncClient` share method names)."""

    method: str
    fields: dict[str, Any] = field(default_factory=dict)
    request: Any = None


@dataclass(frozen=True)
class Hold:
    """Waits for a run's gate; the operation releases it itself (`Gate.release`)."""

    gate: Gate
    exclusive: bool


@dataclass(frozen=True)
class Emit:
    """Hands one result of an iterating operation to its consumer."""

    item: Any


Effect = Call | Hold | Emit
Op = Generator[Effect, Any, T]


def holding(gate: Gate, exclusive: bool, op: Op[T]) -> Op[T]:
    """Performs `op` with `gate` held, released however `op` ends."""
    yield Hold(gate, exclusive)
    try:
        return (yield from op)
    finally:
        gate.release(exclusive)


class Gate:
    """A readers-writer lock for threads and coroutines: exclusive holders wait for shared
    ones to leave, and new shared holders wait while an exclusive one waits (saves are not
    starved by a stream of writes)."""

    def __init__(self) -> None:
        self._mu = threading.Lock()
        self._exclusive = False
        self._shared = 0
        self._exclusive_waiting = 0
        self._wakers: list[Callable[[], None]] = []

    def _take(self, exclusive: bool) -> bool:
        if exclusive:
            if self._exclusive or self._shared:
                return False
            self._exclusive = True
            return True
        if self._exclusive or self._exclusive_waiting:
            return False
        self._shared += 1
        return True

    def acquire(self, exclusive: bool) -> None:
        with self._mu:
            if self._take(exclusive):
                return
            if exclusive:
                self._exclusive_waiting += 1
        try:
            while True:
                woken = threading.Event()
                with self._mu:
                    if self._take(exclusive):
                        return
                    self._wakers.append(woken.set)
                woken.wait()
        finally:
            if exclusive:
                self._stop_waiting()

    async def aacquire(self, exclusive: bool) -> None:
        with self._mu:
            if self._take(exclusive):
                return
            if exclusive:
                self._exclusive_waiting += 1
        loop = asyncio.get_running_loop()
        try:
            while True:
                woken: asyncio.Future[None] = loop.create_future()
                with self._mu:
                    if self._take(exclusive):
                        return
                    self._wakers.append(_waker(loop, woken))
                await woken
        finally:
            if exclusive:
                self._stop_waiting()

    def _stop_waiting(self) -> None:
        with self._mu:
            self._exclusive_waiting -= 1
            wakers, self._wakers = self._wakers, []
        for wake in wakers:  # shared waiters held back by this one may go now
            wake()

    def release(self, exclusive: bool) -> None:
        with self._mu:
            if exclusive:
                self._exclusive = False
            else:
                self._shared -= 1
            wakers, self._wakers = self._wakers, []
        for wake in wakers:
            wake()


def _waker(loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> Callable[[], None]:
    """Wakes a coroutine waiting on `future`, from any thread."""

    def wake() -> None:
        try:
            loop.call_soon_threadsafe(_settle, future)
        except RuntimeError:
            pass  # its loop is closed: nobody waits there any more

    return wake


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _Driver:
    """Steps an operation: hands it each answer (or throws each failure into it) and returns
    the next effect it wants, or None once it has returned (`result`)."""

    def __init__(self, op: Op[Any]) -> None:
        self.op = op
        self.result: Any = None
        self._answer: Any = None
        self._failure: Exception | None = None

    def next(self) -> Effect | None:
        try:
            if self._failure is not None:
                effect = self.op.throw(self._failure)
            else:
                effect = self.op.send(self._answer)
        except StopIteration as stop:
            self.result = stop.value
            return None
        self._answer, self._failure = None, None
        return effect

    def answer(self, value: Any) -> None:
        self._answer = value

    def fail(self, failure: Exception) -> None:
        self._failure = failure


def _perform(client: Any, effect: Effect) -> Any:
    if isinstance(effect, Call):
        return getattr(client, effect.method)(effect.request, **effect.fields)
    if isinstance(effect, Hold):
        return effect.gate.acquire(effect.exclusive)
    raise TypeError(f"{effect!r} outside an iterating operation")


async def _aperform(client: Any, effect: Effect) -> Any:
    if isinstance(effect, Call):
        return await getattr(client, effect.method)(effect.request, **effect.fields)
    if isinstance(effect, Hold):
        return await effect.gate.aacquire(effect.exclusive)
    raise TypeError(f"{effect!r} outside an iterating operation")


def iterate_sync(client: Any, op: Op[T]) -> Generator[Any, None, T]:
    """The items an operation emits, performed with a blocking client; returns its result."""
    driver = _Driver(op)
    try:
        while (effect := driver.next()) is not None:
            if isinstance(effect, Emit):
                yield effect.item
                continue
            try:
                driver.answer(_perform(client, effect))
            except Exception as failure:
                driver.fail(failure)
    finally:
        op.close()
    return driver.result


def run_sync(client: Any, op: Op[T]) -> T:
    """Performs an operation with a blocking client."""
    steps = iterate_sync(client, op)
    try:
        item = next(steps)
    except StopIteration as done:
        return done.value
    raise TypeError(f"an operation run for its result emitted {item!r}")


async def iterate_async(client: Any, op: Op[None]) -> AsyncIterator[Any]:
    """The items an operation emits, performed with an `AsyncClient` on the running loop."""
    driver = _Driver(op)
    try:
        while (effect := driver.next()) is not None:
            if isinstance(effect, Emit):
                yield effect.item
                continue
            try:
                driver.answer(await _aperform(client, effect))
            except Exception as failure:
                driver.fail(failure)
    finally:
        op.close()


async def run_async(client: Any, op: Op[T]) -> T:
    """Performs an operation with an `AsyncClient`, on the running event loop."""
    driver = _Driver(op)
    try:
        while (effect := driver.next()) is not None:
            try:
                driver.answer(await _aperform(client, effect))
            except Exception as failure:
                driver.fail(failure)
    finally:
        op.close()  # cancelled mid-call: the operation's finally blocks release what it holds
    return driver.result
