/**
 * The worker's command line without a server: durations, the agent spec and how an agent module
 * is picked apart, and the errors bad input gets.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { loadAgent, parseAgentSpec, parseDuration } from "../src/index.js";
import { parseWorkerArgs } from "../src/worker/args.js";
import { FIXTURE_AGENT } from "./worker-harness.js";

test("durations read as the Python worker reads them, in milliseconds", () => {
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("2s"), 2_000);
  assert.equal(parseDuration("1.5m"), 90_000);
  assert.equal(parseDuration("1h"), 3_600_000);
  assert.equal(parseDuration("3"), 3_000);
  for (const bad of ["", "s", "-1s", "2 weeks", "1e3"]) assert.throws(() => parseDuration(bad), /not a duration/);
});

test("an agent spec is MODULE[:EXPORT], the export being default when omitted", () => {
  assert.deepEqual(parseAgentSpec("./agent.mjs:agent"), { module: "./agent.mjs", exportPath: ["agent"] });
  assert.deepEqual(parseAgentSpec("my-agents:bots.support"), { module: "my-agents", exportPath: ["bots", "support"] });
  assert.deepEqual(parseAgentSpec("./agent.mjs"), { module: "./agent.mjs", exportPath: ["default"] });
  assert.throws(() => parseAgentSpec(":agent"), /expected MODULE\[:EXPORT\]/);
});

test("an agent module's step function is loaded; a missing module or export is named", async () => {
  const loaded = await loadAgent(`${FIXTURE_AGENT}:agent`);
  assert.equal(typeof loaded.step, "function");
  assert.equal(loaded.initialState, undefined);
  await assert.rejects(loadAgent(`${FIXTURE_AGENT}:nope`), /has no export nope/);
  await assert.rejects(loadAgent(`${FIXTURE_AGENT}`), /has no export default/);
  await assert.rejects(loadAgent("./no-such-agent.mjs:agent"), /cannot import the agent module \.\/no-such-agent\.mjs/);
});

test("the flags fill the worker's options, and a bad value is refused naming its flag", () => {
  const parsed = parseWorkerArgs(
    ["./a.mjs:agent", "--server", "127.0.0.1:9", "--lease", "2s", "--strategy", "hybrid:2", "--fatal-pattern", "quota", "--exit-after", "1"],
    {},
  );
  assert.ok(parsed);
  assert.equal(parsed.client.baseUrl, "http://127.0.0.1:9");
  assert.equal(parsed.worker.leaseMs, 2_000);
  assert.equal(parsed.worker.exitAfter, 1);
  assert.equal(String(parsed.worker.recovery.strategy), "every_n:2,after_tools");
  assert.equal(parsed.worker.recovery.classifier.classify(new Error("Quota exceeded")), "fatal");
  assert.equal(parseWorkerArgs(["--help"], {}), undefined);
  assert.throws(() => parseWorkerArgs(["a.mjs", "--concurrency", "two"], {}), /--concurrency expects a whole number/);
  assert.throws(() => parseWorkerArgs([], {}), /expected one agent/);
  assert.equal(parseWorkerArgs(["a.mjs"], { CHECKPOINTD_WORKER_LEASE: "5s" })?.worker.leaseMs, 5_000);
});
