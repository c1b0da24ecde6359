"""Calls wait for a server that is not up yet, within a deadline, instead of failing at once.

A client started beside `checkpointd serve &` would otherwise fail its first call with
`UNAVAILABLE`, and a run resurrected while the server restarts would spend its budget at once.
Each call on a channel that is not connected first waits for it to connect, for at most the
connect timeout (and never past the call's own deadline, which shrinks by the time waited). A
server that does not come up in time fails the call with `UNAVAILABLE` saying so. Channel
interceptors carry this, so the sync and asyncio clients share it without touching each call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import grpc

#: How long a call waits for an unreachable server by default, in seconds: about as long as the
#: Rust runner retries its first connection (crates/runner/src/client.rs).
CONNECT_TIMEOUT = 5.0

#: Reconnect backoff (ms): grpc's default starts at 1 s and grows to 120 s, so a client that
#: started first would notice a fresh server late. These keep a waiting call within a fraction
#: of a second of the server coming up, and within a few seconds after a restart.
RECONNECT_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
)


class ServerUnreachable(grpc.RpcError):  # type: ignore[misc]
    """The status a call fails with when the server did not come up within the wait; the
    clients turn it into `checkpointd.Unavailable` like any other `UNAVAILABLE`."""

    def __init__(self, address: str, waited: float) -> None:
        super().__init__()
        self._details = f"{address} not reachable within {waited:g}s (is checkpointd serving there?)"

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> tuple[()]:
        return ()

    def __str__(self) -> str:
        return self._details


def _bound(connect_timeout: float, call_timeout: float | None) -> float:
    return connect_timeout if call_timeout is None else min(connect_timeout, call_timeout)


def _remaining(call_timeout: float | None, started: float) -> float | None:
    if call_timeout is None:
        return None
    return max(call_timeout - (time.monotonic() - started), 0.0)


class _CallDetails(grpc.ClientCallDetails):  # type: ignore[misc]
    """grpc.ClientCallDetails is an interface without a constructor: this is one."""

    def __init__(self, details: grpc.ClientCallDetails, timeout: float | None) -> None:
        self.method = details.method
        self.timeout = timeout
        self.metadata = details.metadata
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class WaitForServer(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):  # type: ignore[misc]
    """The sync channel's interceptor. A sync channel shows its state only to subscribers, and a
    subscription's polling thread outlives a closed channel, so it remembers instead whether the
    channel connected, and forgets when a call finds the server unavailable."""

    def __init__(self, channel: grpc.Channel, address: str, connect_timeout: float) -> None:
        self._channel = channel
        self._address = address
        self._connect_timeout = connect_timeout
        self._connected = False

    def _ready(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        if self._connected:
            return details
        started = time.monotonic()
        bound = _bound(self._connect_timeout, details.timeout)
        ready = grpc.channel_ready_future(self._channel)
        try:
            ready.result(timeout=bound)
        except grpc.FutureTimeoutError:
            raise ServerUnreachable(self._address, bound) from None
        finally:
            ready.cancel()
        self._connected = True
        return _CallDetails(details, _remaining(details.timeout, started))

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        outcome = continuation(self._ready(details), request)
        done = getattr(outcome, "done", None)
        if callable(done) and done() and outcome.code() is grpc.StatusCode.UNAVAILABLE:
            # The server went away: the next call waits for it to come back.
            self._connected = False
        return outcome

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        return continuation(self._ready(details), request)


class AioWaitForServer:
    """The asyncio channel's readiness wait; `channel` is set once the channel exists.
    `interceptors` are what the channel takes (grpc.aio files an interceptor under one kind)."""

    def __init__(self, address: str, connect_timeout: float) -> None:
        self.channel: grpc.aio.Channel | None = None
        self._address = address
        self._connect_timeout = connect_timeout
        self.interceptors: list[grpc.aio.ClientInterceptor] = [_AioUnaryUnary(self), _AioUnaryStream(self)]

    async def ready(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        channel = self.channel
        if channel is None or channel.get_state(try_to_connect=True) is grpc.ChannelConnectivity.READY:
            return details
        started = time.monotonic()
        bound = _bound(self._connect_timeout, details.timeout)
        try:
            await asyncio.wait_for(channel.channel_ready(), bound)
        except asyncio.TimeoutError:
            raise ServerUnreachable(self._address, bound) from None
        return details._replace(timeout=_remaining(details.timeout, started))


class _AioUnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    def __init__(self, waiting: AioWaitForServer) -> None:
        self._waiting = waiting

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(await self._waiting.ready(details), request)


class _AioUnaryStream(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    def __init__(self, waiting: AioWaitForServer) -> None:
        self._waiting = waiting

    async def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(await self._waiting.ready(details), request)
