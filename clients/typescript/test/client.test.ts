/**
 * The client against a real `checkpointd serve` on SQLite and on Postgres: a client checksum is accepted, a
 * loaded checkpoint verifies on the client, a wrong checksum is refused with its code and reason.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Code,
  CheckpointdError,
  ERROR_DOMAIN,
  createCheckpointClient,
  verifyCheckpoint,
  type CheckpointClient,
} from "../src/index.js";
import { loadVerified, withChecksum } from "./roundtrip.js";
import { BACKENDS, startServer, type TestServer } from "./server.js";

const utf8 = (text: string) => new TextEncoder().encode(text);

function saveRequest(runId: string) {
  const messages = [
    { role: "user", content: utf8('{"content":"plan a trip"}') },
    { role: "assistant", content: utf8('{"content":"to where? \u{1F600}"}') },
  ];
  const content = {
    runId,
    step: 3n,
    contentType: "application/json",
    state: utf8('{"counter":3}'),
    // Keys whose UTF-8 order differs from JavaScript's: the server must agree with the client.
    metadata: { "\u{1F600}": "grinning", "\uFF61": "halfwidth stop", agent: "demo" },
  };
  return withChecksum(content, messages);
}

for (const backend of BACKENDS) {
  describe(backend, () => {
    let server: TestServer;
    let client: CheckpointClient;

    before(async () => {
      server = await startServer({ backend });
      client = createCheckpointClient({ baseUrl: server.baseUrl, tenant: "ts-tests" });
    });

    after(async () => {
      await server?.stop();
    });

    test("a checkpoint saved with a client checksum loads back and verifies on the client", async () => {
      const request = saveRequest("ts-roundtrip");
      const saved = await client.save(request);
      assert.equal(saved.checksum, request.checksum);

      const loaded = await loadVerified(client, "ts-roundtrip", request.checksum);
      const checkpoint = loaded.checkpoint;
      assert.equal(checkpoint.step, 3n);
      assert.equal(checkpoint.messages.length, 2);

      checkpoint.state = utf8('{"counter":4}');
      assert.equal(verifyCheckpoint(checkpoint, loaded.toolResults, loaded.toolIntents).valid, false);
    });

    test("a wrong client checksum is refused with INVALID_ARGUMENT and reason CHECKSUM_MISMATCH", async () => {
      const request = { ...saveRequest("ts-wrong-checksum"), checksum: "0".repeat(64) };
      await assert.rejects(client.save(request), (error: unknown) => {
        assert.ok(error instanceof CheckpointdError, `not a CheckpointdError: ${String(error)}`);
        assert.equal(error.code, Code.InvalidArgument);
        assert.equal(error.codeName, "INVALID_ARGUMENT");
        assert.equal(error.reason, "CHECKSUM_MISMATCH");
        assert.equal(error.domain, ERROR_DOMAIN);
        return true;
      });
      await assert.rejects(client.loadLatest({ runId: "ts-wrong-checksum" }), (error: unknown) => {
        assert.ok(error instanceof CheckpointdError);
        assert.equal(error.code, Code.NotFound);
        return true;
      });
    });

    test("the tenant header scopes every call", async () => {
      const other = createCheckpointClient({ baseUrl: server.baseUrl, tenant: "another-tenant" });
      await assert.rejects(other.loadLatest({ runId: "ts-roundtrip" }), (error: unknown) => {
        assert.ok(error instanceof CheckpointdError);
        assert.equal(error.code, Code.NotFound);
        return true;
      });
    });
  });
}
