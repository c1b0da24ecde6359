#!/usr/bin/env python3
"""Writes checksum_v1.json: checksum v1 test vectors, computed independently of the Rust code.

The framing is the one documented in proto/checkpoint/v1/checkpoint.proto. Any client that
computes checksums or idempotency keys (in any language) should reproduce every `expected` value
here. A tool entry with "kind": "intent" is a tool intent; every other entry is a tool result.
Run: python3 tests/vectors/generate.py > tests/vectors/checksum_v1.json
"""
import hashlib
import json
import struct

ZERO = bytes(32)


def u64(x):
    return struct.pack(">Q", x)


def lp(b):
    return u64(len(b)) + b


def h(b):
    return hashlib.sha256(b).digest()


def message_chain(messages):
    d = ZERO
    for m in messages:
        d = h(d + h(lp(m["role"].encode()) + lp(m["content"])))
    return d


def tool_chain(tools):
    t = ZERO
    for r in tools:
        if r.get("kind") == "intent":
            leaf = h(bytes([1]) + lp(r["call_id"].encode()) + lp(r["tool_name"].encode())
                     + u64(r["step"]))
        else:
            leaf = h(lp(r["call_id"].encode()) + lp(r["tool_name"].encode()) + u64(r["step"])
                     + lp(r["output"]) + bytes([1 if r["is_error"] else 0]))
        t = h(t + leaf)
    return t


def idempotency_key(tenant, run_id, call_id):
    return h(lp(b"checkpointd.idempotency.v1") + lp(tenant.encode()) + lp(run_id.encode())
             + lp(call_id.encode())).hex()


def checksum(v):
    out = lp(b"checkpointd.checksum.v1") + lp(v["run_id"].encode()) + u64(v["step"])
    out += lp(v["content_type"].encode()) + lp(v["state"])
    meta = sorted(v["metadata"].items(), key=lambda kv: kv[0].encode())
    out += u64(len(meta))
    for k, val in meta:
        out += lp(k.encode()) + lp(val.encode())
    out += u64(len(v["messages"])) + message_chain(v["messages"])
    out += u64(len(v["tools"])) + tool_chain(v["tools"])
    return h(out).hex()


CASES = [
    {"name": "empty", "run_id": "r", "step": 0, "content_type": "", "state": b"",
     "metadata": {}, "messages": [], "tools": []},
    {"name": "state_only", "run_id": "run-1", "step": 3, "content_type": "application/json",
     "state": b'{"counter":3}', "metadata": {}, "messages": [], "tools": []},
    {"name": "messages_and_metadata", "run_id": "run-1", "step": 5,
     "content_type": "application/json", "state": b'{"k":"v"}',
     "metadata": {"zeta": "last", "agent": "demo", "\u00e9t\u00e9": "utf8"},
     "messages": [{"role": "user", "content": b"hello"},
                  {"role": "assistant", "content": b"hi there"},
                  {"role": "tool", "content": b"\x00\x01\x02"}],
     "tools": []},
    {"name": "with_tools", "run_id": "agent/7", "step": 42, "content_type": "application/octet-stream",
     "state": bytes(range(256)), "metadata": {"a": ""},
     "messages": [{"role": "user", "content": b"send the report"}],
     "tools": [{"call_id": "step-41/send_email/0", "tool_name": "send_email", "step": 41,
                "output": b'{"sent":true}', "is_error": False},
               {"call_id": "step-42/deploy/0", "tool_name": "deploy", "step": 42,
                "output": b"permission denied", "is_error": True}]},
    {"name": "intent_then_result", "run_id": "agent/7", "step": 5,
     "content_type": "application/json", "state": b'{"sent":1}', "metadata": {},
     "messages": [],
     "tools": [{"kind": "intent", "call_id": "step-5/send_email/0", "tool_name": "send_email",
                "step": 5},
               {"call_id": "step-5/send_email/0", "tool_name": "send_email", "step": 5,
                "output": b'{"sent":true}', "is_error": False}]},
    {"name": "intent_in_doubt", "run_id": "agent/7", "step": 6,
     "content_type": "application/json", "state": b"{}", "metadata": {},
     "messages": [],
     "tools": [{"call_id": "step-4/read/0", "tool_name": "read", "step": 4,
                "output": b"", "is_error": False},
               {"kind": "intent", "call_id": "step-6/deploy/0", "tool_name": "deploy",
                "step": 6}]},
    {"name": "large_step", "run_id": "x", "step": 2**63 - 1, "content_type": "text/plain",
     "state": b"s" * 1000, "metadata": {}, "messages": [{"role": "", "content": b""}], "tools": []},
    # U+FF61 is EF BD A1 in UTF-8 and FF61 in UTF-16; U+1F600 is F0 9F 98 80 in UTF-8 and the
    # surrogates D83D DE00 in UTF-16. Sorted by UTF-8 bytes (the rule) U+FF61 comes first;
    # a port that sorts by UTF-16 code units (Java, JavaScript, C#) puts U+1F600 first and
    # gets another checksum.
    {"name": "metadata_keys_sort_by_utf8_bytes_not_utf16_units", "run_id": "run-1", "step": 1,
     "content_type": "application/json", "state": b"{}",
     "metadata": {"\U0001F600": "grinning", "\uff61": "halfwidth stop", "z": "ascii"},
     "messages": [], "tools": []},
    {"name": "intent_only", "run_id": "run-1", "step": 2, "content_type": "application/json",
     "state": b"{}", "metadata": {}, "messages": [],
     "tools": [{"kind": "intent", "call_id": "step-2/send_email/0", "tool_name": "send_email",
                "step": 2}]},
    {"name": "empty_state_with_messages", "run_id": "run-1", "step": 0, "content_type": "",
     "state": b"", "metadata": {}, "messages": [{"role": "user", "content": b"hello"}],
     "tools": []},
]


IDEMPOTENCY_CASES = [
    ("default", "run-1", "step-5/send_email/0"),
    ("acme", "agent/7", "step-41/send_email/0"),
    ("", "r", "c"),
    ("t\u00e9", "run", "step-0/deploy/12"),
]


def encode_tool(r):
    if r.get("kind") == "intent":
        return {"kind": "intent", "call_id": r["call_id"], "tool_name": r["tool_name"],
                "step": r["step"]}
    return {"call_id": r["call_id"], "tool_name": r["tool_name"], "step": r["step"],
            "output_hex": r["output"].hex(), "is_error": r["is_error"]}


def encode(v):
    return {
        "name": v["name"], "run_id": v["run_id"], "step": v["step"],
        "content_type": v["content_type"], "state_hex": v["state"].hex(),
        "metadata": v["metadata"],
        "messages": [{"role": m["role"], "content_hex": m["content"].hex()} for m in v["messages"]],
        "tools": [encode_tool(r) for r in v["tools"]],
        "message_chain_hex": message_chain(v["messages"]).hex(),
        "tool_chain_hex": tool_chain(v["tools"]).hex(),
        "expected": checksum(v),
    }


if __name__ == "__main__":
    keys = [{"tenant": t, "run_id": r, "call_id": c, "expected": idempotency_key(t, r, c)}
            for t, r, c in IDEMPOTENCY_CASES]
    print(json.dumps({"version": 1, "vectors": [encode(v) for v in CASES],
                      "idempotency_keys": keys}, indent=2, ensure_ascii=False))
