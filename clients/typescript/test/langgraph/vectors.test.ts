/**
 * The LangGraph mapping's byte-level rules against every vector in tests/vectors/langgraph_v1.json
 * (written by tests/vectors/generate_langgraph.py from docs/langgraph-mapping.md alone): run ids,
 * percent-encoding (including `!'()*`), hashed long ids, call ids, framings, the metadata map.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { canonicalJson, encodeToolResult, encodeWrite, filterable, parseRunId, runId, toolCallId, writeCallId, type ToolCallKind } from "../../src/langgraph/index.js";
import { readVectors } from "../repo.js";

interface Vectors {
  version: number;
  run_ids: Array<{ thread_id: string; checkpoint_ns: string; expected: string }>;
  write_call_ids: Array<{ checkpoint_id: string; task_id: string; idx: number; version: string; expected: string }>;
  tool_call_ids: Array<{ kind: ToolCallKind; parts: string[]; expected: string }>;
  framing: Array<{ what: string; task_id?: string; task_path?: string; idx?: number; type: string; payload_hex: string; expected_hex: string }>;
  metadata: Array<{ key: string; value: unknown; expected: [string, string] | null }>;
}

const VECTORS = readVectors<Vectors>("langgraph_v1.json");
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const fromHex = (text: string) => new Uint8Array(Buffer.from(text, "hex"));

describe("langgraph_v1 vectors", () => {
  test("the file is version 1 and every section has vectors", () => {
    assert.equal(VECTORS.version, 1);
    for (const section of [VECTORS.run_ids, VECTORS.write_call_ids, VECTORS.tool_call_ids, VECTORS.framing, VECTORS.metadata]) {
      assert.ok(section.length > 0);
    }
  });

  test("run ids", () => {
    for (const v of VECTORS.run_ids) {
      const got = runId(v.thread_id, v.checkpoint_ns);
      assert.equal(got, v.expected, `run id of ${JSON.stringify([v.thread_id, v.checkpoint_ns])}`);
      const parsed = parseRunId(got);
      assert.equal(parsed?.threadId, v.thread_id);
      // A hashed namespace cannot be read back from the id: the checkpoint carries it.
      assert.equal(parsed?.ns, got.includes(":!") ? undefined : v.checkpoint_ns);
    }
  });

  test("pending write call ids", () => {
    for (const v of VECTORS.write_call_ids) {
      assert.equal(writeCallId(v.checkpoint_id, v.task_id, v.idx, v.version), v.expected);
    }
  });

  test("exactly-once tool call ids", () => {
    for (const v of VECTORS.tool_call_ids) {
      assert.equal(toolCallId(v.kind, v.parts), v.expected, `${v.kind} ${JSON.stringify(v.parts).slice(0, 80)}`);
    }
  });

  test("framings of a pending write and of a tool result", () => {
    for (const v of VECTORS.framing) {
      const payload = fromHex(v.payload_hex);
      const got = v.what === "pending write"
        ? encodeWrite(v.task_id as string, v.task_path as string, v.idx as number, v.type, payload)
        : encodeToolResult(v.type, payload);
      assert.equal(hex(got), v.expected_hex, v.what);
    }
  });

  test("which metadata entries become filterable map entries", () => {
    for (const v of VECTORS.metadata) {
      assert.deepEqual(filterable(v.key, v.value) ?? null, v.expected, `metadata ${JSON.stringify(v.key)}`);
    }
  });

  test("canonical JSON is Python's json.dumps(sort_keys, compact separators, ensure_ascii), byte for byte", () => {
    // Expected values printed by CPython 3 json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True).
    const cases: Array<[unknown, string | undefined]> = [
      [{ "\u{1F600}": 1, "\uFF61": 2, "a\u007f": [0.1, 1e-5, 1.5e16, -2.5, true, null] },
        '{"a\\u007f":[0.1,1e-05,1.5e+16,-2.5,true,null],"\\uff61":2,"\\ud83d\\ude00":1}'],
      ['tab\tquote"back\\\\ é 😀', '"tab\\tquote\\"back\\\\\\\\ \\u00e9 \\ud83d\\ude00"'],
      [123456789012, "123456789012"],
      [1e300, "1e+300"],
      // Not exactly representable in JSON: stays in the envelope.
      [Number.NaN, undefined],
      [-0, undefined],
      [{ a: undefined }, undefined],
      [new Date(0), undefined],
      [10n, undefined],
    ];
    for (const [value, expected] of cases) assert.equal(canonicalJson(value), expected, String(value));
  });
});
