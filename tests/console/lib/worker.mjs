// The agents around the console: the real `checkpointd worker` (the bundled demo agent, whose
// email tool appends one line per email to a file) and the real CLI for enqueueing tasks and
// reading their state.

import { spawn, execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { checkpointdBin, stopChild } from "./harness.mjs";

const run = promisify(execFile);

/**
 * Starts `checkpointd worker` against `server` with an agent key. `args` are the demo agent's
 * flags (e.g. `--approval-at-step 2`, `--side-effect-file F`). Resolves to a handle whose
 * `stop()` sends SIGTERM and waits.
 */
export function startWorker(server, agentKey, args = []) {
  const child = spawn(
    checkpointdBin(),
    [
      "worker",
      "--server", server.grpcUrl,
      "--token", agentKey,
      "--poll-interval", "50ms",
      "--cooldown", "50ms",
      ...args,
    ],
    { env: { RUST_LOG: "warn", ...process.env }, stdio: ["ignore", "ignore", "inherit"] },
  );
  const exited = new Promise((resolveExit) => child.once("exit", resolveExit));
  return {
    process: child,
    stop: () => stopChild(child, exited, 15_000),
  };
}

/** Runs `checkpointd tasks <args> --json` with `key` and parses what it prints. */
export async function tasksCli(server, key, args) {
  const { stdout } = await run(checkpointdBin(), [
    "tasks", ...args, "--server", server.grpcUrl, "--token", key, "--json",
  ]);
  return JSON.parse(stdout);
}

/** Enqueues a task for `runId` (the demo agent's `input` as JSON); resolves to its id. */
export async function enqueue(server, key, runId, input = { steps: 4 }, extra = []) {
  const task = await tasksCli(server, key, [
    "enqueue", "--run", runId, "--input", JSON.stringify(input), ...extra,
  ]);
  return task.task.task_id;
}

/** The task as `tasks show` prints it. */
export function showTask(server, key, taskId) {
  return tasksCli(server, key, ["show", taskId]);
}

/** Polls `check` until it returns something truthy, or fails after `timeoutMs`. */
export async function eventually(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) {
      return last;
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`timed out waiting for ${what}; last saw ${JSON.stringify(last)}`);
}

/** The lines the demo agent's email tool wrote, or none when it never ran. */
export async function emailsSent(file) {
  try {
    return (await readFile(file, "utf8")).split("\n").filter(Boolean);
  } catch (error) {
    if (error.code === "ENOENT") {
      return [];
    }
    throw error;
  }
}
