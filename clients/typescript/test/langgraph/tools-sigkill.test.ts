/**
 * A LangGraph.js process SIGKILLed right after an exactly-once tool's email went out (before the
 * tool's result or the node's writes were saved) is resumed by a new process: the call is in
 * doubt, and its policy settles it (killed after the result was journalled, the call is done and
 * its result is replayed). `retry_with_key` sends again under the same key (the
 * provider delivers once); `ask` stops the graph at an interrupt naming the call, and
 * `Command({ resume })` settles it through the graph's own resume path. The processes run the
 * compiled fixture graph (fixtures/email-agent.ts) under LangGraph.js's default durability.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { createCheckpointClient } from "../../src/index.js";
import { IN_DOUBT_INTERRUPT, runId } from "../../src/langgraph/index.js";
import { BACKENDS, startServer, type TestServer } from "../server.js";
import { lines } from "./fixtures/email.js";

const AGENT = fileURLToPath(new URL("./fixtures/email-agent.js", import.meta.url));

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runAgent(server: TestServer, thread: string, root: string, policy: string, ...flags: string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGENT, server.baseUrl, thread, root, policy, ...flags], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

function outcome(exit: Exit): { last: unknown; interrupts: Record<string, unknown>[] } {
  assert.equal(exit.code, 0, exit.stderr);
  return JSON.parse(exit.stdout.trim().split("\n").at(-1) ?? "") as { last: unknown; interrupts: Record<string, unknown>[] };
}

for (const backend of BACKENDS) {
  describe(`a graph SIGKILLed after a tool's effect (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });

    const inDoubtCalls = async (thread: string) =>
      (await createCheckpointClient({ baseUrl: server.baseUrl }).getJournal({ runId: runId(thread, "") })).inDoubt
        .filter((c) => c.toolName === "send_email");

    /** Runs the graph until it SIGKILLs itself after the send; returns the in-doubt call id. */
    async function killAfterTheEmail(thread: string, root: string, policy: string): Promise<string> {
      const first = await runAgent(server, thread, root, policy, "--die-after-effect");
      assert.equal(first.signal, "SIGKILL", first.stderr);
      assert.equal(lines(join(root, "outbox.log")).length, 1);
      const inDoubt = await inDoubtCalls(thread);
      assert.equal(inDoubt.length, 1);
      assert.equal(inDoubt[0]!.idempotencyKey, lines(join(root, "attempts.log"))[0]);
      return inDoubt[0]!.callId;
    }

    test("killed after the result is journalled, a new process replays it and sends nothing", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-kill-"));
      const first = await runAgent(server, "email/replay", root, "fail", "--die-after-result");
      assert.equal(first.signal, "SIGKILL", first.stderr);
      assert.deepEqual(await inDoubtCalls("email/replay"), []);

      // `fail` would throw for an in-doubt call: the call is done, so its result is replayed.
      const resumed = outcome(await runAgent(server, "email/replay", root, "fail"));

      assert.deepEqual(resumed, { last: "done: sent to ada@example.com", interrupts: [] });
      assert.equal(lines(join(root, "attempts.log")).length, 1);
      assert.equal(lines(join(root, "outbox.log")).length, 1);
    });

    test("retry_with_key resends under the same key and the email is delivered once", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-kill-"));
      await killAfterTheEmail("email/retry", root, "retry_with_key");

      const resumed = outcome(await runAgent(server, "email/retry", root, "retry_with_key"));

      assert.deepEqual(resumed, { last: "done: sent to ada@example.com", interrupts: [] });
      const attempts = lines(join(root, "attempts.log"));
      assert.equal(attempts.length, 2);
      assert.equal(attempts[0], attempts[1]); // one key, twice
      assert.equal(lines(join(root, "outbox.log")).length, 1); // delivered once
      assert.deepEqual(await inDoubtCalls("email/retry"), []);
    });

    test("ask stops at an interrupt naming the call, and a skip resume settles it", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-kill-"));
      const callId = await killAfterTheEmail("email/ask", root, "ask");

      const stopped = outcome(await runAgent(server, "email/ask", root, "ask"));

      assert.equal(stopped.interrupts.length, 1);
      const question = stopped.interrupts[0]!;
      assert.equal(question["type"], IN_DOUBT_INTERRUPT);
      assert.equal(question["call_id"], callId);
      assert.equal(question["tool_name"], "send_email");
      assert.equal(question["idempotency_key"], lines(join(root, "attempts.log"))[0]);
      assert.equal(lines(join(root, "attempts.log")).length, 1); // nothing re-sent while asking

      const skip = JSON.stringify({ action: "skip", result: "sent (checked by a human)" });
      const settled = outcome(await runAgent(server, "email/ask", root, "ask", "--resume", skip));

      assert.deepEqual(settled, { last: "done: sent (checked by a human)", interrupts: [] });
      assert.equal(lines(join(root, "attempts.log")).length, 1); // the human's answer, not a new send
      assert.equal(lines(join(root, "outbox.log")).length, 1);
      assert.deepEqual(await inDoubtCalls("email/ask"), []);
    });

    test("ask answered retry resends under the same key", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-kill-"));
      await killAfterTheEmail("email/ask-retry", root, "ask");
      assert.equal(outcome(await runAgent(server, "email/ask-retry", root, "ask")).interrupts.length, 1);

      const settled = outcome(await runAgent(server, "email/ask-retry", root, "ask", "--resume", '"retry"'));

      assert.deepEqual(settled, { last: "done: sent to ada@example.com", interrupts: [] });
      const attempts = lines(join(root, "attempts.log"));
      assert.equal(attempts.length, 2);
      assert.equal(attempts[0], attempts[1]);
      assert.equal(lines(join(root, "outbox.log")).length, 1);
    });
  });
}
