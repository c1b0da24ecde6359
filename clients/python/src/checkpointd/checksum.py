"""Checksum v1 and idempotency key v1, as documented at the top of checkpoint.proto.

The chains are append-only, so a client extends them by what changed instead of rehashing a
run's history on every save. Checked against `tests/vectors/checksum_v1.json`.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

ZERO = bytes(32)
_CHECKSUM_DOMAIN = b"checkpointd.checksum.v1"
_IDEMPOTENCY_DOMAIN = b"checkpointd.idempotency.v1"


def _u64(value: int) -> bytes:
    return struct.pack(">Q", value)


def _lp(data: bytes) -> bytes:
    return _u64(len(data)) + data


def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


@dataclass(frozen=True)
class MessageChain:
    """`d_n` over the first `length` messages of a run's log."""

    length: int = 0
    digest: bytes = ZERO

    def push(self, role: str, content: bytes) -> MessageChain:
        leaf = _h(_lp(_utf8(role)) + _lp(content))
        return MessageChain(self.length + 1, _h(self.digest + leaf))

    def extend(self, messages: Iterable[tuple[str, bytes]]) -> MessageChain:
        chain = self
        for role, content in messages:
            chain = chain.push(role, content)
        return chain


@dataclass(frozen=True)
class ToolChain:
    """`t_n` over the first `length` journal entries (tool results and intents) of a run."""

    length: int = 0
    digest: bytes = ZERO

    def push_result(
        self, call_id: str, tool_name: str, step: int, output: bytes, is_error: bool
    ) -> ToolChain:
        leaf = _h(
            _lp(_utf8(call_id))
            + _lp(_utf8(tool_name))
            + _u64(step)
            + _lp(output)
            + bytes([1 if is_error else 0])
        )
        return ToolChain(self.length + 1, _h(self.digest + leaf))

    def push_intent(self, call_id: str, tool_name: str, step: int) -> ToolChain:
        leaf = _h(bytes([1]) + _lp(_utf8(call_id)) + _lp(_utf8(tool_name)) + _u64(step))
        return ToolChain(self.length + 1, _h(self.digest + leaf))


def checkpoint_checksum(
    *,
    run_id: str,
    step: int,
    content_type: str,
    state: bytes,
    metadata: Mapping[str, str],
    messages: MessageChain,
    tools: ToolChain,
) -> str:
    """Checksum v1 of a checkpoint, lower-case hex. Metadata keys sort by their UTF-8 bytes."""
    if step < 0:
        raise ValueError("step must be >= 0")
    out = bytearray(_lp(_CHECKSUM_DOMAIN))
    out += _lp(_utf8(run_id)) + _u64(step) + _lp(_utf8(content_type)) + _lp(state)
    entries = sorted(((_utf8(k), _utf8(v)) for k, v in metadata.items()), key=lambda kv: kv[0])
    out += _u64(len(entries))
    for key, value in entries:
        out += _lp(key) + _lp(value)
    out += _u64(messages.length) + messages.digest
    out += _u64(tools.length) + tools.digest
    return hashlib.sha256(bytes(out)).hexdigest()


def idempotency_key(tenant: str, run_id: str, call_id: str) -> str:
    """Idempotency key v1 of a side-effecting call, lower-case hex."""
    return _h(_lp(_IDEMPOTENCY_DOMAIN) + _lp(_utf8(tenant)) + _lp(_utf8(run_id)) + _lp(_utf8(call_id))).hex()
