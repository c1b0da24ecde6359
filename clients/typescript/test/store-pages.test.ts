/**
 * Paged loads against a real server whose answers hold about 1000 bytes of messages: LoadLatest,
 * LoadAtStep and Resume fetch every page, check each follows the last, and hand back the whole
 * history verified by the client's checksum, so the next save continues the chain.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import type { StoreBackend } from "../src/index.js";
import { BACKENDS } from "./server.js";
import { openPlace, recordingLogger, type Place } from "./store-db.js";

const BODY = "x".repeat(150);
const history = (count: number) => Array.from({ length: count }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `${i} ${BODY}` }));

/** A backend that counts the continuation pages asked for. */
function countingPages(counter: { pages: number }) {
  return (backend: StoreBackend): StoreBackend => ({
    ...backend,
    resume: (request) => backend.resume(request),
    loadLatest: (request) => backend.loadLatest(request),
    loadAtStep: (request) => {
      if ((request.continuation?.length ?? 0) > 0) counter.pages++;
      return backend.loadAtStep(request);
    },
  });
}

for (const backend of BACKENDS) {
  describe(`paged loads on ${backend}`, () => {
    let place: Place;
    before(async () => {
      place = await openPlace(backend, ["--max-answer-message-bytes", "1000"]);
    });
    after(async () => place.stop());

    test("a history longer than one answer is fetched page by page and verified whole", async () => {
      const writer = place.store(recordingLogger());
      for (let step = 1; step <= 5; step++) {
        await writer.save({ runId: "long", stepNumber: step, state: { step }, messages: history(step * 10) });
      }
      const counter = { pages: 0 };
      const latest = await place.store(recordingLogger(), countingPages(counter)).loadLatest("long");
      // About 8 KB of messages in pages of 1000 bytes: several pages, reassembled in order.
      assert.ok(counter.pages >= 5, `only ${counter.pages} pages`);
      assert.equal(latest?.isValid, true);
      assert.deepEqual(latest?.messages, history(50));

      const atStep = await place.store(recordingLogger()).loadAtStep("long", 4);
      assert.equal(atStep?.isValid, true);
      assert.deepEqual(atStep?.messages, history(40));

      counter.pages = 0;
      const resumer = place.store(recordingLogger(), countingPages(counter));
      const resumed = await resumer.resume("long");
      assert.ok(counter.pages >= 5, `only ${counter.pages} pages on Resume`);
      assert.deepEqual(resumed.checkpoint?.messages, history(50));
      // The chain rebuilt from the pages is right: the next save's client checksum is accepted.
      await resumer.save({ runId: "long", stepNumber: 6, messages: history(52) });
      assert.equal(resumer.stats.withClientChecksum, 1);
    });
  });
}
