"""Where a store scenario's runs live: a real server, or the in-process `MemoryBackend`.

The scenarios of test_recovery.py take the `stores` fixture and run once per place, so the
in-memory store is held to the same behaviour as the server, written once.
"""

from __future__ import annotations

from checkpointd import CheckpointStore, Client
from checkpointd.memory import MemoryBackend


class ServerStores:
    """Stores of one `checkpointd serve` process; damage goes straight to its database."""

    def __init__(self, server) -> None:  # noqa: ANN001 - conftest.Server
        self.server = server

    def store(self) -> CheckpointStore:
        return CheckpointStore(self.server.target)

    def corrupt_state(self, run_id: str, step: int) -> None:
        self.server.database.corrupt_state(run_id, step)

    async def steps(self, run_id: str) -> list[int]:
        with Client(self.server.target) as client:
            return [c.step for c in client.list_checkpoints(run_id=run_id).checkpoints]


class MemoryStores:
    """Stores sharing one `MemoryBackend`, as processes share a server; damage by its hook."""

    def __init__(self) -> None:
        self.backend = MemoryBackend()

    def store(self) -> CheckpointStore:
        return CheckpointStore.in_memory(self.backend)

    def corrupt_state(self, run_id: str, step: int) -> None:
        self.backend.corrupt_state(run_id, step)

    async def steps(self, run_id: str) -> list[int]:
        return [c.step for c in (await self.backend.list_checkpoints(run_id=run_id)).checkpoints]
