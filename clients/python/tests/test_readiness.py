"""Clients wait for a server that is still starting, within a deadline: the first call made
right after `checkpointd serve &` succeeds, and a server that never comes up fails the call
with `Unavailable` once the wait is over, never later."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import Database, Server, checkpointd_bin

from checkpointd import AsyncClient, Client, Unavailable
from checkpointd._readiness import CONNECT_TIMEOUT


def free_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def start_server(address: str, tmp_path: Path) -> Server:
    path = tmp_path / "checkpointd.db"
    database = Database("sqlite", f"sqlite://{path}", sqlite_path=path)
    return Server(checkpointd_bin(), database, [], tmp_path / "server.log", listen=address)


def test_the_first_call_waits_for_a_server_started_after_the_client(tmp_path: Path) -> None:
    address = free_address()
    outcome: list[object] = []
    with Client(address, timeout=30) as client:
        first_call = threading.Thread(target=lambda: outcome.append(client.list_runs()))
        first_call.start()
        server = start_server(address, tmp_path)
        try:
            first_call.join(timeout=60)
        finally:
            server.stop()
    assert len(outcome) == 1 and not isinstance(outcome[0], BaseException), outcome


async def test_the_async_client_waits_for_a_server_started_after_it(tmp_path: Path) -> None:
    address = free_address()
    async with AsyncClient(address, timeout=30) as client:
        first_call = asyncio.ensure_future(client.list_runs())
        await asyncio.sleep(0)  # the call is issued before the server exists
        server = await asyncio.to_thread(start_server, address, tmp_path)
        try:
            reply = await first_call
        finally:
            server.stop()
    assert list(reply.runs) == []


def test_no_server_fails_with_unavailable_within_the_connect_timeout() -> None:
    started = time.monotonic()
    with Client(free_address()) as client, pytest.raises(Unavailable) as failed:
        client.list_runs()
    waited = time.monotonic() - started
    assert CONNECT_TIMEOUT - 0.5 <= waited < CONNECT_TIMEOUT + 2
    assert "not reachable within" in str(failed.value)


async def test_no_server_fails_within_the_calls_own_shorter_deadline() -> None:
    started = time.monotonic()
    async with AsyncClient(free_address(), timeout=1.0) as client:
        with pytest.raises(Unavailable):
            await client.list_runs()
        with pytest.raises(Unavailable):
            async for _ in client.validate_tenant():
                pass
    assert time.monotonic() - started < 2 * 1.0 + 2
