"""Whole-thread and retention operations (see `_effects`): `delete_thread`, `copy_thread`,
`delete_for_runs` and `prune`.

Deleting checkpoints (`DeleteCheckpoints`) removes checkpoint rows only: a run's message log and
tool journal are append-only and stay, so every remaining checkpoint still verifies, and a
side effect journalled by an exactly-once tool is never forgotten by a prune.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import DataLoss, NotFound
from . import _codec, _naming, _queries, _writes
from ._core import Core, journal_gated, step_of
from ._effects import Call, Op, holding
from ._fallback import log
from ._runs import HeldWrite, RunState

#: LangGraph's prune strategies.
PRUNE_STRATEGIES = ("keep_latest", "delete")
#: Steps named in one DeleteCheckpoints call.
_DELETE_BATCH = 500


def delete_thread(core: Core, thread_id: str) -> Op[None]:
    for run in (yield from _queries.list_runs(_naming.thread_prefix(str(thread_id)))):
        try:
            yield Call("delete_run", dict(run_id=run))
        except NotFound:
            pass
        core.runs.drop(run)


def copy_thread(core: Core, source_thread_id: str, target_thread_id: str) -> Op[None]:
    """Copies every checkpoint of every namespace, oldest first, with its pending writes,
    keeping checkpoint ids, parents and metadata."""
    for run in (yield from _queries.list_runs(_naming.thread_prefix(str(source_thread_id)))):
        parsed = _naming.parse_run_id(run)
        if parsed is None:
            continue
        source = core.runs.get(run)
        listing = _queries.summaries_request(run, metadata_filter={}, before_step=None, descending=False)
        for summary in (yield from _queries.all_summaries(listing)):
            try:
                loaded = yield from core.loader.load(source, step=summary.step)
            except (NotFound, DataLoss):
                continue
            if loaded is None:
                continue
            ns = parsed[1] if parsed[1] is not None else loaded.ns
            config: dict[str, Any] = {
                "configurable": {"thread_id": str(target_thread_id), "checkpoint_ns": ns}
            }
            if loaded.parent_id:
                config["configurable"]["checkpoint_id"] = loaded.parent_id
            yield from _writes.put(core, config, loaded.checkpoint, loaded.metadata)  # type: ignore[arg-type]
            if not loaded.writes:
                continue
            target = core.runs.get(_naming.run_id(str(target_thread_id), ns))
            target_step = yield from step_of(target, loaded.checkpoint_id)
            if target_step is None:
                raise NotFound(f"copied checkpoint {loaded.checkpoint_id} vanished")
            writes = [HeldWrite(w.task_id, w.task_path, w.idx, w.channel, w.typed) for w in loaded.writes]
            recording = _writes.record_writes(core, target, loaded.checkpoint_id, target_step, writes)
            yield from journal_gated(core, target, recording)


def delete_for_runs(core: Core, run_ids: Sequence[str]) -> Op[None]:
    """Deletes every checkpoint whose LangGraph metadata `run_id` is one of `run_ids`, in
    every thread and namespace (the server filters on the metadata map). A run id that
    matches no checkpoint is logged: LangGraph records `config["metadata"]["run_id"]` (or
    `config["configurable"]["run_id"]`) in each checkpoint's metadata, never the top-level
    `config["run_id"]` (LangChain's callback run id), so deleting by the latter finds nothing."""
    wanted = [str(r) for r in run_ids]
    filters = {r: f for r in wanted if (f := _codec.server_filter({"run_id": r}))}
    if not filters:
        return
    matched: set[str] = set()
    for run in (yield from _queries.list_runs(_naming.PREFIX)):
        steps: list[int] = []
        for run_id, metadata_filter in filters.items():
            listing = _queries.summaries_request(run, metadata_filter=metadata_filter, before_step=None)
            found = [s.step for s in (yield from _queries.all_summaries(listing))]
            if found:
                matched.add(run_id)
            steps.extend(found)
        yield from _delete_steps(core, run, steps)
    for run_id in filters:
        if run_id not in matched:
            log.warning(
                "delete_for_runs: no checkpoint has run_id %r in its metadata, nothing deleted for it; "
                "LangGraph records a run's id from config['metadata']['run_id'] (or "
                "config['configurable']['run_id']), not from config['run_id'], so invoke with "
                "{'metadata': {'run_id': ...}} to delete by run",
                run_id,
            )


def prune(core: Core, thread_ids: Sequence[str], strategy: str) -> Op[None]:
    """`keep_latest`: only the newest checkpoint of each namespace stays (with its pending
    writes); `delete`: the threads go entirely."""
    if strategy not in PRUNE_STRATEGIES:
        raise ValueError(f"prune strategy must be one of {PRUNE_STRATEGIES}, not {strategy!r}")
    for thread_id in thread_ids:
        if strategy == "delete":
            yield from delete_thread(core, thread_id)
            continue
        for run in (yield from _queries.list_runs(_naming.thread_prefix(str(thread_id)))):
            listing = _queries.summaries_request(run, metadata_filter={}, before_step=None)
            steps = [s.step for s in (yield from _queries.all_summaries(listing))]
            yield from _delete_steps(core, run, steps[1:])  # newest first: keep the first


def _delete_steps(core: Core, run: str, steps: list[int]) -> Op[None]:
    if not steps:
        return
    state = core.runs.get(run)
    # Not under a save in flight in this process.
    yield from holding(state.gate, True, _delete_held(state, steps))


def _delete_held(state: RunState, steps: list[int]) -> Op[None]:
    try:
        for start in range(0, len(steps), _DELETE_BATCH):
            batch = steps[start : start + _DELETE_BATCH]
            try:
                done = yield Call("delete_checkpoints", dict(run_id=state.run_id, steps=batch))
            except NotFound:
                return
            if done.pinned_steps:
                log.info("run %s: kept pinned checkpoints at steps %s", state.run_id, list(done.pinned_steps))
    finally:
        with state.lock:  # forget the deleted ids: the next write learns the run again
            state.forget_labels()
            state.forget()
