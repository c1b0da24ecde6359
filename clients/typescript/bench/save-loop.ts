/**
 * The TypeScript client's turn in `checkpointd-bench --scenarios languages`: Saves with a client
 * checksum and LoadLatests verified on the client, each timed, printed as one JSON line of
 * microseconds. Every language's save loop takes the same flags and does the same work.
 *
 *   node dist-test/bench/save-loop.js --target http://127.0.0.1:50051 --run r1 \
 *     --state-file state.json --iterations 300 --warmup 30 [--floor]
 *
 * `--floor` does the same work without the client: the same messages encoded and decoded, the
 * same checksum and verification, each call one request on a bare `node:http2` session. It is
 * what Node itself costs, so the client's own share is the difference.
 */

import { readFileSync } from "node:fs";
import * as http2 from "node:http2";
import { parseArgs } from "node:util";

import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";

import {
  MessageChain,
  ToolChain,
  checkpointChecksum,
  CheckpointService,
  LoadLatestRequestSchema,
  LoadLatestResponseSchema,
  SaveRequestSchema,
  SaveResponseSchema,
  createCheckpointClient,
  verifyCheckpoint,
  type LoadLatestResponse,
  type SaveResponse,
} from "../src/index.js";

const CONTENT_TYPE = "application/json";

const { values } = parseArgs({
  options: {
    target: { type: "string" },
    run: { type: "string" },
    "state-file": { type: "string" },
    iterations: { type: "string" },
    warmup: { type: "string", default: "0" },
    floor: { type: "boolean", default: false },
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

/** One unary call on a bare HTTP/2 session: an envelope out, the answer's envelope decoded. */
function bareCall<O extends DescMessage>(
  session: http2.ClientHttp2Session,
  method: string,
  payload: Uint8Array,
  output: O,
): Promise<MessageShape<O>> {
  const frame = Buffer.alloc(5 + payload.byteLength);
  frame.writeUInt32BE(payload.byteLength, 1);
  frame.set(payload, 5);
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": `/${CheckpointService.typeName}/${method}`,
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("end", () => {
      const body = Buffer.concat(chunks);
      if (body.byteLength < 5) reject(new Error(`${method} answered without a message`));
      else resolve(fromBinary(output, body.subarray(5)));
    });
    stream.end(frame);
  });
}

/** The two calls, through the client or (`--floor`) on a bare session. */
function makeCalls(): {
  save(request: Parameters<ReturnType<typeof createCheckpointClient>["save"]>[0]): Promise<SaveResponse>;
  loadLatest(runId: string): Promise<LoadLatestResponse>;
} {
  if (!values.floor) {
    const client = createCheckpointClient({ baseUrl: target as string });
    return { save: (request) => client.save(request), loadLatest: (runId) => client.loadLatest({ runId }) };
  }
  const session = http2.connect(target as string);
  return {
    save: (request) =>
      bareCall(session, "Save", toBinary(SaveRequestSchema, create(SaveRequestSchema, request)), SaveResponseSchema),
    loadLatest: (runId) =>
      bareCall(
        session,
        "LoadLatest",
        toBinary(LoadLatestRequestSchema, create(LoadLatestRequestSchema, { runId })),
        LoadLatestResponseSchema,
      ),
  };
}
const client = makeCalls();

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
  const loaded = await client.loadLatest(runId);
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
// A bare session keeps the process alive until closed.
process.exit(0);
