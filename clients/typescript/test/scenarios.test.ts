/**
 * The shared client scenarios (tests/scenarios/*.json), each against a fresh real server on
 * SQLite and on Postgres, run through this package's typed clients by scenario-runner.ts; the
 * Python package runs the same files (clients/python/tests/test_scenarios.py).
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import { Runner, checkpointdBin, loadScenarios, type Scenario } from "./scenario-runner.js";
import { BACKENDS, startServer, type TestServer } from "./server.js";

const SCENARIOS = loadScenarios();

/** What this package has beyond the RPC client, of what a scenario may require. */
const HAS = new Set(["recovery-loop"]);

/** API keys made on the server's database, by name: token and tenant. */
function createKeys(server: TestServer, keys: NonNullable<Scenario["server"]>["keys"] = {}) {
  const made = new Map<string, { token: string; tenant: string }>();
  for (const [name, key] of Object.entries(keys)) {
    const out = execFileSync(
      checkpointdBin(),
      ["keys", "create", "--database", server.database, "--tenant", key.tenant, "--role", key.role]
        .concat(["--name", name, "--json"]),
      { encoding: "utf8" },
    );
    made.set(name, { token: (JSON.parse(out) as { key: string }).key, tenant: key.tenant });
  }
  return made;
}

test("the scenarios directory holds the suite", () => {
  for (const name of ["checksum", "corruption", "corruption-every-reader", "replay-mismatch", "all-corrupt", "intents", "approval-cli", "cross-language"]) {
    assert.ok(SCENARIOS.has(name), `no tests/scenarios/${name}.json`);
  }
  for (const [name, scenario] of SCENARIOS) assert.ok(scenario.summary && scenario.steps.length > 0, name);
});

for (const backend of BACKENDS) {
  describe(backend, () => {
    for (const [name, scenario] of SCENARIOS) {
      const missing = (scenario.requires ?? []).filter((need) => !HAS.has(need));
      if (missing.length > 0) {
        test.todo(`${name}: needs ${missing.join(", ")}`);
        continue;
      }
      test(`${name}: ${scenario.summary}`, async () => {
        const settings = scenario.server ?? {};
        const args = [...(settings.args ?? []), ...(settings.auth === undefined ? [] : ["--auth", settings.auth])];
        const server = await startServer({ backend, args });
        const work = mkdtempSync(join(tmpdir(), `checkpointd-scenario-${name}-`));
        try {
          await new Runner(server, createKeys(server, settings.keys), work).run(scenario);
        } catch (error) {
          throw new Error(`${String(error)}\nserver output tail:\n${server.output().slice(-4000)}`, { cause: error });
        } finally {
          await server.stop();
          rmSync(work, { recursive: true, force: true });
        }
      });
    }
  });
}
