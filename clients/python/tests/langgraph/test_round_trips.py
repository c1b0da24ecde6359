"""What a graph step costs the saver in calls, under LangGraph's default durability: each
`put_writes` is at most one `RecordToolResults`, a checkpoint is one `Save`, nothing is looked
up by id, and no save is refused because journal writes landed while it was checksummed (it
names the journal prefix it covers), sync and async alike."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from graphs import Calls, fan_out

from checkpointd import AsyncClient, CheckpointdError, Client
from checkpointd.langgraph import CheckpointdSaver

RUNS = 10


class Counting:
    """Counts the calls made and the reasons of the refusals met."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()


class CountingClient(Client):
    def __init__(self, target: str, counts: Counting) -> None:
        super().__init__(target)
        self.counts = counts

    def _unary(self, stub: Any, method: str, *args: Any) -> Any:
        self.counts.calls[method] += 1
        try:
            return super()._unary(stub, method, *args)  # type: ignore[misc]
        except CheckpointdError as error:
            self.counts.refused[f"{method}:{error.reason}"] += 1
            raise


class CountingAsyncClient(AsyncClient):
    def __init__(self, target: str, counts: Counting) -> None:
        super().__init__(target)
        self.counts = counts

    async def _unary(self, stub: Any, method: str, *args: Any) -> Any:
        self.counts.calls[method] += 1
        try:
            return await super()._unary(stub, method, *args)  # type: ignore[misc]
        except CheckpointdError as error:
            self.counts.refused[f"{method}:{error.reason}"] += 1
            raise


def expect_lean(counts: Counting) -> None:
    writes_refused = {
        k: n for k, n in counts.refused.items() if k.startswith(("Save:", "RecordToolResults:"))
    }
    assert writes_refused == {}, counts.refused  # no save retried, no conflict
    assert counts.calls["RecordToolResult"] == 0, counts.calls  # writes go in batches
    # At most one batch per task (plan, four `work` branches, reduce): fewer when writes that
    # came before their checkpoint's put are journalled together by that put.
    assert RUNS <= counts.calls["RecordToolResults"] <= 6 * RUNS, counts.calls
    # No lookup of a checkpoint by id: a new thread's writes wait for their put in-process.
    assert counts.calls["LoadAtStep"] == 0, counts.calls
    assert counts.calls["Save"] == 5 * RUNS, counts.calls  # input, plan, work, reduce, end


def test_a_fan_out_costs_one_batch_per_task_and_no_refused_save(server) -> None:
    counts = Counting()
    with CheckpointdSaver(client=CountingClient(server.target, counts)) as saver:
        graph = fan_out(saver, Calls())
        for _ in range(RUNS):
            final = graph.invoke({}, {"configurable": {"thread_id": str(uuid.uuid4())}})
            assert final["summary"] == "ITEM-0+ITEM-1+ITEM-2+ITEM-3"
    expect_lean(counts)


async def test_the_same_holds_for_ainvoke_on_the_async_client(server) -> None:
    counts = Counting()
    saver = CheckpointdSaver(async_client=CountingAsyncClient(server.target, counts))
    graph = fan_out(saver, Calls())
    for _ in range(RUNS):
        final = await graph.ainvoke({}, {"configurable": {"thread_id": str(uuid.uuid4())}})
        assert final["summary"] == "ITEM-0+ITEM-1+ITEM-2+ITEM-3"
    expect_lean(counts)
