"""Paged reads the saver makes, as operations (see `_effects`): a thread's runs, and a run's
checkpoint summaries page by page."""

from __future__ import annotations

from .._proto import checkpoint_pb2 as pb
from ..errors import NotFound
from ._effects import Call, Op

PAGE = 100


def list_runs(prefix: str) -> Op[list[str]]:
    """Every run id starting with `prefix`, ascending (the database filters the range)."""
    runs: list[str] = []
    token = ""
    while True:
        page = yield Call("list_runs", dict(run_id_prefix=prefix, page_size=PAGE, page_token=token))
        runs.extend(head.run_id for head in page.runs)
        token = page.next_page_token
        if not token:
            return runs


def summary_page(request: pb.ListCheckpointsRequest) -> Op[list[pb.CheckpointSummary]]:
    """One page of `request`, advancing its page token; [] once past the last page (or when
    the run does not exist). The caller stops when `request.page_token` is "done"."""
    try:
        page = yield Call("list_checkpoints", request=request)
    except NotFound:
        request.page_token = DONE
        return []
    request.page_token = page.next_page_token or DONE
    return list(page.checkpoints)


#: Page token marking a listing as finished (never one the server hands out).
DONE = "\x00done"


def summaries_request(
    run_id: str, *, metadata_filter: dict[str, str], before_step: int | None, descending: bool = True
) -> pb.ListCheckpointsRequest:
    """A listing of a run's checkpoints, newest first unless `descending` is False."""
    request = pb.ListCheckpointsRequest(
        run_id=run_id, page_size=PAGE, descending=descending, metadata_filter=metadata_filter
    )
    if before_step is not None:
        request.before_step = before_step
    return request


def all_summaries(request: pb.ListCheckpointsRequest) -> Op[list[pb.CheckpointSummary]]:
    """Every checkpoint summary of a listing."""
    out: list[pb.CheckpointSummary] = []
    while request.page_token != DONE:
        out.extend((yield from summary_page(request)))
    return out


def summaries_at(run_id: str, steps: list[int] | None) -> Op[dict[int, pb.CheckpointSummary]]:
    """The summaries (label, metadata, ...) of a run's checkpoints at `steps` (all of them for
    None), by step."""
    wanted = None if steps is None else set(steps)
    found: dict[int, pb.CheckpointSummary] = {}
    request = summaries_request(run_id, metadata_filter={}, before_step=None)
    while request.page_token != DONE:
        for summary in (yield from summary_page(request)):
            if wanted is None or summary.step in wanted:
                found[summary.step] = summary
        if wanted is not None and len(found) == len(wanted):
            break
    return found
