#!/usr/bin/env python3
"""Writes langgraph_v1.json: test vectors for the LangGraph mapping (docs/langgraph-mapping.md),
computed here independently of any saver.

Every saver of the mapping (Python's CheckpointdSaver, LangGraph.js's next) must reproduce each
`expected` value: run ids of (thread, namespace) pairs, journal call ids of pending writes and of
exactly-once tool calls, the byte framing of a pending write and of a tool result, and which
metadata entries become filterable map entries.
Run: python3 tests/vectors/generate_langgraph.py > tests/vectors/langgraph_v1.json
"""
import hashlib
import json
import struct
from urllib.parse import quote

MAX_ID_BYTES = 256
MAX_FILTER_JSON = 16 * 1024


def pct(text):
    """Percent-encoding of UTF-8 keeping only RFC 3986's unreserved characters
    (A-Z a-z 0-9 - . _ ~), upper-case hex."""
    return quote(text, safe="")


def thread_prefix(thread_id):
    return f"lg:{pct(thread_id)}:"


def run_id(thread_id, ns):
    prefix = thread_prefix(thread_id)
    encoded = pct(ns)
    if len(prefix) + len(encoded) > MAX_ID_BYTES:
        encoded = "!" + hashlib.sha256(ns.encode()).hexdigest()[:40]
    return prefix + encoded


def write_call_id(checkpoint_id, task_id, idx, version=""):
    suffix = f"/{version}" if version else ""
    call = f"{checkpoint_id}/{task_id}/{idx}{suffix}"
    if len(call.encode()) > MAX_ID_BYTES:
        task = "#" + hashlib.sha256(task_id.encode()).hexdigest()[:32]
        call = f"{checkpoint_id}/{task}/{idx}{suffix}"
    return call


def bounded_tool_id(call_id):
    if len(call_id.encode()) <= MAX_ID_BYTES:
        return call_id
    return "lg.tool/h/" + hashlib.sha256(call_id.encode()).hexdigest()


def tool_call_id(kind, *parts):
    return bounded_tool_id("lg.tool/" + kind + "/" + "/".join(parts))


def frame(header, payload):
    head = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack(">I", len(head)) + head + payload


def filterable(key, value):
    """The metadata map entry of one LangGraph metadata entry, or None when it stays in the
    envelope (not exactly representable in JSON, too large, or a key the map cannot hold)."""
    name = "m." + key
    if len(name.encode()) > 256 or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        return None
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    if len(text) > MAX_FILTER_JSON or json.loads(text) != value:
        return None
    return [name, text]


def main():
    long_ns = "graph:" + "n" * 300
    runs = [
        {"thread_id": "t-1", "checkpoint_ns": "", "expected": run_id("t-1", "")},
        {"thread_id": "a:b%c", "checkpoint_ns": "child:1|grand:2", "expected": run_id("a:b%c", "child:1|grand:2")},
        {"thread_id": "über thread", "checkpoint_ns": "ns/é", "expected": run_id("über thread", "ns/é")},
        {"thread_id": "t-long", "checkpoint_ns": long_ns, "expected": run_id("t-long", long_ns)},
        # JavaScript's encodeURIComponent keeps !'()* unescaped; the mapping escapes them.
        {"thread_id": "it's (a)*!", "checkpoint_ns": "~ok-._", "expected": run_id("it's (a)*!", "~ok-._")},
    ]
    cid = "1f0a2b3c-4d5e-6f70-8000-000000000001"
    writes = [
        {"checkpoint_id": cid, "task_id": "task-a", "idx": 0, "version": "",
         "expected": write_call_id(cid, "task-a", 0)},
        {"checkpoint_id": cid, "task_id": "task-a", "idx": -1, "version": "0123456789abcdef0123456789abcdef",
         "expected": write_call_id(cid, "task-a", -1, "0123456789abcdef0123456789abcdef")},
        {"checkpoint_id": cid, "task_id": "t" * 300, "idx": 2, "version": "",
         "expected": write_call_id(cid, "t" * 300, 2)},
    ]
    tools = [
        {"kind": "c", "parts": ["agent:1", "send_email", "call_7"],
         "expected": tool_call_id("c", pct("agent:1"), pct("send_email"), pct("call_7"))},
        {"kind": "n", "parts": ["", "3", "~__pregel_pull, deploy", "deploy", "0"],
         "expected": tool_call_id("n", pct(""), "3", pct("~__pregel_pull, deploy"), pct("deploy"), "0")},
        {"kind": "k", "parts": ["", "charge", "order/42"],
         "expected": tool_call_id("k", pct(""), pct("charge"), pct("order/42"))},
        {"kind": "c", "parts": ["x" * 300, "t", "id"],
         "expected": tool_call_id("c", pct("x" * 300), pct("t"), pct("id"))},
    ]
    framing = [
        {"what": "pending write", "task_id": "task-a", "task_path": "~__pregel_pull, agent", "idx": 0,
         "type": "msgpack", "payload_hex": "81a178c0",
         "expected_hex": frame({"task": "task-a", "path": "~__pregel_pull, agent", "idx": 0, "type": "msgpack"},
                               bytes.fromhex("81a178c0")).hex()},
        {"what": "tool result", "type": "json", "payload_hex": "7b7d",
         "expected_hex": frame({"v": 1, "type": "json"}, bytes.fromhex("7b7d")).hex()},
    ]
    metadata = [
        {"key": "source", "value": "loop", "expected": filterable("source", "loop")},
        {"key": "step", "value": 3, "expected": filterable("step", 3)},
        {"key": "writes", "value": {"b": [1, 2.5, None], "a": "é"}, "expected": filterable("writes", {"b": [1, 2.5, None], "a": "é"})},
        {"key": "big", "value": "x" * (MAX_FILTER_JSON + 1), "expected": None},
        {"key": "bad\u0001key", "value": 1, "expected": None},
    ]
    doc = {
        "version": 1,
        "spec": "docs/langgraph-mapping.md",
        "run_ids": runs,
        "write_call_ids": writes,
        "tool_call_ids": tools,
        "framing": framing,
        "metadata": metadata,
    }
    print(json.dumps(doc, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
