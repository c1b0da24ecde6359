/**
 * An agent process killed with SIGKILL mid-run is recovered by a new process, on SQLite and on
 * Postgres: it resumes from the latest checkpoint (step 3), no journalled tool runs again, and
 * the email left in doubt (intent, no result) is re-run once with the same idempotency key,
 * which the tool honours, so exactly one email goes out.
 */

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { BACKENDS, startServer, type TestServer } from "./server.js";

const AGENT = fileURLToPath(new URL("./recovery-crash-agent.js", import.meta.url));

for (const backend of BACKENDS) {
  describe(`SIGKILL on ${backend}`, () => {
    let server: TestServer;
    let dir: string;
    before(async () => {
      server = await startServer({ backend });
      dir = mkdtempSync(join(tmpdir(), "checkpointd-sigkill-"));
    });
    after(async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test("a new process resumes a SIGKILLed agent's run without re-running its tools", async () => {
      const first = spawn(process.execPath, [AGENT, server.baseUrl, "killed-run", dir, "--hang-after-email"], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      first.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => first.once("exit", (_code, signal) => resolve(signal)));
      const deadline = Date.now() + 30_000;
      while (!existsSync(join(dir, "hanging")) && first.exitCode === null && Date.now() < deadline) await sleep(50);
      assert.equal(first.exitCode, null, `the agent exited before step 5's email: ${stderr}`);
      assert.ok(existsSync(join(dir, "hanging")), "step 5's email was never sent");
      first.kill("SIGKILL");
      assert.equal(await exited, "SIGKILL");
      assert.equal(readFileSync(join(dir, "effects.log"), "utf8").split("\n").filter(Boolean).length, 1);

      const second = await promisify(execFile)(process.execPath, [AGENT, server.baseUrl, "killed-run", dir], { timeout: 60_000 });
      const result = JSON.parse(second.stdout.trim().split("\n").at(-1) ?? "") as Record<string, unknown>;
      assert.equal(result["recoveredFromStep"], 3);
      assert.deepEqual(result["result"], { total: 360 });

      const tools = readFileSync(join(dir, "tools.log"), "utf8").split("\n").filter(Boolean);
      // Every lookup ran exactly once across both processes: steps 4 and 5 were replayed.
      assert.deepEqual(tools.filter((line) => line.startsWith("lookup@")), [1, 2, 3, 4, 5, 6, 7, 8].map((s) => `lookup@${s}`));
      const emails = tools.filter((line) => line.startsWith("send_email@"));
      assert.equal(emails.length, 2, "the email in doubt ran once more, with its key");
      assert.equal(emails[0], emails[1]);
      const effects = readFileSync(join(dir, "effects.log"), "utf8").split("\n").filter(Boolean);
      assert.equal(effects.length, 1);
      assert.equal((JSON.parse(effects[0]!) as { key: string }).key, emails[0]!.split("@")[1]);
      assert.equal(result["toolsReplayed"], 2);
    });
  });
}
