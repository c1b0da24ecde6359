/**
 * The queue worker (`checkpointd-worker`) as real processes against a real server on SQLite and
 * Postgres: a task completed; a worker SIGKILLed mid-task and its task finished by a second
 * worker after the lease, from the latest checkpoint with no tool run twice; a frozen worker
 * that lost its lease writes nothing, nor one whose task an operator cancelled; SIGTERM drains;
 * fatal versus transient errors (and a dead letter once the attempts are used up); human
 * approval and rejection through the operator CLI; an in-doubt email settled by its policy.
 */

import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";

import { TaskState, ErrorClass, createCheckpointClient, createTaskClient, type CheckpointClient, type TaskClient } from "../src/index.js";
import { BACKENDS, startServer, type TestServer } from "./server.js";
import { agentDir, cli, countLines, startWorker, waitHanging, waitUntil, type WorkerProcess } from "./worker-harness.js";

const decoder = new TextDecoder();
const json = (bytes: Uint8Array): unknown => JSON.parse(decoder.decode(bytes));
const LOOKUPS_ONCE = new Map(Array.from({ length: 6 }, (_, i) => [`lookup@${i + 1}`, 1]));

for (const backend of BACKENDS) {
  describe(`worker on ${backend}`, () => {
    let server: TestServer;
    let tasks: TaskClient;
    let checkpoints: CheckpointClient;
    // Each test has its own tenant (its queue), run id and agent folder, made by `setUp`.
    let tenant: string;
    let dir: string;
    const started: WorkerProcess[] = [];
    const setUp = (name: string) => {
      tenant = `ts-${name}`;
      dir = agentDir();
      tasks = createTaskClient({ baseUrl: server.baseUrl, tenant });
      checkpoints = createCheckpointClient({ baseUrl: server.baseUrl, tenant });
    };
    const worker = (args: string[], env: Record<string, string> = {}) => {
      const process = startWorker(server, tenant, dir, args, env);
      started.push(process);
      return process;
    };
    const enqueue = async (runId: string) =>
      (await tasks.enqueue({ runId, input: new TextEncoder().encode(JSON.stringify({ goal: runId })) })).task!.taskId;
    const task = async (taskId: string) => (await tasks.get({ taskId })).task!;
    const parked = (taskId: string) =>
      waitUntil(async () => {
        const current = await task(taskId);
        return current.state === TaskState.INPUT_REQUIRED ? current : undefined;
      }, "the task to wait for a human");

    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });
    afterEach(async () => {
      // A failed test leaves no worker behind to claim the next test's task.
      await Promise.all(started.splice(0).map((p) => p.kill()));
      rmSync(dir, { recursive: true, force: true });
    });

    test("a task is claimed, run to its end and completed with the agent's result", async () => {
      setUp("worker-complete");
      const taskId = await enqueue("ts-worker-complete");
      const out = await worker(["--exit-after", "1"]).finish();
      const done = await task(taskId);
      assert.equal(done.state, TaskState.COMPLETED, out);
      assert.deepEqual(json(done.result), { sum: 21, approvedBy: null });
      assert.match(out, /event finished run=ts-worker-complete .* end=completed/);
      assert.deepEqual(countLines(join(dir, "tools.log")), LOOKUPS_ONCE);
    });

    test("a SIGKILLed worker's task is finished by a second worker after the lease, from the latest checkpoint", async () => {
      setUp("worker-kill");
      const taskId = await enqueue("ts-worker-kill");
      const first = worker(["--lease", "2s"], { AGENT_HANG_AT: "5" });
      await waitHanging(first, dir, "step 5");
      await first.kill();
      assert.equal((await task(taskId)).state, TaskState.RUNNING);

      const out = await worker(["--lease", "2s", "--exit-after", "1"]).finish();
      const done = await task(taskId);
      assert.equal(done.state, TaskState.COMPLETED, out);
      assert.deepEqual(json(done.result), { sum: 21, approvedBy: null });
      assert.equal(done.attempt, 2n);
      assert.match(out, /recovered_from_step=3/);
      // Steps 4 and 5 re-ran, but their lookups came from the journal.
      assert.deepEqual(countLines(join(dir, "tools.log")), LOOKUPS_ONCE);
    });

    test("a frozen worker that lost its lease stops without writing", async () => {
      setUp("worker-zombie");
      const taskId = await enqueue("ts-worker-zombie");
      const zombie = worker(["--lease", "2s", "--exit-after", "1"], { AGENT_HANG_AT: "5" });
      await waitHanging(zombie, dir, "step 5");
      zombie.child.kill("SIGSTOP");
      let completed;
      let saved;
      try {
        await worker(["--lease", "2s", "--exit-after", "1"]).finish();
        completed = await task(taskId);
        assert.equal(completed.state, TaskState.COMPLETED);
        assert.equal(completed.attempt, 2n);
        saved = (await checkpoints.listCheckpoints({ runId: "ts-worker-zombie" })).checkpoints;
      } finally {
        zombie.child.kill("SIGCONT");
      }
      // Thawed, its next heartbeat is fenced: the hung step is abandoned and nothing written.
      const out = await zombie.finish();
      assert.match(out, /end=lease_lost/);
      assert.deepEqual(await task(taskId), completed);
      assert.deepEqual((await checkpoints.listCheckpoints({ runId: "ts-worker-zombie" })).checkpoints, saved);
      assert.deepEqual(countLines(join(dir, "tools.log")), LOOKUPS_ONCE);
    });

    test("an operator's cancel stops the running step at the next heartbeat, nothing more written", async () => {
      setUp("worker-cancel");
      const taskId = await enqueue("ts-worker-cancel");
      const running = worker(["--lease", "3s", "--exit-after", "1"], { AGENT_HANG_AT: "4" });
      await waitHanging(running, dir, "step 4");
      cli(server, tenant, "tasks", "cancel", taskId);
      const out = await running.finish(30_000);
      assert.equal((await task(taskId)).state, TaskState.CANCELLED);
      // The hung step was abandoned, not checkpointed: step 3 stays the latest.
      assert.equal((await checkpoints.loadLatest({ runId: "ts-worker-cancel" })).checkpoint?.step, 3n);
      assert.match(out, /end=lease_lost/);
    });

    test("SIGTERM drains: the hung step is abandoned at the deadline, the run checkpointed and the task released", async () => {
      setUp("worker-drain");
      const taskId = await enqueue("ts-worker-drain");
      const draining = worker(["--drain-deadline", "200ms"], { AGENT_HANG_AT: "5" });
      await waitHanging(draining, dir, "step 5");
      draining.child.kill("SIGTERM");
      const out = await draining.finish();
      const released = await task(taskId);
      assert.equal(released.state, TaskState.PENDING, out);
      assert.equal(released.attemptsUsed, 0);
      // Step 5 was abandoned; step 4, done, was checkpointed on the way out.
      assert.equal((await checkpoints.loadLatest({ runId: "ts-worker-drain" })).checkpoint?.step, 4n);
      assert.match(out, /end=released/);
    });

    test("a fatal error fails the task at once, without resurrection", async () => {
      setUp("worker-fatal");
      const taskId = await enqueue("ts-worker-fatal");
      const out = await worker(["--exit-after", "1", "--cooldown", "0s"], { AGENT_FATAL_AT: "2" }).finish();
      const failed = await task(taskId);
      assert.equal(failed.state, TaskState.FAILED, out);
      assert.equal(failed.lastErrorClass, ErrorClass.FATAL);
      assert.equal(failed.attemptsUsed, 1);
      assert.match(failed.lastError, /configuration is wrong/);
      assert.match(out, /end=failed_fatal/);
      // Resurrected, step 2 would have run its lookup's step again: the journal shows one life.
      assert.deepEqual(countLines(join(dir, "tools.log")), new Map([["lookup@1", 1], ["lookup@2", 1]]));
    });

    test("a transient error resurrects the run in-process up to the budget, then hands the task back", async () => {
      setUp("worker-transient");
      const taskId = await enqueue("ts-worker-transient");
      const out = await worker(["--exit-after", "1", "--max-resurrections", "2", "--cooldown", "0s"], {
        AGENT_TRANSIENT_AT: "3",
      }).finish();
      const retried = await task(taskId);
      assert.equal(retried.state, TaskState.PENDING, out);
      assert.equal(retried.lastErrorClass, ErrorClass.TRANSIENT);
      assert.match(retried.lastError, /connection reset/);
      assert.match(out, /end=failed_transient/);
      // The first life and two resurrections reached step 3; the journal kept its lookup single.
      assert.equal(countLines(join(dir, "attempts.log")).get("step 3"), 3);
      assert.equal(countLines(join(dir, "tools.log")).get("lookup@3"), 1);
    });

    test("a transient error on the task's last attempt, past the resurrection budget, makes it a dead letter", async () => {
      setUp("worker-dead");
      const input = new TextEncoder().encode("{}");
      const taskId = (await tasks.enqueue({ runId: "ts-worker-dead", input, retryPolicy: { maxAttempts: 1 } })).task!.taskId;
      const out = await worker(["--exit-after", "1", "--max-resurrections", "0"], { AGENT_TRANSIENT_AT: "2" }).finish();
      const dead = await task(taskId);
      assert.equal(dead.state, TaskState.DEAD, out);
      assert.equal(dead.lastErrorClass, ErrorClass.TRANSIENT);
      assert.equal(countLines(join(dir, "attempts.log")).get("step 2"), 1);
    });

    for (const [verb, by, approvedBy] of [["approve", "alice", "alice"], ["reject", "carol", null]] as const) {
      test(`a step that asks for approval waits for the operator CLI (${verb}) and sees the decision`, async () => {
        setUp(`worker-${verb}`);
        const taskId = await enqueue(`ts-worker-${verb}`);
        const waiting = worker(["--exit-after", "1"], { AGENT_APPROVAL_AT: "4" });
        const asked = await parked(taskId);
        assert.equal(asked.approval?.action, "deploy");
        assert.deepEqual(json(asked.approval!.details), { target: "prod" });
        cli(server, tenant, "tasks", verb, taskId, "--by", by);
        const out = await waiting.finish();
        const done = await task(taskId);
        assert.equal(done.state, TaskState.COMPLETED, out);
        assert.deepEqual(json(done.result), { sum: 21, approvedBy });
        assert.match(out, /end=awaiting_approval[\s\S]*end=completed/);
        // Parked at step 4 after checkpointing step 3: steps 1 to 3 never ran their tools again.
        assert.deepEqual(countLines(join(dir, "tools.log")), LOOKUPS_ONCE);
      });
    }

    test("an email in doubt after a SIGKILL waits for a human (policy ask) and is never sent twice", async () => {
      setUp("worker-in-doubt");
      const email = { AGENT_EMAIL_AT: "2", AGENT_EMAIL_POLICY: "ask" };
      const taskId = await enqueue("ts-worker-in-doubt");
      const first = worker(["--lease", "2s"], { ...email, AGENT_HANG_AFTER_EMAIL: "1" });
      await waitHanging(first, dir, "the email");
      await first.kill();
      const second = worker(["--lease", "2s", "--exit-after", "1"], email);
      const asked = await parked(taskId);
      assert.equal(asked.approval?.action, "in_doubt step-2/send_email/0");
      assert.equal((json(asked.approval!.details) as { toolName: string }).toolName, "send_email");
      cli(server, tenant, "tasks", "approve", taskId, "--by", "bob");
      await second.finish();
      assert.equal((await task(taskId)).state, TaskState.COMPLETED);
      // Approved, the call re-ran with its idempotency key, which the tool had seen: one email.
      assert.equal(countLines(join(dir, "effects.log")).size, 1);
    });

    test("an email in doubt after a SIGKILL is failed fatally by policy fail, never re-sent", async () => {
      setUp("worker-in-doubt-fail");
      const email = { AGENT_EMAIL_AT: "2", AGENT_EMAIL_POLICY: "fail" };
      const taskId = await enqueue("ts-worker-in-doubt-fail");
      const first = worker(["--lease", "2s"], { ...email, AGENT_HANG_AFTER_EMAIL: "1" });
      await waitHanging(first, dir, "the email");
      await first.kill();
      const out = await worker(["--lease", "2s", "--exit-after", "1"], email).finish();
      const failed = await task(taskId);
      assert.equal(failed.state, TaskState.FAILED, out);
      assert.equal(failed.lastErrorClass, ErrorClass.FATAL);
      assert.match(failed.lastError, /step-2\/send_email\/0/);
      assert.equal(countLines(join(dir, "effects.log")).size, 1);
    });
  });
}
