/**
 * The recovery loop's journalled calls and corruption reports on the in-memory backend and on a
 * real server (SQLite, Postgres): a journalled result or intent is reused only for the same
 * arguments (ReplayMismatch otherwise, the tool not called, the run not resurrected), the
 * server's ARGUMENTS_MISMATCH is the same error, and every Resume and load that lands below
 * quarantined checkpoints warns and says which (passedOver), not only the first.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { argumentsDigest, Done, RecoverableAgent, ReplayMismatch, type RecoveryResult, type StepContext } from "../src/index.js";
import { PLACES, openPlace, recordingLogger, type Place } from "./store-db.js";

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

for (const name of PLACES) {
  describe(`replays and corruption reports on ${name}`, () => {
    let place: Place;
    before(async () => {
      place = await openPlace(name);
    });
    after(async () => place.stop());

    /**
     * Step 1 looks `query(life)` up, step 2 crashes in the first life: the second life re-runs
     * step 1 (no checkpoint yet) with its own arguments. Returns the real lookups and the outcome.
     */
    async function twoLives(runId: string, query: (life: number) => string) {
      const lookups: string[] = [];
      let life = 0;
      const agent = async (ctx: StepContext) => {
        if (ctx.step === 1) {
          life++;
          await ctx.callTool("lookup", (q: string) => (lookups.push(q), q.length), query(life));
        }
        if (ctx.step === 2 && life === 1) throw new Error("simulated crash");
        return ctx.step === 2 ? new Done("ok") : undefined;
      };
      const run = new RecoverableAgent(agent, place.store(recordingLogger()), { checkpointEveryN: 3, cooldownMs: 0 });
      const outcome: { result?: RecoveryResult; error?: unknown } =
        await run.runWithRecovery({}, runId).then((result) => ({ result }), (error: unknown) => ({ error }));
      return { lookups, lives: life, ...outcome };
    }

    test("a journalled tool result is replayed for the same arguments", async () => {
      const { lookups, result } = await twoLives("replay-same", () => "paris");
      assert.deepEqual(lookups, ["paris"]);
      assert.equal(result?.toolsReplayed, 1);
      assert.equal(result?.toolsExecuted, 1);
    });

    test("other arguments under a journalled call id throw ReplayMismatch; the tool is not called and the run not resurrected", async () => {
      const { lookups, error, lives } = await twoLives("replay-other", (life) => (life === 1 ? "paris" : "rome"));
      assert.deepEqual(lookups, ["paris"]);
      assert.ok(error instanceof ReplayMismatch, String(error));
      assert.equal(error.callId, "step-1/lookup/0");
      assert.equal(error.storedDigest, argumentsDigest(["paris"]));
      assert.equal(error.requestDigest, argumentsDigest(["rome"]));
      assert.equal(error.reason, "ARGUMENTS_MISMATCH");
      assert.match(error.message, new RegExp(`${error.storedDigest}.*${error.requestDigest}`));
      assert.equal(lives, 2, "fatal: no third life");
    });

    test("a side effect's journalled result and in-doubt intent are reused only for the same arguments", async () => {
      const sent: string[] = [];
      const send = (key: string, to: string) => (sent.push(`${key} ${to}`), `sent to ${to}`);
      /** Step 1 emails `to(life)`; with `crash`, step 2 crashes in the first life, so step 1 runs twice. */
      const agentTo = (to: (life: number) => string, crash = true) => {
        let life = 0;
        return async (ctx: StepContext) => {
          if (ctx.step === 1) await ctx.callSideEffect("send_email", send, { args: [to(++life)] });
          if (crash && ctx.step === 2 && life === 1) throw new Error("simulated crash");
          return ctx.step === 2 ? new Done("ok") : undefined;
        };
      };
      const same = await new RecoverableAgent(agentTo(() => "ada"), place.store(recordingLogger()), { checkpointEveryN: 3, cooldownMs: 0 })
        .runWithRecovery({}, "effect-same");
      assert.equal(same.toolsReplayed, 1);
      assert.equal(sent.length, 1);
      await assert.rejects(
        new RecoverableAgent(agentTo((life) => (life === 1 ? "ada" : "bob")), place.store(recordingLogger()), { checkpointEveryN: 3, cooldownMs: 0 })
          .runWithRecovery({}, "effect-other"),
        (error: unknown) => error instanceof ReplayMismatch && error.callId === "step-1/send_email/0",
      );
      assert.equal(sent.length, 2, "bob was never emailed");
      const once = (to: string) => agentTo(() => to, false);

      // An intent journalled for "ada" with no result (a crash in between): "bob" must not run under its key.
      const writer = place.store(recordingLogger());
      await writer.recordToolIntent("effect-doubt", "step-1/send_email/0", "send_email", 1, argumentsDigest(["ada"]));
      await assert.rejects(
        new RecoverableAgent(once("bob"), place.store(recordingLogger()), { cooldownMs: 0 }).runWithRecovery({}, "effect-doubt"),
        (error: unknown) => error instanceof ReplayMismatch && error.storedDigest === argumentsDigest(["ada"]),
      );
      assert.equal(sent.length, 2, "the in-doubt call was not re-run with other arguments");
      // The same arguments settle it by its policy (retry with its key), as before digests.
      await new RecoverableAgent(once("ada"), place.store(recordingLogger()), { checkpointEveryN: 1, cooldownMs: 0 }).runWithRecovery({}, "effect-doubt");
      assert.equal(sent.length, 3);
      assert.ok(sent[2]?.endsWith(" ada"));
    });

    test("the journal refuses another digest under a call id with ReplayMismatch; the same digest or none is a retry", async () => {
      const store = place.store(recordingLogger());
      const [ada, bob] = [argumentsDigest(["ada"]), argumentsDigest(["bob"])];
      await store.recordToolResult("journal-digest", "c-1", "send", 1, encode("sent"), false, ada);
      await assert.rejects(store.recordToolResult("journal-digest", "c-1", "send", 1, encode("sent"), false, bob), (error: unknown) => {
        assert.ok(error instanceof ReplayMismatch, String(error));
        assert.deepEqual([error.callId, error.storedDigest, error.requestDigest], ["c-1", ada, bob]);
        return true;
      });
      assert.equal((await store.recordToolResult("journal-digest", "c-1", "send", 1, encode("sent"), false, ada)).argumentsDigest, ada);
      assert.equal((await store.recordToolResult("journal-digest", "c-1", "send", 1, encode("sent"))).argumentsDigest, ada);
      await store.recordToolIntent("journal-digest", "c-2", "deploy", 1, ada);
      await assert.rejects(store.recordToolIntent("journal-digest", "c-2", "deploy", 1, bob), ReplayMismatch);
      await assert.rejects(store.recordToolResult("journal-digest", "c-2", "deploy", 1, encode("ok"), false, bob), ReplayMismatch);
    });

    test("a call without arguments sends no digest and replays as before digests", async () => {
      const agent = async (ctx: StepContext) => {
        await ctx.callTool("now", () => 42);
        return new Done("ok");
      };
      await new RecoverableAgent(agent, place.store(recordingLogger()), { cooldownMs: 0 }).runWithRecovery({}, "no-args");
      const store = place.store(recordingLogger());
      await store.resume("no-args");
      assert.equal(store.journalled("no-args", "step-1/now/0")?.argumentsDigest, "");
    });

    test("every Resume and load below quarantined checkpoints warns and returns passedOver, until a newer save", async () => {
      const writer = place.store(recordingLogger());
      for (const step of [1, 2, 3]) await writer.save({ runId: "every-reader", stepNumber: step, state: { step }, metadata: { "fw.step": String(step - 1) } });
      place.corruptState("every-reader", 3);
      place.corruptState("every-reader", 2);
      for (let reader = 0; reader < 3; reader++) {
        const logger = recordingLogger();
        const loaded = await place.store(logger).loadLatest("every-reader");
        assert.equal(loaded?.stepNumber, 1);
        assert.deepEqual(loaded?.passedOver?.map((p) => p.step), [3, 2], `reader ${reader}`);
        assert.ok(logger.lines.some((l) => l.level === "warn" && /step\(s\) 3, 2 quarantined and skipped; falling back to step 1/.test(l.message)),
          `reader ${reader}: ${JSON.stringify(logger.lines)}`);
      }
      assert.equal((await place.store(recordingLogger()).loadLatest("every-reader"))?.passedOver?.[0]?.metadata["fw.step"], "2");
      for (let reader = 0; reader < 2; reader++) {
        const logger = recordingLogger();
        const resumed = await place.store(logger).resume("every-reader");
        assert.equal(resumed.recoveredFromStep, 1);
        assert.deepEqual(resumed.passedOver.map((p) => p.step), [3, 2], `resume ${reader}`);
        assert.ok(logger.lines.some((l) => l.level === "warn" && /3, 2 quarantined/.test(l.message)), JSON.stringify(logger.lines));
      }
      // The recovery loop hands it on, and a save above the quarantined ones ends the reports.
      const agent = (ctx: StepContext) => (ctx.step === 4 ? new Done("ok") : undefined);
      const logger = recordingLogger();
      const result = await new RecoverableAgent(agent, place.store(logger), { checkpointEveryN: 1, cooldownMs: 0 }).runWithRecovery({}, "every-reader");
      assert.deepEqual(result.passedOver.map((p) => p.step), [3, 2]);
      const quiet = recordingLogger();
      const after = await place.store(quiet).loadLatest("every-reader");
      assert.equal(after?.stepNumber, 4);
      assert.deepEqual(after?.passedOver, []);
      assert.deepEqual(quiet.lines, []);
    });
  });
}
