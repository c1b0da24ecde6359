"""The saver reproduces the LangGraph mapping's shared test vectors (tests/vectors/langgraph_v1.json,
written by an independent generator), byte for byte: the contract a LangGraph.js saver meets too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkpointd.langgraph import _codec, _naming, _tooljournal

VECTORS = json.loads((Path(__file__).resolve().parents[4] / "tests/vectors/langgraph_v1.json").read_text())


class TaggedSerde:
    """Hands back a fixed (type tag, bytes) so framing is checked apart from any serializer."""

    def __init__(self, type_tag: str, payload: bytes) -> None:
        self.typed = (type_tag, payload)

    def dumps_typed(self, _value: Any) -> tuple[str, bytes]:
        return self.typed


@pytest.mark.parametrize("vector", VECTORS["run_ids"], ids=lambda v: v["expected"][:40])
def test_run_ids(vector: dict[str, Any]) -> None:
    assert _naming.run_id(vector["thread_id"], vector["checkpoint_ns"]) == vector["expected"]
    assert vector["expected"].startswith(_naming.thread_prefix(vector["thread_id"]))


@pytest.mark.parametrize("vector", VECTORS["write_call_ids"], ids=lambda v: v["expected"][-40:])
def test_pending_write_call_ids(vector: dict[str, Any]) -> None:
    got = _naming.write_call_id(vector["checkpoint_id"], vector["task_id"], vector["idx"], vector["version"])
    assert got == vector["expected"]


@pytest.mark.parametrize("vector", VECTORS["tool_call_ids"], ids=lambda v: v["expected"][:40])
def test_exactly_once_tool_call_ids(vector: dict[str, Any]) -> None:
    parts = vector["parts"]
    if vector["kind"] == "c":
        got = _tooljournal.for_tool_call(parts[0], parts[1], parts[2])
    elif vector["kind"] == "n":
        got = _tooljournal.for_index(parts[0], int(parts[1]), parts[2], parts[3], int(parts[4]))
    else:
        got = _tooljournal.for_key(parts[0], parts[1], parts[2])
    assert got == vector["expected"]


def test_framing_of_a_pending_write_and_a_tool_result() -> None:
    write, result = VECTORS["framing"]
    payload = bytes.fromhex(write["payload_hex"])
    encoded = _codec.encode_write(
        write["task_id"], write["task_path"], write["idx"], (write["type"], payload)
    )
    assert encoded.hex() == write["expected_hex"]
    decoded = _codec.decode_write(encoded, "channel", 1)
    assert decoded is not None and decoded.typed == (write["type"], payload)
    serde = TaggedSerde(result["type"], bytes.fromhex(result["payload_hex"]))
    assert _tooljournal.encode_value(serde, None).hex() == result["expected_hex"]


@pytest.mark.parametrize("vector", VECTORS["metadata"], ids=lambda v: v["key"][:20])
def test_which_metadata_entries_the_server_filters_on(vector: dict[str, Any]) -> None:
    mapped, rest = _codec.split_metadata({vector["key"]: vector["value"]})
    if vector["expected"] is None:
        assert mapped == {} and rest == {vector["key"]: vector["value"]}
    else:
        assert mapped == {vector["expected"][0]: vector["expected"][1]} and rest == {}


def test_infinity_is_not_filterable_json() -> None:
    assert _codec.canonical_json(float("inf")) is None
