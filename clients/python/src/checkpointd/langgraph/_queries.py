"""Paged reads the saver makes: a thread's runs, and a run's checkpoint summaries."""

from __future__ import annotations

from collections.abc import Iterator

from .._proto import checkpoint_pb2 as pb
from ..client import Client
from ..errors import NotFound

PAGE = 100


def list_runs(client: Client, prefix: str) -> Iterator[str]:
    """Every run id starting with `prefix`, ascending (the database filters the range)."""
    token = ""
    while True:
        page = client.list_runs(run_id_prefix=prefix, page_size=PAGE, page_token=token)
        for head in page.runs:
            yield head.run_id
        token = page.next_page_token
        if not token:
            return


def summaries(
    client: Client,
    run_id: str,
    *,
    metadata_filter: dict[str, str],
    before_step: int | None,
    before_label: str | None,
) -> Iterator[pb.CheckpointSummary]:
    """A run's checkpoints newest first, filtered by the server on metadata and step; with
    `before_label`, only those whose label sorts before it."""
    request = pb.ListCheckpointsRequest(
        run_id=run_id, page_size=PAGE, descending=True, metadata_filter=metadata_filter
    )
    if before_step is not None:
        request.before_step = before_step
    while True:
        try:
            page = client.list_checkpoints(request)
        except NotFound:
            return
        for summary in page.checkpoints:
            if before_label is not None and not (summary.label and summary.label < before_label):
                continue
            yield summary
        if not page.next_page_token:
            return
        request.page_token = page.next_page_token


def steps_ascending(client: Client, run_id: str) -> Iterator[int]:
    """Every checkpoint step of a run, oldest first."""
    request = pb.ListCheckpointsRequest(run_id=run_id, page_size=PAGE)
    while True:
        try:
            page = client.list_checkpoints(request)
        except NotFound:
            return
        for summary in page.checkpoints:
            yield summary.step
        if not page.next_page_token:
            return
        request.page_token = page.next_page_token


def labels_at(client: Client, run_id: str, steps: list[int] | None) -> dict[int, str]:
    """The LangGraph ids of a run's checkpoints at `steps` (all of them for None), by step."""
    wanted = None if steps is None else set(steps)
    found: dict[int, str] = {}
    for summary in summaries(client, run_id, metadata_filter={}, before_step=None, before_label=None):
        if wanted is None or summary.step in wanted:
            found[summary.step] = summary.label
            if wanted is not None and len(found) == len(wanted):
                break
    return found
