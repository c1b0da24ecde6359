/**
 * The LangGraph.js example (examples/langgraph.mjs) run as a user runs it, with plain node against
 * a real server: it imports the package by its name (`@checkpointd/client/langgraph`, resolved to
 * this package's dist/, so `npm run build` comes first), runs under LangGraph.js's defaults and
 * prints what the README promises. The example names the README's address; the copy run here
 * names the test server's instead, and lives in dist-test/ so its imports resolve as the
 * example's do.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { startServer, type TestServer } from "../server.js";

const PACKAGE = fileURLToPath(new URL("../../../", import.meta.url));
const EXAMPLE = `${PACKAGE}examples/langgraph.mjs`;
const ADDRESS = 'baseUrl: "http://127.0.0.1:50051"';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => server.stop());

test("the LangGraph.js example replies to hi on thread t-1 and prints it", async () => {
  assert.ok(existsSync(`${PACKAGE}dist/langgraph/index.js`), "the example imports the built package: run npm run build first");
  const source = readFileSync(EXAMPLE, "utf8");
  assert.ok(source.includes(ADDRESS), `the example names ${ADDRESS}`);
  mkdirSync(`${PACKAGE}dist-test/examples`, { recursive: true });
  const copy = `${PACKAGE}dist-test/examples/langgraph.mjs`;
  writeFileSync(copy, source.replace(ADDRESS, `baseUrl: ${JSON.stringify(server.baseUrl)}`));

  const { stdout } = await promisify(execFile)(process.execPath, [copy], { cwd: PACKAGE, timeout: 60_000 });

  assert.equal(stdout, "you said: hi\n");
});
