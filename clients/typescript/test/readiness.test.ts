/**
 * Server addresses and the wait for a server still starting, against a real `checkpointd serve`:
 * `host:port` works wherever a base URL is taken (the form the Python client takes), anything
 * else is refused naming the option; a client made before its server starts (the server comes
 * up two seconds later on a port chosen beforehand) gets its answer, and with no server at all a
 * call fails after the 5 s wait (or its shorter deadline) with UNAVAILABLE naming the address.
 */

import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";

import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";

import {
  CheckpointStore,
  CheckpointdError,
  Code,
  DEFAULT_CONNECT_TIMEOUT_MS,
  createCheckpointClient,
  resolveBaseUrl,
} from "../src/index.js";
import { CheckpointdSaver } from "../src/langgraph/index.js";
import { parseWorkerArgs } from "../src/worker/args.js";
import { freePort, startServer } from "./server.js";

/** Rejects with the call's error, or fails the test when the call succeeds. */
async function refusal(call: Promise<unknown>): Promise<CheckpointdError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof CheckpointdError, `expected a CheckpointdError, got ${String(error)}`);
    return error;
  }
  assert.fail("the call succeeded");
}

describe("server addresses", () => {
  test("host:port is plaintext, or TLS with TLS options; URLs pass as they are", () => {
    assert.equal(resolveBaseUrl("127.0.0.1:50051", false), "http://127.0.0.1:50051");
    assert.equal(resolveBaseUrl("localhost:50051", false), "http://localhost:50051");
    assert.equal(resolveBaseUrl("checkpointd.internal:50443", true), "https://checkpointd.internal:50443");
    assert.equal(resolveBaseUrl("[::1]:50051", false), "http://[::1]:50051");
    assert.equal(resolveBaseUrl("http://127.0.0.1:50051", false), "http://127.0.0.1:50051");
    assert.equal(resolveBaseUrl("HTTPS://host:1", false), "HTTPS://host:1");
  });

  test("anything else is a TypeError naming the option and what it takes", () => {
    for (const bad of ["", " 127.0.0.1:50051", "ftp://host:21", "http://", "127.0.0.1:port", "http://h:1/?q=1"]) {
      assert.throws(() => resolveBaseUrl(bad, false), (error: unknown) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /baseUrl must be a server address such as http:\/\/127\.0\.0\.1:50051/);
        assert.ok(error.message.includes(JSON.stringify(bad)), error.message);
        return true;
      });
    }
    assert.throws(() => createCheckpointClient({ baseUrl: "ftp://host:21" }), /baseUrl must be/);
    assert.throws(() => new CheckpointdSaver({ baseUrl: "::::" }), /baseUrl must be/);
    assert.throws(() => new CheckpointStore({ baseUrl: "http://" }), /baseUrl must be/);
    assert.throws(() => parseWorkerArgs(["./a.mjs", "--server", "tcp://h:1"], {}), /--server must be/);
  });

  test("the worker's --server host:port is TLS when a TLS option is given, as Python's", () => {
    const parsed = parseWorkerArgs(["./a.mjs", "--server", "h:50443", "--ca-cert", "ca.pem"], {});
    assert.equal(parsed?.client.baseUrl, "https://h:50443");
  });

  test("a client, a store and a saver given host:port reach the server", async () => {
    const server = await startServer();
    try {
      const address = new URL(server.baseUrl).host;
      const client = createCheckpointClient({ baseUrl: address });
      const notFound = await refusal(client.getRun({ runId: "nobody" }));
      assert.equal(notFound.code, Code.NotFound);
      const saver = new CheckpointdSaver({ baseUrl: address });
      const config = { configurable: { thread_id: "host-port", checkpoint_ns: "" } };
      await saver.put(config, emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {});
      assert.ok((await saver.getTuple(config)) !== undefined);
      const store = new CheckpointStore({ baseUrl: address });
      assert.equal((await store.resume("host-port-run")).checkpoint, undefined);
    } finally {
      await server.stop();
    }
  });
});

describe("a server still starting", () => {
  test("the default wait is the Python client's 5 s", () => {
    assert.equal(DEFAULT_CONNECT_TIMEOUT_MS, 5_000);
  });

  test("clients made before the server starts get their answers once it is up", async () => {
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const client = createCheckpointClient({ baseUrl: address });
    const saver = new CheckpointdSaver({ baseUrl: `http://${address}` });
    const store = new CheckpointStore({ baseUrl: address });
    const started = performance.now();
    const calls = Promise.all([
      refusal(client.getRun({ runId: "nobody" })),
      saver.getTuple({ configurable: { thread_id: "early", checkpoint_ns: "" } }),
      store.resume("early-run"),
    ]);
    await sleep(2_000);
    const server = await startServer({ port });
    try {
      const [notFound, tuple, resumed] = await calls;
      assert.equal(notFound.code, Code.NotFound, notFound.message);
      assert.equal(tuple, undefined);
      assert.equal(resumed.checkpoint, undefined);
      assert.ok(performance.now() - started >= 2_000);
    } finally {
      await server.stop();
    }
  });

  test("with no server, a call fails after the 5 s wait with UNAVAILABLE naming the address", async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const client = createCheckpointClient({ baseUrl: address });
    const started = performance.now();
    const error = await refusal(client.getRun({ runId: "nobody" }));
    const waited = performance.now() - started;
    assert.equal(error.code, Code.Unavailable);
    assert.match(error.message, new RegExp(`${address} not reachable within 5s \\(is checkpointd serving there\\?\\)`));
    assert.ok(waited >= 4_500 && waited < 8_000, `waited ${waited} ms`);
  });

  test("a shorter call deadline bounds the wait, the caller's signal ends it; connectTimeoutMs 0 does not wait", async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const client = createCheckpointClient({ baseUrl: address, timeoutMs: 1_000 });
    let started = performance.now();
    const bounded = await refusal(client.getRun({ runId: "nobody" }));
    assert.equal(bounded.code, Code.Unavailable);
    assert.match(bounded.message, /not reachable within 1s/);
    assert.ok(performance.now() - started < 3_000);
    const aborted = new AbortController();
    setTimeout(() => aborted.abort(), 300);
    started = performance.now();
    const cancelled = await refusal(client.getRun({ runId: "nobody" }, { signal: aborted.signal }));
    assert.equal(cancelled.code, Code.Canceled, cancelled.message);
    assert.ok(performance.now() - started < 1_000);
    const impatient = createCheckpointClient({ baseUrl: address, connectTimeoutMs: 0 });
    started = performance.now();
    const refused = await refusal(impatient.getRun({ runId: "nobody" }));
    assert.equal(refused.code, Code.Unavailable);
    assert.ok(performance.now() - started < 1_000);
  });
});
