"""`CheckpointdSaver`: a LangGraph checkpointer backed by a checkpointd server.

`graph.compile(checkpointer=CheckpointdSaver("127.0.0.1:50051"))` is the only change a graph
needs. How LangGraph's model maps onto checkpointd is specified in docs/langgraph-mapping.md; in
short: one (thread, namespace) is one run, a checkpoint is a labelled save at the run's next
step, the `messages` channel lives in the run's append-only message log, and pending writes are
tool-journal entries at the checkpoint's step.

Each method is one operation (`_reads`, `_writes`, `_threads`) performed by `_effects`: the sync
methods with the blocking `Client`, the async ones with `AsyncClient` on the caller's event
loop. There is one implementation of each, and no thread per async call.
"""

from __future__ import annotations

import asyncio
import random
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..aio import AsyncClient
from ..client import Client
from ..errors import CheckpointdError
from . import _fallback, _reads, _threads, _writes
from ._core import Core
from ._effects import Op, iterate_async, iterate_sync, run_async, run_sync
from ._fallback import CorruptionPolicy


class CheckpointdSaver(BaseCheckpointSaver[str]):
    """A LangGraph `BaseCheckpointSaver` that stores checkpoints in checkpointd.

    `target` and the keyword options (`token`, `tenant`, `ca_cert`, ...) are those of
    `checkpointd.Client`; the saver opens a `Client` for the sync methods and an `AsyncClient`
    per event loop for the async ones. Or pass ready clients: `client` and/or `async_client`.
    `messages_channel` names the channel kept in the run's message log (LangGraph's
    `MessagesState` uses `messages`); None keeps every channel in the checkpoint state.

    Every checkpoint is saved with a client checksum (checksum v1) that the server checks on
    save and verifies on every read. The latest checkpoint of a thread skips corrupt ones, as
    `LoadLatest` does, and says so (see `_fallback`): a log line, and `FALLBACK_KEY` in the
    tuple's metadata; `on_corrupt="raise"` refuses instead. A corrupt checkpoint asked for by
    id raises `checkpointd.DataLoss`; `list` leaves corrupt checkpoints out with a log line.

    `exclusive=True` makes this saver the only writer of each thread it writes: it takes the
    thread with a new fencing epoch (checkpointd's `Resume`) and a saver superseded by another
    exclusive one is refused with `ThreadTakenOver` instead of writing on. Off by default (see
    the package README, "Exclusive writing").
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        client: Client | None = None,
        async_client: AsyncClient | None = None,
        serde: SerializerProtocol | None = None,
        messages_channel: str | None = "messages",
        timeout: float | None = 30.0,
        on_corrupt: CorruptionPolicy = "warn",
        exclusive: bool = False,
        **client_options: Any,
    ) -> None:
        super().__init__(serde=serde)
        if target is None and client is None and async_client is None:
            raise ValueError("CheckpointdSaver needs a target, a client or an async_client")
        self._target = target
        self._client_options = {"timeout": timeout, **client_options}
        self._owns_client = client is None and target is not None
        self._client = client if client is not None else self._open_sync()
        self._async_client = async_client
        # grpc.aio channels belong to one event loop: one AsyncClient per loop that calls.
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        self._core = Core(
            serde=self.serde,
            channel=messages_channel,
            on_corrupt=_fallback.check_policy(on_corrupt),
            exclusive=exclusive,
        )
        self.messages_channel = messages_channel
        self.on_corrupt = self._core.on_corrupt
        self.exclusive = exclusive

    # -- clients and lifecycle --------------------------------------------------------------

    def _open_sync(self) -> Client | None:
        return Client(self._target, **self._client_options) if self._target is not None else None

    @property
    def client(self) -> Client:
        if self._client is None:
            raise ValueError("this CheckpointdSaver has only an async_client: use the async methods")
        return self._client

    def _aclient(self) -> AsyncClient:
        if self._async_client is not None:
            return self._async_client
        if self._target is None:
            raise ValueError("this CheckpointdSaver has only a sync client: pass a target or async_client")
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            client = AsyncClient(self._target, **self._client_options)
            self._async_clients[loop] = client
        return client

    def _sync(self, op: Op[Any]) -> Any:
        return run_sync(self.client, op)

    async def _async(self, op: Op[Any]) -> Any:
        return await run_async(self._aclient(), op)

    def close(self) -> None:
        """Closes the sync client this saver opened (async clients close with `aclose`)."""
        if self._owns_client and self._client is not None:
            self._client.close()

    async def aclose(self) -> None:
        """Closes the async client of the running loop that this saver opened."""
        client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def __enter__(self) -> CheckpointdSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> CheckpointdSaver:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
        self.close()

    # -- reads ------------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(_reads.get_tuple(self._core, config))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._async(_reads.get_tuple(self._core, config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return iterate_sync(self.client, _reads.list_tuples(self._core, config, filter, before, limit))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        op = _reads.list_tuples(self._core, config, filter, before, limit)
        async for item in iterate_async(self._aclient(), op):
            yield item

    # -- writes -----------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._sync(_writes.put(self._core, config, checkpoint, metadata))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._async(_writes.put(self._core, config, checkpoint, metadata))

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self._sync(_writes.put_writes(self._core, config, writes, task_id, task_path))

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await self._async(_writes.put_writes(self._core, config, writes, task_id, task_path))

    # -- threads and retention --------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        self._sync(_threads.delete_thread(self._core, thread_id))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._async(_threads.delete_thread(self._core, thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint of every namespace, oldest first, with its pending writes,
        keeping checkpoint ids, parents and metadata."""
        self._sync(_threads.copy_thread(self._core, source_thread_id, target_thread_id))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._async(_threads.copy_thread(self._core, source_thread_id, target_thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Deletes the checkpoints LangGraph runs `run_ids` made (their metadata `run_id`)."""
        self._sync(_threads.delete_for_runs(self._core, run_ids))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._async(_threads.delete_for_runs(self._core, run_ids))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest` keeps each namespace's newest checkpoint; `delete` deletes the threads.
        The message log and tool journal stay (they are append-only and verified)."""
        self._sync(_threads.prune(self._core, thread_ids, strategy))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._async(_threads.prune(self._core, thread_ids, strategy))

    def get_next_version(self, current: str | None, channel: None) -> str:
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


__all__ = ["CheckpointdSaver", "CheckpointdError"]
