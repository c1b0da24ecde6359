/**
 * `drive` as a queue worker uses it, on the in-memory backend: shutdown lets the step finish (or
 * abandons it after the drain deadline) and checkpoints what completed; a lost lease stops
 * without writing; an approval parks the run and its decision lets the step through.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { CheckpointStore, Done, MemoryBackend, drive, recoveryPolicy, type StepContext } from "../src/index.js";
import { recordingLogger } from "./store-db.js";

const policy = recoveryPolicy({ cooldownMs: 0, drainDeadlineMs: 100 });

function controls() {
  const shutdown = new AbortController();
  const leaseLost = new AbortController();
  return { shutdown, leaseLost, signals: { shutdown: shutdown.signal, leaseLost: leaseLost.signal } };
}

test("shutdown mid-step lets the step finish, checkpoints it and stops", async () => {
  const backend = new MemoryBackend();
  const { shutdown, signals } = controls();
  const agent = async (ctx: StepContext) => {
    if (ctx.step === 2) {
      shutdown.abort();
      await sleep(20);
    }
    ctx.state["last"] = ctx.step;
  };
  const outcome = await drive(agent, CheckpointStore.inMemory(backend, recordingLogger()), "drain", null, policy, { signals });
  assert.equal(outcome.kind, "stopped");
  const latest = await CheckpointStore.inMemory(backend, recordingLogger()).loadLatest("drain");
  assert.equal(latest?.stepNumber, 2);
  assert.deepEqual(latest?.state, { last: 2 });
});

test("a step still running at the drain deadline is abandoned and what completed is saved", async () => {
  const backend = new MemoryBackend();
  const { shutdown, signals } = controls();
  const logger = recordingLogger();
  const agent = async (ctx: StepContext) => {
    ctx.state["last"] = ctx.step;
    if (ctx.step === 2) {
      shutdown.abort();
      await sleep(10_000, undefined, { signal: ctx.signal }).catch(() => undefined);
      await ctx.callTool("late", () => assert.fail("an abandoned step runs no tool"));
    }
  };
  const outcome = await drive(agent, CheckpointStore.inMemory(backend, logger), "abandon", null, policy, { signals });
  assert.equal(outcome.kind, "stopped");
  assert.ok(logger.lines.some((l) => /drain deadline passed mid-step/.test(l.message)));
  const latest = await CheckpointStore.inMemory(backend, recordingLogger()).loadLatest("abandon");
  assert.equal(latest?.stepNumber, 1);
  assert.deepEqual(latest?.state, { last: 1 });
  assert.deepEqual(latest?.toolResults, []);
});

test("a lost lease stops the run without a checkpoint", async () => {
  const backend = new MemoryBackend();
  const { leaseLost, signals } = controls();
  const agent = async (ctx: StepContext) => {
    if (ctx.step === 2) leaseLost.abort();
    await sleep(5);
  };
  const outcome = await drive(agent, CheckpointStore.inMemory(backend, recordingLogger()), "lost", null, policy, { signals });
  assert.equal(outcome.kind, "lease_lost");
  assert.equal(await CheckpointStore.inMemory(backend, recordingLogger()).loadLatest("lost"), undefined);
});

test("an approval parks the run; the decision lets the step through", async () => {
  const backend = new MemoryBackend();
  const agent = (ctx: StepContext) => {
    if (ctx.step === 2) {
      const decision = ctx.requestApproval("deploy", { to: "prod" });
      return new Done({ approved: decision.approved });
    }
    return undefined;
  };
  const parked = await drive(agent, CheckpointStore.inMemory(backend, recordingLogger()), "approve", null, policy);
  assert.equal(parked.kind, "approval");
  assert.equal(parked.action, "deploy");
  assert.deepEqual(parked.details, { to: "prod" });
  const decided = await drive(agent, CheckpointStore.inMemory(backend, recordingLogger()), "approve", null, policy, {
    decision: { action: "deploy", approved: true },
  });
  assert.equal(decided.kind, "finished");
  assert.deepEqual(decided.result, { approved: true });
  assert.equal(decided.resumed?.recoveredFromStep, 1);
});

test("a call in doubt under the ask policy asks a human before it runs again", async () => {
  const backend = new MemoryBackend();
  const store = CheckpointStore.inMemory(backend, recordingLogger());
  await store.recordToolIntent("doubt", "step-1/pay/0", "pay", 1);
  let paid = 0;
  const agent = async (ctx: StepContext) => {
    await ctx.callSideEffect("pay", () => ++paid, "ask");
    return new Done(paid);
  };
  const parked = await drive(agent, CheckpointStore.inMemory(backend, recordingLogger()), "doubt", null, policy);
  assert.equal(parked.kind, "approval");
  assert.equal(parked.action, "in_doubt step-1/pay/0");
  assert.equal(paid, 0);
  const decided = await drive(agent, CheckpointStore.inMemory(backend, recordingLogger()), "doubt", null, policy, {
    decision: { action: "in_doubt step-1/pay/0", approved: true },
  });
  assert.equal(decided.kind, "finished");
  assert.equal(paid, 1);
});
