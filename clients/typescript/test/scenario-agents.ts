/**
 * The `agent` steps of the shared scenarios (tests/scenarios/README.md, "agent"): programs on a
 * client package's recovery loop (CheckpointStore, RecoverableAgent) run as separate processes,
 * a side-effect agent SIGKILLed for real, and the answers the scenarios match. This package's
 * programs by default; the Python package's with `"by": "other"`, so one run crosses languages.
 */

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { repoRoot } from "./repo.js";

/** Which package's program runs a step: this one's, or the other client's. */
export type Language = "typescript" | "python";

/** The Python that runs the Python client's programs; it must have the `checkpointd` package. */
export function python(): string {
  return process.env["CHECKPOINTD_PYTHON"] ?? "python3";
}

/**
 * The reference example as a user runs it (examples/crash-and-resume.mjs, which imports the
 * built package: `npm run build` first), reporting what it printed.
 */
export function referenceExample(baseUrl: string, runId: string): Record<string, number> {
  const example = fileURLToPath(new URL("../../examples/crash-and-resume.mjs", import.meta.url));
  assert.ok(existsSync(new URL("../../dist/index.js", import.meta.url)), "the example imports dist/: run npm run build first");
  const done = spawnSync(process.execPath, [example, "--server", baseUrl.replace(/^http:\/\//, ""), "--run-id", runId], {
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(done.status, 0, `the reference example failed: ${done.error?.message ?? ""}${done.stderr}`);
  const recovered = /^recoveredFromStep=(\d+)$/m.exec(done.stdout);
  const calls = /^lookup calls: (\d+) for \d+ steps \((\d+) replayed/m.exec(done.stdout);
  assert.ok(recovered && calls, `unexpected output:\n${done.stdout}`);
  return { recoveredFromStep: Number(recovered[1]), toolCalls: Number(calls[1]), toolsReplayed: Number(calls[2]) };
}

/** The side-effect agent program of a language, as argv: `TARGET RUN_ID DIR`. */
function sideEffectArgv(language: Language, baseUrl: string, runId: string, dir: string): string[] {
  if (language === "typescript") {
    const agent = fileURLToPath(new URL("./recovery-crash-agent.js", import.meta.url));
    return [process.execPath, agent, baseUrl, runId, dir];
  }
  const agent = join(repoRoot(), "clients", "python", "tests", "crash_agent.py");
  return [python(), agent, baseUrl.replace(/^http:\/\//, ""), runId, dir];
}

/** Lines of a log the agents append to, empty when it was never written. */
function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

/**
 * The side-effect agent on a run, its logs in `work/RUN_ID` (shared by every process of the
 * run, whatever its language). With `kill`, it is SIGKILLed once step 5's email went out and
 * before its result is journalled, and reports nothing; otherwise it runs to the end and
 * reports the recovery, the result, the real lookups per step and the emails sent.
 */
export async function sideEffectAgent(
  language: Language,
  baseUrl: string,
  runId: string,
  work: string,
  kill: string | undefined,
): Promise<Record<string, unknown> | undefined> {
  const dir = join(work, runId);
  mkdirSync(dir, { recursive: true });
  const [program, ...args] = sideEffectArgv(language, baseUrl, runId, dir);
  if (kill !== undefined) {
    assert.equal(kill, "after-side-effect", `unknown kill point ${kill}`);
    await killAfterEmail(program!, [...args, "--hang-after-email"], dir);
    return undefined;
  }
  const done = spawnSync(program!, args, { encoding: "utf8", timeout: 120_000 });
  assert.equal(done.status, 0, `the ${language} side-effect agent failed: ${done.error?.message ?? ""}${done.stderr}`);
  // Each package prints its own result: camelCase in TypeScript, snake_case in Python.
  const result = JSON.parse(done.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
  const lookups = lines(join(dir, "tools.log")).filter((line) => line.startsWith("lookup@"));
  return {
    recoveredFromStep: result["recoveredFromStep"] ?? result["recovered_from_step"],
    result: result["result"],
    lookupsPerStep: [1, 2, 3, 4, 5, 6, 7, 8].map((step) => lookups.filter((line) => line === `lookup@${step}`).length),
    effects: lines(join(dir, "effects.log")).length,
  };
}

/** Starts the agent, waits for `hanging` (the email went out), then kills it with SIGKILL. */
async function killAfterEmail(program: string, args: string[], dir: string): Promise<void> {
  const agent = spawn(program, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  agent.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => agent.once("exit", (_code, signal) => resolve(signal)));
  try {
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(dir, "hanging")) && agent.exitCode === null && Date.now() < deadline) await sleep(50);
    assert.equal(agent.exitCode, null, `the agent exited before step 5's email: ${stderr}`);
    assert.ok(existsSync(join(dir, "hanging")), `step 5's email was never sent: ${stderr}`);
  } finally {
    agent.kill("SIGKILL");
  }
  assert.equal(await exited, "SIGKILL", stderr);
}
