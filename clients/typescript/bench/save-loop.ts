/**
 * The TypeScript client's turn in `checkpointd-bench --scenarios languages`: Saves with a client
 * checksum and LoadLatests verified on the client, each timed, printed as one JSON line of
 * microseconds. Every language's save loop takes the same flags and does the same work.
 *
 *   node dist-test/bench/save-loop.js --target http://127.0.0.1:50051 --run r1 \
 *     --state-file state.json --iterations 300 --warmup 30
 */

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

import {
  MessageChain,
  ToolChain,
  checkpointChecksum,
  createCheckpointClient,
  verifyCheckpoint,
} from "../src/index.js";

const CONTENT_TYPE = "application/json";

const { values } = parseArgs({
  options: {
    target: { type: "string" },
    run: { type: "string" },
    "state-file": { type: "string" },
    iterations: { type: "string" },
    warmup: { type: "string", default: "0" },
  },
});
const { target, run: runId } = values;
const stateFile = values["state-file"];
if (target === undefined || runId === undefined || stateFile === undefined || values.iterations === undefined) {
  throw new Error("save-loop needs --target, --run, --state-file and --iterations");
}
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);
const state = new Uint8Array(readFileSync(stateFile));
const client = createCheckpointClient({ baseUrl: target });

const saves: number[] = [];
const loads: number[] = [];
const micros = (from: bigint, to: bigint): number => Number((to - from) / 1000n);
for (let step = 1; step <= warmup + iterations; step++) {
  const start = process.hrtime.bigint();
  const content = { runId, step: BigInt(step), contentType: CONTENT_TYPE, state, metadata: {} };
  await client.save({
    ...content,
    checksum: checkpointChecksum(content, MessageChain.EMPTY, ToolChain.EMPTY),
  });
  const saved = process.hrtime.bigint();
  const loaded = await client.loadLatest({ runId });
  const checkpoint = loaded.checkpoint;
  if (checkpoint === undefined || checkpoint.step !== BigInt(step) || !verifyCheckpoint(checkpoint).valid) {
    throw new Error(`LoadLatest of ${runId} did not verify at step ${step}`);
  }
  const done = process.hrtime.bigint();
  if (step > warmup) {
    saves.push(micros(start, saved));
    loads.push(micros(saved, done));
  }
}
console.log(JSON.stringify({ save_us: saves, load_us: loads }));
