"""How the Python interface's values become checkpointd's bytes and back.

- state: a JSON object, stored as compact UTF-8 JSON (`application/json`);
- a message: a dict with a `role`; everything but the role is stored as the message's content,
  a JSON object (`{"content": "hi"}`), so tool-call fields survive a round trip. Content written
  by other clients that is not such an object comes back as text (or bytes when not UTF-8);
- a tool output: any JSON value, stored as JSON; non-JSON bytes come back as bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

CONTENT_TYPE = "application/json"


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode_state(state: Mapping[str, Any]) -> bytes:
    return dumps(dict(state))


def decode_state(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("the checkpoint's state is not a JSON object")
    return value


def encode_message(message: Mapping[str, Any]) -> tuple[str, bytes]:
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise ValueError(f"a message needs a non-empty string role, got {message!r}")
    return role, dumps({k: v for k, v in message.items() if k != "role"})


def decode_message(role: str, content: bytes) -> dict[str, Any]:
    try:
        body = json.loads(content)
    except (UnicodeDecodeError, ValueError):
        body = None
    if isinstance(body, dict) and "role" not in body:
        return {"role": role, **body}
    try:
        return {"role": role, "content": content.decode("utf-8")}
    except UnicodeDecodeError:
        return {"role": role, "content": content}


def encode_output(value: Any) -> bytes:
    return value if isinstance(value, bytes) else dumps(value)


def decode_output(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return raw
