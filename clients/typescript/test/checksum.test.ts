/** Checksum v1 and idempotency key v1 against every vector in tests/vectors/checksum_v1.json. */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";

import { MessageChain, ToolChain, checkpointChecksum, idempotencyKey, sortedMetadata } from "../src/checksum.js";
import { readVectors } from "./repo.js";

interface ToolVector {
  kind?: "intent" | "result";
  call_id: string;
  tool_name: string;
  step: number;
  output_hex?: string;
  is_error?: boolean;
}

interface ChecksumVector {
  name: string;
  run_id: string;
  /** A string when past 2^53 (see readVectors), so that it reaches the checksum exact. */
  step: number | string;
  content_type: string;
  state_hex: string;
  metadata: Record<string, string>;
  messages: Array<{ role: string; content_hex: string }>;
  tools: ToolVector[];
  message_chain_hex: string;
  tool_chain_hex: string;
  expected: string;
}

interface Vectors {
  version: number;
  vectors: ChecksumVector[];
  idempotency_keys: Array<{ tenant: string; run_id: string; call_id: string; expected: string }>;
}

const VECTORS = readVectors<Vectors>("checksum_v1.json");
const hex = (text: string) => Buffer.from(text, "hex");

function toolChain(entries: ToolVector[]): ToolChain {
  return entries.reduce(
    (chain, entry) =>
      entry.kind === "intent"
        ? chain.pushIntent({ callId: entry.call_id, toolName: entry.tool_name, step: entry.step })
        : chain.pushResult({
            callId: entry.call_id,
            toolName: entry.tool_name,
            step: entry.step,
            output: hex(entry.output_hex ?? ""),
            isError: entry.is_error ?? false,
          }),
    ToolChain.EMPTY,
  );
}

describe("checksum v1 matches every vector", () => {
  for (const vector of VECTORS.vectors) {
    test(vector.name, () => {
      const messages = MessageChain.over(
        vector.messages.map((m) => ({ role: m.role, content: hex(m.content_hex) })),
      );
      const tools = toolChain(vector.tools);
      assert.equal(messages.hex, vector.message_chain_hex);
      assert.equal(tools.hex, vector.tool_chain_hex);
      assert.equal(messages.length, vector.messages.length);
      assert.equal(tools.length, vector.tools.length);
      const checksum = checkpointChecksum(
        {
          runId: vector.run_id,
          step: BigInt(vector.step),
          contentType: vector.content_type,
          state: hex(vector.state_hex),
          metadata: vector.metadata,
        },
        messages,
        tools,
      );
      assert.equal(checksum, vector.expected);
    });
  }
});

describe("idempotency key v1 matches every vector", () => {
  for (const vector of VECTORS.idempotency_keys) {
    test(`${vector.tenant}/${vector.run_id}/${vector.call_id}`, () => {
      assert.equal(idempotencyKey(vector.tenant, vector.run_id, vector.call_id), vector.expected);
    });
  }
});

test("the vectors cover results, intents, a step past 2^53 and idempotency keys", () => {
  const kinds = new Set(VECTORS.vectors.flatMap((v) => v.tools.map((t) => t.kind ?? "result")));
  assert.deepEqual([...kinds].sort(), ["intent", "result"]);
  assert.ok(VECTORS.vectors.some((v) => BigInt(v.step) > BigInt(Number.MAX_SAFE_INTEGER)));
  assert.ok(VECTORS.idempotency_keys.length >= 1);
});

test("metadata keys sort by UTF-8 bytes, not by UTF-16 code units", () => {
  // U+FF61 is EF BD A1 in UTF-8 and U+1F600 is F0 9F 98 80, so U+FF61 comes first by bytes;
  // JavaScript's own order (UTF-16 units: FF61 against the surrogate D83D) puts U+1F600 first.
  const keys = ["\u{1F600}", "\uFF61", "z"];
  assert.deepEqual([...keys].sort(), ["z", "\u{1F600}", "\uFF61"]);
  assert.deepEqual(
    sortedMetadata(Object.fromEntries(keys.map((k) => [k, ""]))).map(([k]) => k.toString("utf8")),
    ["z", "\uFF61", "\u{1F600}"],
  );
  const u64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(n));
    return b;
  };
  const lp = (b: Buffer) => Buffer.concat([u64(b.length), b]);
  const byBytes: Array<[string, string]> = [["\uFF61", "a"], ["\u{1F600}", "b"]];
  const preimage = Buffer.concat([
    lp(Buffer.from("checkpointd.checksum.v1")),
    lp(Buffer.from("r")),
    u64(1),
    lp(Buffer.alloc(0)),
    lp(Buffer.alloc(0)),
    u64(2),
    ...byBytes.flatMap(([k, v]) => [lp(Buffer.from(k)), lp(Buffer.from(v))]),
    u64(0),
    Buffer.alloc(32),
    u64(0),
    Buffer.alloc(32),
  ]);
  const reversed = new Map([...byBytes].reverse());
  assert.equal(
    checkpointChecksum({ runId: "r", step: 1, contentType: "", state: "", metadata: reversed }),
    createHash("sha256").update(preimage).digest("hex"),
  );
});

test("a step or count outside u64 is refused, not wrapped", () => {
  const content = { runId: "r", contentType: "", state: "" };
  assert.throws(() => checkpointChecksum({ ...content, step: -1 }), RangeError);
  assert.throws(() => checkpointChecksum({ ...content, step: 1n << 64n }), RangeError);
  assert.throws(() => checkpointChecksum({ ...content, step: 2 ** 60 }), RangeError);
  assert.doesNotThrow(() => checkpointChecksum({ ...content, step: (1n << 64n) - 1n }));
});
