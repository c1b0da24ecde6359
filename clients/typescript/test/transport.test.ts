/**
 * The transport's unary path on its own terms: deadlines, cancellation, refused and dropped
 * connections, message limits both ways, and server-streaming calls sharing its connection.
 * Stub HTTP/2 servers stand in where a real server cannot be made to misbehave.
 */

import assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, test } from "node:test";

import { create, toBinary } from "@bufbuild/protobuf";

import {
  Code,
  CheckpointdError,
  GetRunResponseSchema,
  RunHeadSchema,
  createCheckpointClient,
  type CheckpointClient,
} from "../src/index.js";
import { withChecksum } from "./roundtrip.js";
import { startServer, type TestServer } from "./server.js";

function refusedWith(code: Code, reason?: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof CheckpointdError, `not a CheckpointdError: ${String(error)}`);
    assert.equal(error.code, code, `${error.message}`);
    if (reason !== undefined) assert.equal(error.reason, reason);
    return true;
  };
}

/** An HTTP/2 server on a free port whose streams are handled by `onStream`. */
async function stubServer(
  onStream: (stream: http2.ServerHttp2Stream, session: http2.ServerHttp2Session) => void,
): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  server.on("stream", (stream) => onStream(stream, stream.session as http2.ServerHttp2Session));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port bound");
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers a unary call the way a gRPC server does: headers, one envelope, a status trailer. */
function answerGetRun(stream: http2.ServerHttp2Stream, runId: string): void {
  const payload = toBinary(GetRunResponseSchema, create(GetRunResponseSchema, { run: create(RunHeadSchema, { runId }) }));
  const frame = Buffer.alloc(5 + payload.byteLength);
  frame.writeUInt32BE(payload.byteLength, 1);
  frame.set(payload, 5);
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  stream.end(frame);
}

describe("against a server that never answers", () => {
  let stub: Awaited<ReturnType<typeof stubServer>>;
  before(async () => {
    stub = await stubServer((stream) => stream.on("data", () => undefined));
  });
  after(async () => stub.close());

  test("a call past its deadline fails with DEADLINE_EXCEEDED", async () => {
    const client = createCheckpointClient({ baseUrl: stub.baseUrl, timeoutMs: 200 });
    const started = Date.now();
    await assert.rejects(client.getRun({ runId: "r" }), refusedWith(Code.DeadlineExceeded));
    assert.ok(Date.now() - started < 5_000, "the deadline was not kept");
  });

  test("with an interceptor of the caller's, the call goes through it and its deadline holds", async () => {
    const seen: string[] = [];
    const client = createCheckpointClient({
      baseUrl: stub.baseUrl,
      timeoutMs: 200,
      token: "t0ken",
      interceptors: [(next) => (request) => {
        seen.push(`${request.method.name} ${request.header.get("authorization") ?? "no credential"}`);
        return next(request);
      }],
    });
    await assert.rejects(client.getRun({ runId: "r" }), refusedWith(Code.DeadlineExceeded));
    assert.deepEqual(seen, ["GetRun Bearer t0ken"]);
  });

  test("an aborted call fails with CANCELED", async () => {
    const client = createCheckpointClient({ baseUrl: stub.baseUrl });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(client.getRun({ runId: "r" }, { signal: controller.signal }), refusedWith(Code.Canceled));
  });
});

test("a refused connection fails with UNAVAILABLE", async () => {
  const stub = await stubServer(() => undefined);
  const baseUrl = stub.baseUrl;
  await stub.close();
  const client = createCheckpointClient({ baseUrl, timeoutMs: 2_000 });
  await assert.rejects(client.getRun({ runId: "r" }), refusedWith(Code.Unavailable));
});

test("a dropped connection fails the call in flight, and the next call reconnects", async () => {
  let streams = 0;
  const stub = await stubServer((stream, session) => {
    streams += 1;
    if (streams === 1) session.destroy();
    else answerGetRun(stream, "after-reconnect");
  });
  try {
    const client = createCheckpointClient({ baseUrl: stub.baseUrl, timeoutMs: 5_000 });
    await assert.rejects(client.getRun({ runId: "r" }), CheckpointdError);
    const answer = await client.getRun({ runId: "r" });
    assert.equal(answer.run?.runId, "after-reconnect");
  } finally {
    await stub.close();
  }
});

describe("against a real server", () => {
  let server: TestServer;
  let client: CheckpointClient;
  before(async () => {
    server = await startServer();
    client = createCheckpointClient({ baseUrl: server.baseUrl, tenant: "ts-transport" });
    const state = new Uint8Array(64 * 1024).fill(0x61);
    for (const step of [1n, 2n]) {
      await client.save(
        withChecksum({ runId: "transport", step, contentType: "text/plain", state, metadata: {} }, []),
      );
    }
  });
  after(async () => server?.stop());

  test("an answer larger than readMaxBytes fails with RESOURCE_EXHAUSTED", async () => {
    const small = createCheckpointClient({ baseUrl: server.baseUrl, tenant: "ts-transport", readMaxBytes: 1024 });
    await assert.rejects(small.loadLatest({ runId: "transport" }), refusedWith(Code.ResourceExhausted));
    // The same connection's next small call is unaffected.
    assert.equal((await small.getRun({ runId: "transport" })).run?.latestStep, 2n);
  });

  test("a request larger than writeMaxBytes fails with RESOURCE_EXHAUSTED before it is sent", async () => {
    const small = createCheckpointClient({ baseUrl: server.baseUrl, tenant: "ts-transport", writeMaxBytes: 1024 });
    const state = new Uint8Array(4096);
    await assert.rejects(
      small.save(withChecksum({ runId: "too-big", step: 1n, contentType: "text/plain", state, metadata: {} }, [])),
      refusedWith(Code.ResourceExhausted),
    );
    await assert.rejects(client.getRun({ runId: "too-big" }), refusedWith(Code.NotFound, "RUN_NOT_FOUND"));
  });

  test("a server-streaming call runs beside unary calls on the same client", async () => {
    const verdicts = [];
    for await (const answer of client.validateTenant({})) verdicts.push(answer);
    assert.equal(verdicts.length, 2);
    assert.ok(verdicts.every((answer) => answer.runId === "transport"));
    assert.equal((await client.getRun({ runId: "transport" })).run?.latestStep, 2n);
  });

  test("concurrent unary calls share the connection and all complete", async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => client.getRun({ runId: "transport" })));
    assert.ok(answers.every((answer) => answer.run?.latestStep === 2n));
  });
});
