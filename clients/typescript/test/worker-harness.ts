/**
 * Worker processes for the worker tests: `checkpointd-worker` (as the tests built it) running
 * test/fixtures/worker-agent.mjs against a test server, with a temporary folder the agent
 * writes its tool and side-effect logs to; the operator CLI (`checkpointd tasks ...`); and
 * polling until a condition holds.
 */

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

import { repoRoot } from "./repo.js";
import type { TestServer } from "./server.js";

/** The compiled worker entry point and the fixture agent, relative to this compiled file. */
const CLI = fileURLToPath(new URL("../src/worker/cli.js", import.meta.url));
export const FIXTURE_AGENT = fileURLToPath(new URL("../../test/fixtures/worker-agent.mjs", import.meta.url));
export const OBJECT_AGENT = fileURLToPath(new URL("../../test/fixtures/worker-object-agent.mjs", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  /** What it printed so far (stdout, then stderr), for assertions and failure messages. */
  stdout(): string;
  stderr(): string;
  /** Waits for it to exit; throws with its output unless it exited 0. */
  finish(timeoutMs?: number): Promise<string>;
  /** SIGKILLs it (when still running) and waits for it to go. */
  kill(): Promise<void>;
}

export function agentDir(): string {
  return mkdtempSync(join(tmpdir(), "checkpointd-ts-worker-"));
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Starts a worker of `tenant` (each test has its own, so no test's leftover task reaches another
 * test's worker) with `--concurrency 1 --poll-interval 100ms` and `args` (a later flag wins);
 * `env` adds fault injection; `agent` is the MODULE:EXPORT it runs.
 */
export function startWorker(
  server: TestServer,
  tenant: string,
  dir: string,
  args: string[],
  env: Record<string, string> = {},
  agent = `${FIXTURE_AGENT}:agent`,
): WorkerProcess {
  const child = spawn(
    process.execPath,
    [CLI, agent, "--server", server.baseUrl, "--tenant", tenant, "--concurrency", "1", "--poll-interval", "100ms", ...args],
    { env: { ...process.env, AGENT_DIR: dir, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async finish(timeoutMs = 60_000) {
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await exited(child);
      clearTimeout(timer);
      if (child.exitCode !== 0) {
        throw new Error(`worker exited ${child.exitCode ?? child.signalCode}\nstdout:\n${out}\nstderr:\n${err}`);
      }
      return out;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited(child);
    },
  };
}

/** Runs `checkpointd ARGS --server URL --tenant T` (the operator CLI) and returns its stdout. */
export function cli(server: TestServer, tenant: string, ...args: string[]): string {
  const bin = process.env["CHECKPOINTD_BIN"] ?? join(repoRoot(), "target", "release", "checkpointd");
  return execFileSync(bin, [...args, "--server", server.baseUrl, "--tenant", tenant], { encoding: "utf8" });
}

/** Polls `probe` every 50 ms until it returns something truthy; throws naming `what` after 30 s. */
export async function waitUntil<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Lines of a file the agent wrote, counted; empty when it never wrote it. */
export function countLines(path: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(path)) return counts;
  for (const line of readFileSync(path, "utf8").split("\n").filter(Boolean)) counts.set(line, (counts.get(line) ?? 0) + 1);
  return counts;
}

/** Waits until the agent wrote `hanging` (it is stuck in a step) or the worker exited. */
export async function waitHanging(worker: WorkerProcess, dir: string, what: string): Promise<void> {
  await waitUntil(() => existsSync(join(dir, "hanging")) || worker.child.exitCode !== null, what);
  if (worker.child.exitCode !== null) throw new Error(`the worker exited before ${what}:\n${worker.stdout()}\n${worker.stderr()}`);
}
