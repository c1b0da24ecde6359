/**
 * The reference example (examples/crash-and-resume.mjs) run as a user runs it, with plain node
 * against a real server: it imports the package by its name (`@checkpointd/client`, resolved to
 * this package's dist/, so `npm run build` comes first) and prints what the README promises.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { startServer, type TestServer } from "./server.js";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = `${PACKAGE}examples/crash-and-resume.mjs`;

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => server.stop());

test("the example crashes at step 5, resumes from step 3 and replays two lookups", async () => {
  assert.ok(existsSync(`${PACKAGE}dist/index.js`), "the example imports the built package: run npm run build first");
  const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE, "--server", server.baseUrl.replace("http://", "")], {
    cwd: PACKAGE,
    timeout: 60_000,
  });
  assert.match(stdout, /step 5: simulated crash/);
  assert.match(stdout, /^recoveredFromStep=3$/m);
  assert.match(stdout, /^lookup calls: 8 for 8 steps \(2 replayed from the journal\)$/m);
  assert.match(stdout, /result \{"facts":8,"messages":8\}/);
});
