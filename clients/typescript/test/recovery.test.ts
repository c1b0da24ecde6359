/**
 * The recovery loop on the in-memory backend and on a real server (SQLite, Postgres): the
 * reference run resumes from step 3 with journalled tools replayed, a transient error
 * resurrects the run up to the budget with the cooldown between, a fatal error stops at once.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Done, FatalError, RecoverableAgent, TransientError, type StepContext } from "../src/index.js";
import { PLACES, openPlace, recordingLogger, type Place } from "./store-db.js";

for (const name of PLACES) {
  describe(`RecoverableAgent on ${name}`, () => {
    let place: Place;
    before(async () => {
      place = await openPlace(name);
    });
    after(async () => place.stop());

    test("a crash at step 5 resumes from step 3 and replays the journalled lookups", async () => {
      const lookups: number[] = [];
      let crashed = false;
      const agent = async (ctx: StepContext) => {
        const fact = await ctx.callTool("lookup", () => (lookups.push(ctx.step), ctx.step * 10));
        ctx.state["total"] = ((ctx.state["total"] as number | undefined) ?? 0) + fact;
        ctx.addMessage("assistant", `step ${ctx.step}`);
        if (ctx.step === 5 && !crashed) {
          crashed = true;
          throw new Error("simulated crash");
        }
        return ctx.step === 8 ? new Done({ total: ctx.state["total"] }) : undefined;
      };
      const store = place.store(recordingLogger());
      const result = await new RecoverableAgent(agent, store, { checkpointEveryN: 3, cooldownMs: 0 }).runWithRecovery({}, "reference");
      assert.equal(result.recoveredFromStep, 3);
      assert.deepEqual(result.result, { total: 360 });
      assert.equal(result.resurrections, 1);
      assert.deepEqual(lookups, [1, 2, 3, 4, 5, 6, 7, 8]);
      assert.equal(result.toolsExecuted, 8);
      assert.equal(result.toolsReplayed, 2);
      // The finished run is restored finished: nothing runs again.
      const again = await new RecoverableAgent(agent, place.store(recordingLogger())).runWithRecovery({}, "reference");
      assert.deepEqual(again.result, { total: 360 });
      assert.equal(again.stepsExecuted, 0);
      assert.equal(lookups.length, 8);
    });

    test("a transient error resurrects the run up to the budget, each after the cooldown", async () => {
      let attempts = 0;
      const agent = (ctx: StepContext) => {
        if (ctx.step === 2) {
          attempts++;
          throw new TransientError("provider overloaded");
        }
        return undefined;
      };
      const logger = recordingLogger();
      const started = performance.now();
      await assert.rejects(
        new RecoverableAgent(agent, place.store(logger), { checkpointEveryN: 1, maxResurrections: 2, cooldownMs: 150 }).runWithRecovery({}, "transient"),
        TransientError,
      );
      assert.equal(attempts, 3);
      assert.ok(performance.now() - started >= 300, "two cooldowns of 150 ms");
      assert.equal(logger.lines.filter((l) => /transient error; resurrecting/.test(l.message)).length, 2);
    });

    test("a fatal error stops the run at once, typed or recognised by its message", async () => {
      for (const [runId, error] of [
        ["fatal-typed", new FatalError("bad input")],
        ["fatal-message", new Error("401: invalid API key")],
      ] as const) {
        let attempts = 0;
        const agent = () => {
          attempts++;
          throw error;
        };
        const started = performance.now();
        await assert.rejects(
          new RecoverableAgent(agent, place.store(recordingLogger()), { maxResurrections: 3, cooldownMs: 1_000 }).runWithRecovery({}, runId),
          (thrown: unknown) => thrown === error,
        );
        assert.equal(attempts, 1);
        assert.ok(performance.now() - started < 1_000, "no cooldown before a fatal end");
      }
    });
  });
}
