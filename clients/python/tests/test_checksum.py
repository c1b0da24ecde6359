"""Checksum v1 and idempotency key v1 against every vector in tests/vectors/checksum_v1.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkpointd.checksum import MessageChain, ToolChain, checkpoint_checksum, idempotency_key

VECTORS = json.loads(
    (Path(__file__).resolve().parents[3] / "tests" / "vectors" / "checksum_v1.json").read_text()
)


def tool_chain(entries: list[dict]) -> ToolChain:
    chain = ToolChain()
    for entry in entries:
        if entry.get("kind") == "intent":
            chain = chain.push_intent(entry["call_id"], entry["tool_name"], entry["step"])
        else:
            chain = chain.push_result(
                entry["call_id"],
                entry["tool_name"],
                entry["step"],
                bytes.fromhex(entry["output_hex"]),
                entry["is_error"],
            )
    return chain


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["name"])
def test_checksum_matches_the_vector(vector: dict) -> None:
    messages = MessageChain().extend((m["role"], bytes.fromhex(m["content_hex"])) for m in vector["messages"])
    tools = tool_chain(vector["tools"])
    assert messages.digest.hex() == vector["message_chain_hex"]
    assert tools.digest.hex() == vector["tool_chain_hex"]
    assert messages.length == len(vector["messages"]) and tools.length == len(vector["tools"])
    assert (
        checkpoint_checksum(
            run_id=vector["run_id"],
            step=vector["step"],
            content_type=vector["content_type"],
            state=bytes.fromhex(vector["state_hex"]),
            metadata=vector["metadata"],
            messages=messages,
            tools=tools,
        )
        == vector["expected"]
    )


@pytest.mark.parametrize(
    "vector", VECTORS["idempotency_keys"], ids=lambda v: f"{v['tenant']}/{v['run_id']}/{v['call_id']}"
)
def test_idempotency_key_matches_the_vector(vector: dict) -> None:
    assert idempotency_key(vector["tenant"], vector["run_id"], vector["call_id"]) == vector["expected"]


def test_the_vectors_cover_every_kind_of_entry() -> None:
    kinds = {e.get("kind", "result") for v in VECTORS["vectors"] for e in v["tools"]}
    assert kinds == {"result", "intent"}
    assert len(VECTORS["idempotency_keys"]) >= 1


def test_metadata_keys_sort_by_utf8_bytes_not_by_utf16_units() -> None:
    # U+FF61 sorts after U+1F600 in UTF-16 code units (0xFF61 > 0xD83D) but before it in UTF-8
    # bytes (EF BD A1 < F0 9F 98 80): the preimage must list the keys in the bytes' order.
    import hashlib
    import struct

    def lp(b: bytes) -> bytes:
        return struct.pack(">Q", len(b)) + b

    by_bytes = [("\uff61", "a"), ("\U0001f600", "b")]
    preimage = lp(b"checkpointd.checksum.v1") + lp(b"r") + struct.pack(">Q", 1) + lp(b"") + lp(b"")
    preimage += struct.pack(">Q", 2) + b"".join(lp(k.encode()) + lp(v.encode()) for k, v in by_bytes)
    preimage += struct.pack(">Q", 0) + bytes(32) + struct.pack(">Q", 0) + bytes(32)
    computed = checkpoint_checksum(
        run_id="r",
        step=1,
        content_type="",
        state=b"",
        metadata=dict(reversed(by_bytes)),
        messages=MessageChain(),
        tools=ToolChain(),
    )
    assert computed == hashlib.sha256(preimage).hexdigest()


def test_a_loaded_checkpoint_is_verified_on_the_client_too() -> None:
    from checkpointd import v1
    from checkpointd.store import _checkpoint

    result = v1.ToolResult(call_id="step-1/t/0", tool_name="t", step=1, output=b"1", seq=1)
    messages = [v1.Message(role="user", content=b'{"content":"hi"}')]
    checksum = checkpoint_checksum(
        run_id="r",
        step=1,
        content_type="application/json",
        state=b'{"a":1}',
        metadata={"k": "v"},
        messages=MessageChain().extend((m.role, m.content) for m in messages),
        tools=ToolChain().push_result("step-1/t/0", "t", 1, b"1", False),
    )
    loaded = v1.Checkpoint(
        run_id="r",
        step=1,
        content_type="application/json",
        state=b'{"a":1}',
        messages=messages,
        metadata={"k": "v"},
        checksum=checksum,
        message_count=1,
        tool_count=1,
    )
    intact = _checkpoint(loaded, [result], [])
    assert intact.is_valid and intact.state == {"a": 1}
    assert intact.messages == [{"role": "user", "content": "hi"}]
    assert intact.tool_results == [
        {"call_id": "step-1/t/0", "tool_name": "t", "step": 1, "output": 1, "is_error": False}
    ]
    loaded.state = b'{"a":2}'
    assert not _checkpoint(loaded, [result], []).is_valid
    loaded.state = b'{"a":1}'
    assert not _checkpoint(
        loaded, [v1.ToolResult(call_id="step-1/t/0", tool_name="t", step=1, output=b"2", seq=1)], []
    ).is_valid
