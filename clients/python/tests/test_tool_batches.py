"""RecordToolResults through the sync and async clients: one answer per entry, in order."""

from __future__ import annotations

import pytest

from checkpointd import AsyncClient, Client, FailedPrecondition, InvalidArgument


def _entry(call_id: str, output: bytes) -> dict[str, object]:
    return {"call_id": call_id, "tool_name": "search", "step": 1, "output": output}


def test_a_batch_answers_each_entry_like_a_single_call(server) -> None:
    with Client(server.target) as client:
        first = client.record_tool_result(
            run_id="batch", call_id="c1", tool_name="search", step=1, output=b"1"
        )
        answer = client.record_tool_results(
            run_id="batch",
            results=[_entry("c2", b"2"), _entry("c1", b"other"), _entry("c2", b"again")],
        )
        got = [(r.result.call_id, r.result.seq, r.already_recorded) for r in answer.results]
        assert got == [("c2", 2, False), ("c1", 1, True), ("c2", 2, True)]
        assert answer.results[1].result == first.result
        with pytest.raises(InvalidArgument) as bad:
            client.record_tool_results(run_id="batch", results=[_entry("c3", b"3"), _entry("", b"")])
        assert bad.value.metadata["field"] == "results[1].call_id"
        assert [r.call_id for r in client.resume(run_id="batch").tool_results] == ["c1", "c2"]


async def test_the_async_client_batches_and_is_fenced(server) -> None:
    async with AsyncClient(server.target) as client:
        epoch = (await client.resume(run_id="batch-async")).epoch
        with pytest.raises(FailedPrecondition):
            await client.record_tool_results(
                run_id="batch-async", epoch=epoch - 1, results=[_entry("c1", b"1")]
            )
        answer = await client.record_tool_results(
            run_id="batch-async", epoch=epoch, results=[_entry("c1", b"1")]
        )
        assert [r.already_recorded for r in answer.results] == [False]


def test_a_save_may_cover_the_journals_first_entries(server) -> None:
    with Client(server.target) as client:
        client.record_tool_results(run_id="covered", results=[_entry("c1", b"1"), _entry("c2", b"2")])
        saved = client.save(run_id="covered", step=1, state=b"{}", tool_count=1)
        assert client.load_latest(run_id="covered").checkpoint.tool_count == 1
        assert client.save(run_id="covered", step=1, state=b"{}", tool_count=1).already_existed
        with pytest.raises(FailedPrecondition) as ahead:
            client.save(run_id="covered", step=2, state=b"{}", tool_count=3)
        assert ahead.value.reason == "JOURNAL_BEHIND"
        assert saved.checksum
