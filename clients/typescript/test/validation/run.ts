/**
 * `npm run test:validation`: runs LangGraph.js's checkpointer validation suite (every spec, plus
 * `deltaChannelHistoryTests`) against CheckpointdSaver on a real `checkpointd serve`, on SQLite
 * then Postgres (or the backends named in $CHECKPOINTD_VALIDATION_BACKENDS, comma-separated).
 * Prints `N passed, N failed` per backend and in total; exits non-zero on any failure.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { startVitest } from "vitest/node";

import { BACKENDS, type Backend } from "../server.js";

interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTests: number;
  testResults: Array<{ assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }>;
}

const here = dirname(fileURLToPath(import.meta.url));
const spec = join(here, "checkpointd.spec.js");

function backends(): Backend[] {
  const named = process.env["CHECKPOINTD_VALIDATION_BACKENDS"];
  if (named === undefined || named === "") return [...BACKENDS];
  return named.split(",").map((name) => {
    if (!(BACKENDS as readonly string[]).includes(name)) throw new Error(`unknown backend ${name}: use ${BACKENDS.join(", ")}`);
    return name as Backend;
  });
}

async function runOn(backend: Backend): Promise<{ passed: number; failed: number }> {
  const dir = mkdtempSync(join(tmpdir(), "checkpointd-validation-"));
  const outputFile = join(dir, "report.json");
  try {
    const vitest = await startVitest("test", [spec], {
      globals: true,
      include: [spec],
      exclude: [],
      dir: here,
      watch: false,
      testTimeout: 30_000,
      hookTimeout: 60_000,
      reporters: ["default", "json"],
      outputFile: { json: outputFile },
      provide: { CHECKPOINTD_BACKEND: backend },
    });
    await vitest.close();
    const report = JSON.parse(readFileSync(outputFile, "utf8")) as JsonReport;
    for (const file of report.testResults) {
      for (const test of file.assertionResults) {
        if (test.status === "failed") console.log(`FAILED ${test.fullName}\n  ${test.failureMessages.join("\n  ").slice(0, 2000)}`);
      }
    }
    const delta = report.testResults.flatMap((f) => f.assertionResults).filter((t) => t.fullName.includes("getDeltaChannelHistory"));
    console.log(`${backend}: getDeltaChannelHistory: ${delta.filter((t) => t.status === "passed").length} of ${delta.length} passed`);
    // A suite that could not load or whose hooks failed reports no failed test: count it.
    const failed = report.numFailedTests + (report.numTotalTests === 0 ? 1 : 0);
    console.log(`${backend}: ${report.numPassedTests} passed, ${failed} failed`);
    return { passed: report.numPassedTests, failed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let passed = 0;
let failed = 0;
for (const backend of backends()) {
  const result = await runOn(backend);
  passed += result.passed;
  failed += result.failed;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
