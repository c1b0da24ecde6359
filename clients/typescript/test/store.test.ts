/**
 * CheckpointStore's rules on the in-memory backend and on a real server (SQLite, Postgres):
 * saves carry the client's checksum and only new messages, a corrupt latest checkpoint is
 * skipped loudly, all corrupt restarts at step 0 loudly, a stale epoch is refused, and the
 * journal's intents come back as calls in doubt with their idempotency key.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { CheckpointdError, idempotencyKey, type StoreBackend } from "../src/index.js";
import { PLACES, openPlace, recordingLogger, type Place } from "./store-db.js";

/** A backend that keeps every Save request's message offset and message count. */
function spying(saves: { offset: bigint; sent: number; checksum: boolean }[]) {
  return (backend: StoreBackend): StoreBackend => ({
    ...backend,
    resume: (request) => backend.resume(request),
    loadLatest: (request) => backend.loadLatest(request),
    loadAtStep: (request) => backend.loadAtStep(request),
    save: (request) => {
      saves.push({ offset: request.messageOffset ?? 0n, sent: request.messages?.length ?? 0, checksum: request.checksum !== undefined });
      return backend.save(request);
    },
  });
}

const history = (count: number) => Array.from({ length: count }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `message ${i}` }));

for (const name of PLACES) {
  describe(`CheckpointStore on ${name}`, () => {
    let place: Place;
    before(async () => {
      place = await openPlace(name);
    });
    after(async () => place.stop());

    test("a save sends only the new messages with the client's checksum, and loads back verified", async () => {
      const saves: { offset: bigint; sent: number; checksum: boolean }[] = [];
      const store = place.store(recordingLogger(), spying(saves));
      await store.save({ runId: "roundtrip", stepNumber: 1, state: { n: 1 }, messages: history(2) });
      const saved = await store.save({ runId: "roundtrip", stepNumber: 2, state: { n: 2 }, messages: history(5), metadata: { k: "v" } });
      assert.deepEqual(saves, [
        { offset: 0n, sent: 2, checksum: true },
        { offset: 2n, sent: 3, checksum: true },
      ]);
      const loaded = await place.store().loadLatest("roundtrip");
      assert.ok(loaded);
      assert.equal(loaded.stepNumber, 2);
      assert.equal(loaded.isValid, true);
      assert.equal(loaded.checksum, saved.checksum);
      assert.deepEqual(loaded.state, { n: 2 });
      assert.deepEqual(loaded.messages, history(5));
      assert.deepEqual(loaded.metadata, { k: "v" });
      await assert.rejects(store.save({ runId: "roundtrip", stepNumber: 3, messages: history(1) }), /append-only/);
    });

    test("a corrupt latest checkpoint is skipped loudly and the one before is restored", async () => {
      const store = place.store(recordingLogger());
      for (const step of [3, 6]) await store.save({ runId: "fallback", stepNumber: step, state: { step }, messages: history(step) });
      place.corruptState("fallback", 6);
      const logger = recordingLogger();
      const resumed = await place.store(logger).resume("fallback");
      assert.equal(resumed.recoveredFromStep, 3);
      assert.deepEqual(resumed.skippedSteps, [6]);
      assert.deepEqual(resumed.checkpoint?.state, { step: 3 });
      assert.deepEqual(resumed.checkpoint?.messages, history(3));
      assert.ok(logger.lines.some((l) => l.level === "warn" && /step\(s\) 6 quarantined and skipped; falling back to step 3/.test(l.message)), JSON.stringify(logger.lines));
      const latest = await place.store(recordingLogger()).loadLatest("fallback");
      assert.equal(latest?.stepNumber, 3);
    });

    test("when every checkpoint is corrupt the run restarts at step 0, said loudly", async () => {
      const store = place.store(recordingLogger());
      for (const step of [1, 2]) await store.save({ runId: "all-bad", stepNumber: step, state: { step } });
      for (const step of [1, 2]) place.corruptState("all-bad", step);
      const loadLogger = recordingLogger();
      assert.equal(await place.store(loadLogger).loadLatest("all-bad"), undefined);
      assert.ok(loadLogger.lines.some((l) => l.level === "error" && /every checkpoint of run all-bad is corrupt/.test(l.message)));
      const logger = recordingLogger();
      const resumed = await place.store(logger).resume("all-bad");
      assert.equal(resumed.restartedFromScratch, true);
      assert.equal(resumed.recoveredFromStep, 0);
      assert.equal(resumed.checkpoint, undefined);
      assert.ok(logger.lines.some((l) => l.level === "error" && /RESTARTS FROM STEP 0/.test(l.message)), JSON.stringify(logger.lines));
    });

    test("a writer whose epoch is stale is refused once another store resumed the run", async () => {
      const first = place.store(recordingLogger());
      await first.save({ runId: "fenced", stepNumber: 1 });
      const second = place.store(recordingLogger());
      const resumed = await second.resume("fenced");
      assert.equal(resumed.epoch, (first.epoch("fenced") ?? 0n) + 1n);
      await assert.rejects(first.save({ runId: "fenced", stepNumber: 2 }), (error: unknown) => {
        assert.ok(error instanceof CheckpointdError);
        assert.equal(error.reason, "STALE_EPOCH");
        return true;
      });
      await assert.rejects(first.recordToolResult("fenced", "c", "t", 2, new Uint8Array()), /STALE_EPOCH/);
      await second.save({ runId: "fenced", stepNumber: 2 });
    });

    test("an intent without a result comes back in doubt with its idempotency key", async () => {
      const store = place.store(recordingLogger());
      await store.recordToolResult("journal", "step-1/lookup/0", "lookup", 1, new TextEncoder().encode("10"));
      const intent = await store.recordToolIntent("journal", "step-1/email/0", "email", 1);
      assert.equal(intent.intent?.idempotencyKey, idempotencyKey("default", "journal", "step-1/email/0"));
      // The journal is part of the checksum: the save after it still carries the client's.
      await store.save({ runId: "journal", stepNumber: 1 });
      assert.equal(store.stats.withClientChecksum, 1);
      const next = place.store(recordingLogger());
      const resumed = await next.resume("journal");
      assert.deepEqual(resumed.inDoubt.map((c) => [c.callId, c.idempotencyKey]), [["step-1/email/0", intent.intent?.idempotencyKey]]);
      assert.equal(next.journalled("journal", "step-1/lookup/0")?.callId, "step-1/lookup/0");
      assert.equal(resumed.checkpoint?.isValid, true);
    });
  });
}
