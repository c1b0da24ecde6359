// The tasks page in a real browser: a task that a real worker failed until its attempts ran
// out is listed as a dead letter with its last error, and Requeue puts it back in the queue.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, newPage, signIn, screenshot } from "./lib/harness.mjs";
import { startWorker, enqueue, showTask, eventually } from "./lib/worker.mjs";

let server;
let browser;
let agent;
let operator;

before(async () => {
  server = await startServer();
  agent = await server.createKey("agent", "default", "worker");
  operator = await server.createKey("operator", "default", "alice");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("a dead task is listed with its last error and requeued from the tasks page", async () => {
  // Every step fails transiently and no resurrection is allowed: one attempt, then dead.
  const worker = startWorker(server, agent, [
    "--transient-probability", "1",
    "--max-resurrections", "0",
  ]);
  let taskId;
  try {
    taskId = await enqueue(server, agent, "run-dead", { steps: 3 }, ["--max-attempts", "1"]);
    await eventually("the task to go dead", async () =>
      (await showTask(server, agent, taskId)).state === "dead");
  } finally {
    // Stopped first, so the requeued task stays queued for the assertion below.
    await worker.stop();
  }

  const page = await newPage(browser);
  await signIn(page, server, operator);
  await page.goto(`${server.consoleUrl}/tasks?state=dead`);
  const requeue = page.locator(`form[action="/tasks/${taskId}/requeue"] button`);
  assert.equal(await requeue.count(), 1);
  assert.match(await page.textContent("main"), /simulated model timeout/);
  await screenshot(page, "tasks-dead");
  await Promise.all([page.waitForNavigation(), requeue.click()]);
  assert.match(await page.textContent("main"), /requeue/i);
  const task = await showTask(server, agent, taskId);
  assert.equal(task.state, "pending");
  await page.context().close();
});
