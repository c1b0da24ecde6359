"""Names LangGraph's addresses take in checkpointd: run ids for (thread, namespace) pairs and
journal call ids for pending writes.

A run id is `lg:<pct(thread_id)>:<pct(checkpoint_ns)>`. Percent-encoding escapes `:` and `%`,
so the encoding is unambiguous and printable, and `ListRuns(run_id_prefix="lg:<pct(thread)>:")`
finds exactly one thread's namespaces. A namespace too long for the 256-byte run id limit is
replaced by `!` and a digest (`!` never survives percent-encoding, so the two forms cannot meet);
the real namespace then travels in the checkpoint itself.
"""

from __future__ import annotations

import hashlib
from urllib.parse import quote, unquote

PREFIX = "lg:"
MAX_ID_BYTES = 256
_HASHED = "!"


def _pct(text: str) -> str:
    return quote(text, safe="")


def thread_prefix(thread_id: str) -> str:
    """The run id prefix shared by every namespace of a thread."""
    prefix = f"{PREFIX}{_pct(thread_id)}:"
    if len(prefix) > MAX_ID_BYTES - 1:
        raise ValueError(f"thread_id is too long for checkpointd ({len(thread_id)} characters)")
    return prefix


def run_id(thread_id: str, checkpoint_ns: str) -> str:
    """The checkpointd run that holds one (thread, namespace) pair."""
    prefix = thread_prefix(thread_id)
    encoded = _pct(checkpoint_ns)
    if len(prefix) + len(encoded) > MAX_ID_BYTES:
        encoded = _HASHED + hashlib.sha256(checkpoint_ns.encode()).hexdigest()[:40]
        if len(prefix) + len(encoded) > MAX_ID_BYTES:
            raise ValueError("thread_id and checkpoint_ns are too long for checkpointd")
    return prefix + encoded


def parse_run_id(run: str) -> tuple[str, str | None] | None:
    """(thread_id, checkpoint_ns) of a run id this saver made; the namespace is None when it
    was stored as a digest (the checkpoint carries it). None for any other run."""
    if not run.startswith(PREFIX):
        return None
    thread, sep, ns = run[len(PREFIX) :].partition(":")
    if not sep:
        return None
    return unquote(thread), (None if ns.startswith(_HASHED) else unquote(ns))


def write_call_id(checkpoint_id: str, task_id: str, idx: int, version: str = "") -> str:
    """The journal call id of one pending write. Regular writes (idx >= 0) get one id per
    (checkpoint, task, idx), so the journal's first-write-wins keeps retries idempotent; the
    special channels (idx < 0) pass a fresh `version` each time, and the newest one wins."""
    task = task_id
    suffix = f"/{version}" if version else ""
    call = f"{checkpoint_id}/{task}/{idx}{suffix}"
    if len(call.encode()) > MAX_ID_BYTES:
        task = "#" + hashlib.sha256(task_id.encode()).hexdigest()[:32]
        call = f"{checkpoint_id}/{task}/{idx}{suffix}"
    if len(call.encode()) > MAX_ID_BYTES:
        raise ValueError(f"checkpoint id {checkpoint_id!r} is too long for a journal call id")
    return call
