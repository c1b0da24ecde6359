/**
 * TLS and mTLS against a real `checkpointd serve --tls-cert/--tls-key [--tls-client-ca]`, with
 * certificates made by openssl for the test: Save and LoadLatest succeed with the CA (as a path
 * or as bytes), and fail with a clear UNAVAILABLE error without it or without a client
 * certificate when the server asks for one.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import {
  Code,
  CheckpointdError,
  createCheckpointClient,
  type CheckpointClient,
  type CheckpointdTlsOptions,
} from "../src/index.js";
import { makeCerts, type TestCerts } from "./certs.js";
import { loadVerified, withChecksum } from "./roundtrip.js";
import { startServer, type TestServer } from "./server.js";

const utf8 = (text: string) => new TextEncoder().encode(text);

async function roundTrip(client: CheckpointClient, runId: string): Promise<void> {
  const messages = [{ role: "user", content: utf8('{"content":"over tls"}') }];
  const content = { runId, step: 1n, contentType: "application/json", state: utf8('{"tls":true}'), metadata: {} };
  const request = withChecksum(content, messages);
  assert.equal((await client.save(request)).checksum, request.checksum);
  await loadVerified(client, runId, request.checksum);
}

/** The call fails UNAVAILABLE with a message naming the certificate problem. */
async function refusedByTls(call: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof CheckpointdError, `not a CheckpointdError: ${String(error)}`);
    assert.equal(error.code, Code.Unavailable, error.message);
    assert.match(error.message, pattern);
    return true;
  });
}

let certs: TestCerts;

before(() => {
  certs = makeCerts();
});

after(() => {
  certs?.remove();
});

describe("TLS", () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({
      args: ["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey],
      tls: { caCert: certs.caCert },
    });
  });

  after(async () => {
    await server?.stop();
  });

  test("Save and LoadLatest succeed with the CA as a path", async () => {
    assert.ok(server.baseUrl.startsWith("https://"));
    await roundTrip(createCheckpointClient({ baseUrl: server.baseUrl, tls: { caCert: certs.caCert } }), "tls-path");
  });

  test("Save and LoadLatest succeed with the CA as bytes and as PEM text", async () => {
    const pem = readFileSync(certs.caCert);
    await roundTrip(createCheckpointClient({ baseUrl: server.baseUrl, tls: { caCert: new Uint8Array(pem) } }), "tls-bytes");
    await roundTrip(createCheckpointClient({ baseUrl: server.baseUrl, tls: { caCert: pem.toString("utf8") } }), "tls-text");
  });

  test("a client without the CA fails with a clear certificate error", async () => {
    const client = createCheckpointClient({ baseUrl: server.baseUrl, timeoutMs: 5_000 });
    await refusedByTls(client.loadLatest({ runId: "tls-path" }), /TLS handshake with https:.*certificate.*pass tls\.caCert/);
  });

  test("a client trusting another CA fails with a clear certificate error", async () => {
    const client = createCheckpointClient({ baseUrl: server.baseUrl, timeoutMs: 5_000, tls: { caCert: certs.otherCaCert } });
    await refusedByTls(client.loadLatest({ runId: "tls-path" }), /TLS handshake with https:.*pass tls\.caCert/);
  });

  test("a plaintext client cannot talk to the TLS port", async () => {
    const client = createCheckpointClient({ baseUrl: server.baseUrl.replace("https://", "http://"), timeoutMs: 5_000 });
    await assert.rejects(client.loadLatest({ runId: "tls-path" }), CheckpointdError);
  });
});

describe("mTLS", () => {
  let server: TestServer;
  let mtls: CheckpointdTlsOptions;

  before(async () => {
    mtls = { caCert: certs.caCert, clientCert: certs.clientCert, clientKey: certs.clientKey };
    server = await startServer({
      args: ["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--tls-client-ca", certs.caCert],
      tls: mtls,
    });
  });

  after(async () => {
    await server?.stop();
  });

  test("Save and LoadLatest succeed with the client certificate and key", async () => {
    await roundTrip(createCheckpointClient({ baseUrl: server.baseUrl, tls: mtls }), "mtls");
  });

  test("a client without a certificate is refused", async () => {
    const client = createCheckpointClient({ baseUrl: server.baseUrl, timeoutMs: 5_000, tls: { caCert: certs.caCert } });
    await refusedByTls(client.loadLatest({ runId: "mtls" }), /certificate required.*pass tls\.clientCert and tls\.clientKey/s);
  });
});

describe("TLS options", () => {
  test("need an https:// base URL", () => {
    assert.throws(
      () => createCheckpointClient({ baseUrl: "http://127.0.0.1:50051", tls: { caCert: certs.caCert } }),
      /https:\/\//,
    );
  });

  test("take a client certificate only with its key", () => {
    assert.throws(
      () => createCheckpointClient({ baseUrl: "https://127.0.0.1:50051", tls: { clientCert: certs.clientCert } }),
      /clientCert and clientKey/,
    );
  });

  test("name a CA file that cannot be read", () => {
    assert.throws(
      () => createCheckpointClient({ baseUrl: "https://127.0.0.1:50051", tls: { caCert: "/nonexistent/ca.pem" } }),
      /cannot read the CA certificate at \/nonexistent\/ca.pem/,
    );
  });
});
