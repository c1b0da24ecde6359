"""The arguments digest of a journalled call: what lets a replay prove it is the same call.

A journalled result (or intent) is reused only by a call with the same arguments. Each call
sends `arguments_digest`, the lower-case hex SHA-256 of its arguments' canonical JSON:

    json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

(object keys sorted, no spaces, non-ASCII characters as themselves, UTF-8). Before reusing a
journalled entry the client compares: a stored digest that differs raises `ReplayMismatch`,
and so does the server (reason `ARGUMENTS_MISMATCH`) when the call is journalled again. An
entry stored without a digest (an older client) replays as before, and arguments JSON cannot
carry (an arbitrary object) get no digest, so their calls are not checked.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .errors import ReplayMismatch


def canonical_json(args: Any) -> bytes:
    """The canonical JSON of `args`, UTF-8; `TypeError` when JSON cannot carry it."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def arguments_digest(args: Any) -> str:
    """Hex SHA-256 of the canonical JSON of `args`; "" when JSON cannot carry them (the call is
    then journalled without a digest, and its replays are not checked)."""
    try:
        return hashlib.sha256(canonical_json(args)).hexdigest()
    except (TypeError, ValueError):
        return ""


def check_replay(call_id: str, stored_digest: str, request_digest: str) -> None:
    """Raises `ReplayMismatch` when a journalled entry's digest is not this call's. Either
    side without a digest (an older entry, arguments JSON cannot carry) is not a mismatch."""
    if stored_digest and request_digest and stored_digest != request_digest:
        raise ReplayMismatch.of(call_id, stored_digest, request_digest)
