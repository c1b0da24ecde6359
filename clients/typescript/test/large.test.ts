/**
 * Message limits: a ~6 MiB state (over gRPC's customary 4 MiB) saves and loads back whole on
 * SQLite and on Postgres, and the load verifies on the client. The server's own limit,
 * `--max-request-bytes`, is 16 MiB by default; the client's read and write limits are 64 MiB.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";

import {
  DEFAULT_READ_MAX_BYTES,
  DEFAULT_WRITE_MAX_BYTES,
  createCheckpointClient,
  type CheckpointClient,
} from "../src/index.js";
import { loadVerified, withChecksum } from "./roundtrip.js";
import { BACKENDS, startServer, type TestServer } from "./server.js";

const STATE_BYTES = 6 * 1024 * 1024 + 123;
/** The server's default --max-request-bytes. */
const SERVER_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

test("the client reads and writes at least what the server accepts", () => {
  assert.ok(DEFAULT_WRITE_MAX_BYTES >= SERVER_MAX_REQUEST_BYTES);
  assert.ok(DEFAULT_READ_MAX_BYTES >= SERVER_MAX_REQUEST_BYTES);
});

for (const backend of BACKENDS) {
  describe(backend, () => {
    let server: TestServer;
    let client: CheckpointClient;

    before(async () => {
      server = await startServer({ backend });
      client = createCheckpointClient({ baseUrl: server.baseUrl, tenant: "ts-large", timeoutMs: 60_000 });
    });

    after(async () => {
      await server?.stop();
    });

    test("a ~6 MiB state saves, loads back whole and verifies on the client", async () => {
      const state = new Uint8Array(randomBytes(STATE_BYTES));
      const messages = [{ role: "user", content: new TextEncoder().encode('{"content":"big"}') }];
      const content = { runId: "ts-large", step: 1n, contentType: "application/octet-stream", state, metadata: {} };
      const request = withChecksum(content, messages);
      assert.equal((await client.save(request)).checksum, request.checksum);

      const { checkpoint } = await loadVerified(client, "ts-large", request.checksum);
      assert.equal(checkpoint.state.length, STATE_BYTES);
      assert.ok(Buffer.from(checkpoint.state).equals(Buffer.from(state)), "the state came back different");
    });
  });
}
