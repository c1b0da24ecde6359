/**
 * The queue worker's options beyond the defaults worker.test.ts runs, as real processes against
 * a real server on SQLite and Postgres: `--concurrency 2` (two tasks in flight in one process,
 * both completed, neither seeing the other's state, messages or journal), an object-style agent
 * (`{ step, initialState }`), and a server run with `--auto-resume-hitl false` (a decided task
 * stays parked until `tasks resume`). The TLS flags are in worker-tls.test.ts.
 */

import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { TaskState, createCheckpointClient, createTaskClient, type CheckpointClient, type TaskClient } from "../src/index.js";
import { BACKENDS, startServer, type TestServer } from "./server.js";
import { OBJECT_AGENT, agentDir, cli, countLines, startWorker, waitUntil, type WorkerProcess } from "./worker-harness.js";

const decoder = new TextDecoder();
const json = (bytes: Uint8Array): unknown => JSON.parse(decoder.decode(bytes));
const OBJECT_SPEC = `${OBJECT_AGENT}:agent`;

for (const backend of BACKENDS) {
  describe(`worker options on ${backend}`, () => {
    let server: TestServer;
    let tasks: TaskClient;
    let checkpoints: CheckpointClient;
    let tenant: string;
    let dir: string;
    const started: WorkerProcess[] = [];
    const setUp = (name: string) => {
      tenant = `ts-${name}`;
      dir = agentDir();
      tasks = createTaskClient({ baseUrl: server.baseUrl, tenant });
      checkpoints = createCheckpointClient({ baseUrl: server.baseUrl, tenant });
    };
    const worker = (args: string[], env: Record<string, string> = {}, agent?: string) => {
      const process = startWorker(server, tenant, dir, args, env, agent);
      started.push(process);
      return process;
    };
    const enqueue = async (runId: string) =>
      (await tasks.enqueue({ runId, input: new TextEncoder().encode(JSON.stringify({ goal: runId })) })).task!.taskId;
    const task = async (taskId: string) => (await tasks.get({ taskId })).task!;

    before(async () => {
      // No test here but the approval one decides a task, so the server's flag is for that one.
      server = await startServer({ backend, args: ["--auto-resume-hitl", "false"] });
    });
    after(async () => {
      await server?.stop();
    });
    afterEach(async () => {
      await Promise.all(started.splice(0).map((p) => p.kill()));
      rmSync(dir, { recursive: true, force: true });
    });

    test("an object agent's initialState and step (called as a method) run a task to completion", async () => {
      setUp("worker-object");
      const taskId = await enqueue("ts-worker-object");
      const out = await worker(["--exit-after", "1"], {}, OBJECT_SPEC).finish();
      const done = await task(taskId);
      assert.equal(done.state, TaskState.COMPLETED, out);
      const { pid, ...result } = json(done.result) as Record<string, unknown>;
      assert.equal(typeof pid, "number");
      const trail = [1, 2, 3, 4].map((step) => `ts-worker-object#${step}`);
      assert.deepEqual(result, { goal: "ts-worker-object", task: { goal: "ts-worker-object" }, trail });
    });

    test("--concurrency 2 runs two tasks at once in one process, each on its own state, messages and journal", async () => {
      setUp("worker-concurrency");
      const runs = ["ts-worker-pair-a", "ts-worker-pair-b"];
      const taskIds = await Promise.all(runs.map(enqueue));
      // Each run waits at step 2 for the other: only two tasks in flight at once get past it.
      const out = await worker(["--concurrency", "2", "--exit-after", "2"], { AGENT_RENDEZVOUS: "2" }, OBJECT_SPEC).finish();
      const pids = new Set<unknown>();
      for (const [index, runId] of runs.entries()) {
        const done = await task(taskIds[index]!);
        assert.equal(done.state, TaskState.COMPLETED, `${runId}: ${done.lastError}\n${out}`);
        const result = json(done.result) as { goal: string; task: unknown; trail: string[]; pid: number };
        assert.equal(result.goal, runId);
        assert.deepEqual(result.task, { goal: runId });
        assert.deepEqual(result.trail, [1, 2, 3, 4].map((step) => `${runId}#${step}`));
        pids.add(result.pid);

        const latest = await checkpoints.loadLatest({ runId });
        // The store keeps a message's content as JSON, `{"content": TEXT}`.
        const messages = latest.checkpoint!.messages.map((m) => (json(m.content) as { content: string }).content);
        assert.deepEqual(messages, [1, 2, 3, 4].map((step) => `${runId} step ${step}`));
        const outputs = latest.toolResults.map((r) => json(r.output));
        assert.deepEqual(outputs, [1, 2, 3, 4].map((step) => `${runId}#${step}`));
      }
      assert.equal(pids.size, 1, "both tasks ran in the one worker process");
      const lookups = countLines(join(dir, "tools.log"));
      assert.deepEqual(lookups, new Map(runs.flatMap((run) => [1, 2, 3, 4].map((step) => [`lookup@${run}@${step}`, 1]))));
      assert.equal((out.match(/end=completed/g) ?? []).length, 2, out);
    });

    test("--auto-resume-hitl false: a decided task stays parked until `tasks resume`, then runs with the decision", async () => {
      setUp("worker-no-auto-resume");
      const taskId = await enqueue("ts-worker-no-auto-resume");
      const waiting = worker(["--exit-after", "1"], { AGENT_APPROVAL_AT: "4" });
      await waitUntil(async () => (await task(taskId)).state === TaskState.INPUT_REQUIRED, "the task to wait for a human");
      cli(server, tenant, "tasks", "approve", taskId, "--by", "alice");
      // Ten poll intervals of the worker: a claimable task would have been claimed again.
      await sleep(1_000);
      const parked = await task(taskId);
      assert.equal(parked.state, TaskState.INPUT_REQUIRED);
      assert.equal(parked.approval?.decided, true);
      assert.equal((waiting.stdout().match(/event claimed/g) ?? []).length, 1, waiting.stdout());

      cli(server, tenant, "tasks", "resume", taskId);
      const out = await waiting.finish();
      const done = await task(taskId);
      assert.equal(done.state, TaskState.COMPLETED, out);
      assert.deepEqual(json(done.result), { sum: 21, approvedBy: "alice" });
      assert.match(out, /end=awaiting_approval[\s\S]*event claimed[\s\S]*end=completed/);
    });
  });
}
