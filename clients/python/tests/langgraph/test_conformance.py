"""LangGraph's own conformance suite (langgraph-checkpoint-conformance) against a real server,
on SQLite and on Postgres. The report is printed (run pytest with -s to see it live); every
base capability and every extended one must be claimed and pass."""

from __future__ import annotations

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from checkpointd.langgraph import CheckpointdSaver


async def test_the_saver_passes_langgraphs_conformance_suite(server) -> None:
    @checkpointer_test(name=f"CheckpointdSaver ({server.database.kind})")
    async def checkpointd_saver():
        saver = CheckpointdSaver(server.target)
        try:
            yield saver
        finally:
            saver.close()

    report = await validate(checkpointd_saver, progress=ProgressCallbacks.verbose())
    report.print_report()
    assert report.passed_all_base(), report.to_dict()
    claimed = {name: r for name, r in report.results.items() if r.detected}
    assert {"copy_thread", "delete_for_runs", "prune"} <= set(claimed)
    failed = {name: r.failures for name, r in claimed.items() if not r.passed}
    assert not failed, failed
