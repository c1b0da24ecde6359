"""One implementation of the saver for both `Client` and `AsyncClient`.

Every saver operation is written once, as a generator that *yields* what it needs done instead
of doing it: a `Call` to an RPC, a `Hold` on a run's gate, an `Emit` of a result (for `list`).
`run_sync` performs those with the blocking `Client`, `run_async` with `AsyncClient` on the
event loop; either sends the answer back into the generator, or throws the RPC's exception
into it, so retries and error handling live in the operation alone. No thread is spawned for
an async call and no async code is kept as a copy of the sync code.

A run's `Gate` is the one lock held across calls: a save holds it exclusively (its checksum
covers the run's journal, which must not move meanwhile), pending-write recorders share it.
Threads and coroutines both wait on it, and waiting never blocks an event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator
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
        loop.call_soon_threadsafe(_settle, future)

    return wake


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def run_sync(client: Any, op: Op[T]) -> T:
    """Performs an operation with a blocking client."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = op.throw(error) if error is not None else op.send(send)
        except StopIteration as stop:
            return stop.value
        send, error = None, None
        try:
            if isinstance(effect, Call):
                send = getattr(client, effect.method)(effect.request, **effect.fields)
            elif isinstance(effect, Hold):
                effect.gate.acquire(effect.exclusive)
            else:
                raise TypeError(f"{effect!r} outside an iterating operation")
        except Exception as failure:
            error = failure


async def run_async(client: Any, op: Op[T]) -> T:
    """Performs an operation with an `AsyncClient`, on the running event loop."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = op.throw(error) if error is not None else op.send(send)
        except StopIteration as stop:
            return stop.value
        send, error = None, None
        try:
            if isinstance(effect, Call):
                send = await getattr(client, effect.method)(effect.request, **effect.fields)
            elif isinstance(effect, Hold):
                await effect.gate.aacquire(effect.exclusive)
            else:
                raise TypeError(f"{effect!r} outside an iterating operation")
        except Exception as failure:
            error = failure


def iterate_sync(client: Any, op: Op[None]) -> Iterator[Any]:
    """The items an iterating operation emits, performed with a blocking client."""
    send: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(send)
            except StopIteration:
                return
            send, error = None, None
            if isinstance(effect, Emit):
                yield effect.item
                continue
            try:
                if isinstance(effect, Call):
                    send = getattr(client, effect.method)(effect.request, **effect.fields)
                else:
                    effect.gate.acquire(effect.exclusive)
            except Exception as failure:
                error = failure
    finally:
        op.close()


async def iterate_async(client: Any, op: Op[None]) -> AsyncIterator[Any]:
    """The items an iterating operation emits, performed with an `AsyncClient`."""
    send: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(send)
            except StopIteration:
                return
            send, error = None, None
            if isinstance(effect, Emit):
                yield effect.item
                continue
            try:
                if isinstance(effect, Call):
                    send = await getattr(client, effect.method)(effect.request, **effect.fields)
                else:
                    await effect.gate.aacquire(effect.exclusive)
            except Exception as failure:
                error = failure
    finally:
        op.close()
