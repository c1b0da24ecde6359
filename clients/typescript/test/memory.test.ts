/**
 * The in-memory backend's own checks, which the server places cannot reach from a test as
 * simply: a wrong client checksum is refused, a damaged journal entry comes back as a corrupt
 * call in doubt that only a human may settle, and a Resume that does not read calls in doubt
 * is refused rather than handed a journal it would misread.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { ApprovalRequired, CheckpointStore, CheckpointdError, MemoryBackend, StepContext, Strategy } from "../src/index.js";
import { Session } from "../src/session.js";
import { recordingLogger } from "./store-db.js";

test("a save whose client checksum does not match its content is refused", async () => {
  const backend = new MemoryBackend();
  const epoch = (await backend.resume({ runId: "sum", capabilities: [] })).epoch;
  await assert.rejects(
    backend.save({ runId: "sum", step: 1n, contentType: "application/json", state: new Uint8Array(), epoch, checksum: "00" }),
    (error: unknown) => error instanceof CheckpointdError && error.reason === "CHECKSUM_MISMATCH",
  );
});

test("a damaged journal entry is a corrupt call in doubt, which always goes to a human", async () => {
  const backend = new MemoryBackend();
  const store = CheckpointStore.inMemory(backend, recordingLogger());
  await store.recordToolIntent("damaged", "step-1/pay/0", "pay", 1);
  await store.recordToolResult("damaged", "step-1/pay/0", "pay", 1, new TextEncoder().encode('"paid"'));
  backend.corruptToolResult("damaged", "step-1/pay/0");
  await assert.rejects(backend.resume({ runId: "damaged" }), /CHECKPOINT_CORRUPT/);

  const logger = recordingLogger();
  const next = CheckpointStore.inMemory(backend, logger);
  const resumed = await next.resume("damaged");
  assert.deepEqual(resumed.corruptCallIds, ["step-1/pay/0"]);
  assert.deepEqual(resumed.inDoubt.map((c) => [c.callId, c.corrupt]), [["step-1/pay/0", true]]);
  assert.ok(logger.lines.some((l) => l.level === "warn" && /corrupt entries/.test(l.message)));
  const session = new Session(next, resumed, null, new Strategy(), undefined, {}, { stepsExecuted: 0, toolsExecuted: 0, toolsReplayed: 0 });
  await assert.rejects(
    new StepContext(session, 1).callSideEffect("pay", () => assert.fail("a corrupt call never re-runs unasked")),
    (error: unknown) => error instanceof ApprovalRequired && error.action === "in_doubt step-1/pay/0",
  );
});
