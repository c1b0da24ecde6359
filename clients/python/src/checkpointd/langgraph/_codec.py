"""How a LangGraph checkpoint, its metadata and its pending writes become checkpointd fields.

- The state is the serializer's typed output of a small envelope: the checkpoint without the
  channel values kept in the message log, the parent checkpoint id, the namespace, and the
  metadata entries that cannot be filtered on (see below).
- Each top-level metadata entry whose value survives a JSON round trip unchanged is stored in
  checkpointd's metadata map as `m.<key>` = canonical JSON, so `ListCheckpoints`'
  `metadata_filter` serves `list(filter=...)` without reading payloads. The others stay in the
  envelope, and filters on them are applied by the client.
- A pending write is a journal entry whose output is a short JSON header (task id, task path,
  write index, the value's type tag) followed by the serialized value.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

#: Metadata map key prefix of LangGraph's own metadata entries.
META_PREFIX = "m."
#: Metadata key holding the message-log chain digest `d_(message_count)` of the checkpoint, hex.
LOG_DIGEST_KEY = "lg.log"
#: Largest canonical JSON kept in the metadata map (filterable); bigger values stay in the state.
MAX_FILTER_JSON = 16 * 1024
_MAX_KEY = 256
ENVELOPE_VERSION = 1


def canonical_json(value: Any) -> str | None:
    """The canonical JSON of a metadata value, or None when JSON cannot carry it faithfully
    (a tuple, a dict with non-string keys, an object) or it is too big to filter on."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    if len(text) > MAX_FILTER_JSON:
        return None
    try:
        if json.loads(text) != value:
            return None
    except ValueError:
        return None
    return text


def filter_key(key: str) -> str | None:
    """The metadata map key of a LangGraph metadata key, None when it cannot be one."""
    mapped = META_PREFIX + key
    if len(mapped.encode()) > _MAX_KEY or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in mapped):
        return None
    return mapped


def split_metadata(metadata: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """(filterable map entries, the rest) of LangGraph metadata."""
    mapped: dict[str, str] = {}
    rest: dict[str, Any] = {}
    for key, value in metadata.items():
        name = filter_key(key)
        text = canonical_json(value) if name is not None else None
        if name is None or text is None:
            rest[key] = value
        else:
            mapped[name] = text
    return mapped, rest


def join_metadata(mapped: dict[str, str], rest: dict[str, Any]) -> dict[str, Any]:
    """LangGraph metadata back from the map entries and the envelope's remainder."""
    out: dict[str, Any] = {}
    for key, text in mapped.items():
        if key.startswith(META_PREFIX):
            out[key[len(META_PREFIX) :]] = json.loads(text)
    out.update(rest)
    return out


def server_filter(filter: dict[str, Any]) -> dict[str, str]:
    """The part of a `list(filter=...)` the server can apply exactly; the client re-checks all."""
    out: dict[str, str] = {}
    for key, value in filter.items():
        name = filter_key(key)
        text = canonical_json(value) if name is not None else None
        if name is not None and text is not None:
            out[name] = text
    return out


@dataclass(frozen=True)
class Write:
    """One pending write as read back from the journal."""

    task_id: str
    task_path: str
    idx: int
    channel: str
    typed: tuple[str, bytes]
    seq: int


_HEADER_LEN = struct.Struct(">I")


def encode_write(task_id: str, task_path: str, idx: int, typed: tuple[str, bytes]) -> bytes:
    header = json.dumps(
        {"task": task_id, "path": task_path, "idx": idx, "type": typed[0]},
        separators=(",", ":"),
    ).encode()
    return _HEADER_LEN.pack(len(header)) + header + typed[1]


def decode_write(output: bytes, channel: str, seq: int) -> Write | None:
    """The write a journal entry holds; None for an entry this saver did not write."""
    if len(output) < _HEADER_LEN.size:
        return None
    (size,) = _HEADER_LEN.unpack_from(output)
    end = _HEADER_LEN.size + size
    try:
        header = json.loads(output[_HEADER_LEN.size : end])
        return Write(
            task_id=str(header["task"]),
            task_path=str(header["path"]),
            idx=int(header["idx"]),
            channel=channel,
            typed=(str(header["type"]), bytes(output[end:])),
            seq=seq,
        )
    except (ValueError, KeyError, TypeError):
        return None
