/**
 * Corruption is loud for every reader, not only the first (issue 30, DESIGN contract 13), in a
 * real LangGraph.js graph on SQLite and Postgres: the three newest checkpoints of a thread are
 * rotted in the server's database, then new node processes each read the thread and invoke the
 * graph. Under onCorrupt "raise" every one of them throws CorruptCheckpoints, on the read and on
 * the invoke, and writes nothing, so the next is as loud. Under "warn" the reader is told (a
 * warning on stderr naming the thread and the skipped checkpoints, `checkpointd_fallback` in the
 * metadata, in LangGraph's numbering and checkpointd's); its invoke saves above the quarantined
 * checkpoints, which repairs the thread, so the processes after it read quietly. No exactly-once
 * shipment is ever made twice: effects.log keeps one line per order.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { createCheckpointClient } from "../../src/index.js";
import { CheckpointdSaver, runId } from "../../src/langgraph/index.js";
import { BACKENDS, startServer, type TestServer } from "../server.js";
import { corruptState } from "../store-db.js";
import { lines } from "./fixtures/email.js";
import { buildShipGraph } from "./fixtures/ship.js";

const AGENT = fileURLToPath(new URL("./fixtures/ship-agent.js", import.meta.url));

interface Child {
  code: number | null;
  stderr: string;
  out: { fallback?: unknown; shipped?: string[]; readError?: string; invokeError?: string };
}

function runChild(server: TestServer, thread: string, root: string, onCorrupt: string, order: string): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGENT, server.baseUrl, thread, root, onCorrupt, order], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      try {
        resolve({ code, stderr, out: JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Child["out"] });
      } catch {
        reject(new Error(`no JSON line from the child (exit ${code}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

for (const backend of BACKENDS) {
  describe(`corruption is loud for every new process (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });

    test("three new processes each read and invoke a rotted thread: raise throws each time, warn is told, nothing ships twice", async () => {
      const thread = "ships";
      const root = mkdtempSync(join(tmpdir(), "cpd-every-reader-"));
      const graph = buildShipGraph(new CheckpointdSaver({ baseUrl: server.baseUrl }), root);
      for (const order of ["o1", "o2", "o3", "o4"]) await graph.invoke({ order }, { configurable: { thread_id: thread } });
      const shipments = () => lines(join(root, "effects.log")).map((line) => line.split(" ")[0]);
      assert.deepEqual(shipments(), ["o1", "o2", "o3", "o4"]);

      // Rot the three newest checkpoints (o4's invoke). LangGraph numbers its steps from -1
      // (the input), checkpointd from 0: the fallback names both.
      const run = runId(thread, "");
      const summaries = (await createCheckpointClient({ baseUrl: server.baseUrl }).listCheckpoints({ runId: run, descending: true })).checkpoints;
      const [a, b, c, served] = summaries;
      assert.ok(a && b && c && served, "at least four checkpoints");
      for (const rotted of [a, b, c]) corruptState(server, run, Number(rotted.step));
      const expected = {
        skipped_ids: [a.label, b.label, c.label],
        skipped_langgraph_steps: [a, b, c].map((s) => Number(s.step) - 1),
        skipped_steps: [a, b, c].map((s) => Number(s.step)),
        served_id: served.label,
      };
      assert.deepEqual([a, b, c].map((s) => Number(s.metadata["m.step"])), expected.skipped_langgraph_steps);

      for (let i = 0; i < 3; i++) {
        const child = await runChild(server, thread, root, "raise", "o4");
        assert.equal(child.code, 0, child.stderr);
        assert.deepEqual(child.out, { readError: "CorruptCheckpoints", invokeError: "CorruptCheckpoints" }, `raising process ${i}`);
        assert.match(child.stderr, /thread "ships" ns "": skipped corrupt checkpoints .*refused \(onCorrupt "raise"\)/, `raising process ${i}`);
        assert.ok(child.stderr.includes(a.label), child.stderr);
      }
      assert.deepEqual(shipments(), ["o1", "o2", "o3", "o4"]);

      // Under "warn" the first new process is served o3's last checkpoint and told so; it
      // re-submits o4, whose shipment is replayed from the journal, and saves above the rot.
      const first = await runChild(server, thread, root, "warn", "o4");
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(first.out.fallback, expected);
      assert.match(first.stderr, /thread "ships" ns "": skipped corrupt checkpoints/);
      assert.ok(first.stderr.includes(`serving ${served.label}`), first.stderr);
      assert.deepEqual(first.out.shipped, ["shipped o1", "shipped o2", "shipped o3", "shipped o4"]);
      // Repaired by that save: the next processes read quietly and still ship nothing twice.
      for (let i = 0; i < 2; i++) {
        const child = await runChild(server, thread, root, "raise", "o4");
        assert.equal(child.code, 0, child.stderr);
        assert.equal(child.out.fallback, null);
        assert.equal(child.out.invokeError, undefined, child.stderr);
        assert.doesNotMatch(child.stderr, /skipped corrupt checkpoints/);
      }
      assert.deepEqual(shipments(), ["o1", "o2", "o3", "o4"]);
    });
  });
}
