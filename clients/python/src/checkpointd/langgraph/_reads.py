"""The saver's reads as operations (see `_effects`): `get_tuple` (a checkpoint by id, or the
thread's latest valid one, saying loudly when corrupt ones were skipped) and `list`."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple, get_checkpoint_id

from ..errors import DataLoss, NotFound
from . import _codec, _fallback, _naming, _queries
from ._core import Core, address, step_of
from ._effects import Emit, Op
from ._fallback import FALLBACK_KEY, CorruptCheckpoints, Fallback, Skipped
from ._load import AllCorrupt, langgraph_step


def get_tuple(core: Core, config: RunnableConfig) -> Op[CheckpointTuple | None]:
    thread_id, ns = address(config["configurable"])
    run = _naming.run_id(thread_id, ns)
    state = core.runs.get(run)
    checkpoint_id = get_checkpoint_id(config)
    try:
        if checkpoint_id:
            loaded = yield from core.loader.load(state, label=checkpoint_id)
        else:
            loaded = yield from core.loader.load(state)
    except NotFound:
        if not checkpoint_id:
            with state.lock:
                state.seen_empty = True
        return None
    except AllCorrupt:
        summaries = yield from _queries.summaries_at(run, None)
        skipped = [_skipped(summaries[s]) for s in sorted(summaries, reverse=True)]
        _fallback.report(core.on_corrupt, Fallback(thread_id, ns, skipped, None))
        return None
    except DataLoss as error:
        if not checkpoint_id:
            raise
        # Asked for by id, so no fallback: the same error a fallback under "raise" is.
        summaries = yield from _queries.summaries_at(run, None)
        found = [_skipped(s) for s in summaries.values() if s.label == checkpoint_id]
        corrupt = Fallback(thread_id, ns, found or [Skipped(-1, checkpoint_id)], None, checkpoint_id)
        _fallback.log.error("%s", corrupt.describe())
        raise CorruptCheckpoints(corrupt) from error
    if loaded is None:
        return None
    tup = core.loader.to_tuple(thread_id, ns, loaded)
    if loaded.passed_over:
        skipped = loaded.passed_over
        if any(not s.checkpoint_id for s in skipped):
            # An older server names steps only: look their ids and LangGraph steps up.
            summaries = yield from _queries.summaries_at(run, [s.step for s in skipped])
            skipped = [_skipped(summaries[s.step]) if s.step in summaries else s for s in skipped]
        fallback = Fallback(thread_id, ns, skipped, loaded.checkpoint_id)
        _fallback.report(core.on_corrupt, fallback)
        tup.metadata[FALLBACK_KEY] = fallback.as_metadata()  # type: ignore[literal-required]
    return tup


def _skipped(summary: Any) -> Skipped:
    return Skipped(summary.step, summary.label, langgraph_step(summary.metadata))


def list_tuples(
    core: Core,
    config: RunnableConfig | None,
    filter: dict[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> Op[None]:
    """Emits the matching checkpoints, newest first within each run."""
    remaining = limit
    if remaining is not None and remaining <= 0:
        return
    configurable = (config or {}).get("configurable", {})
    wanted_id = get_checkpoint_id(config) if config else None
    before_id = get_checkpoint_id(before) if before else None
    for run, thread_id, ns in (yield from _runs_to_list(configurable)):
        state = core.runs.get(run)
        before_step = (yield from step_of(state, before_id)) if before_id else None
        # a `before` checkpoint not in this run: compare ids, as LangGraph does
        before_label = before_id if before_id and before_step is None else None
        request = _queries.summaries_request(
            run, metadata_filter=_codec.server_filter(filter or {}), before_step=before_step
        )
        while request.page_token != _queries.DONE:
            for summary in (yield from _queries.summary_page(request)):
                if wanted_id and summary.label != wanted_id:
                    continue
                if before_label is not None and not (summary.label and summary.label < before_label):
                    continue
                try:
                    loaded = yield from core.loader.load(state, step=summary.step)
                except NotFound:
                    continue  # pruned meanwhile
                except DataLoss:
                    _fallback.log.warning(
                        "thread %r ns %r: checkpoint %s (step %s) is corrupt; left out of the listing",
                        thread_id,
                        ns,
                        summary.label,
                        summary.step,
                    )
                    continue
                if loaded is None:
                    continue
                tup = core.loader.to_tuple(thread_id, ns if ns is not None else loaded.ns, loaded)
                if filter and not all(tup.metadata.get(k) == v for k, v in filter.items()):
                    continue
                yield Emit(tup)
                if remaining is not None:
                    remaining -= 1
                    if remaining <= 0:
                        return


def _runs_to_list(configurable: dict[str, Any]) -> Op[list[tuple[str, str, str | None]]]:
    """(run id, thread id, namespace or None when only the checkpoint knows it)."""
    if "thread_id" in configurable:
        thread_id = str(configurable["thread_id"])
        if "checkpoint_ns" in configurable and configurable["checkpoint_ns"] is not None:
            ns = configurable["checkpoint_ns"]
            return [(_naming.run_id(thread_id, ns), thread_id, ns)]
        prefix = _naming.thread_prefix(thread_id)
    else:
        prefix = _naming.PREFIX
    out: list[tuple[str, str, str | None]] = []
    for run in (yield from _queries.list_runs(prefix)):
        parsed = _naming.parse_run_id(run)
        if parsed is not None:
            out.append((run, parsed[0], parsed[1]))
    return out
