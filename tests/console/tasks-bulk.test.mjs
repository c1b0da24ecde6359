// The tasks pages in a real browser (issue 34): the state tabs count the tasks, the page opens
// on the dead letters, a task's own page shows it and asks before cancelling, and a bulk
// requeue says how many tasks it will requeue before it does.

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

test("tasks are counted by state, shown in full, and requeued in bulk after a preview", async () => {
  // Every step fails transiently and no resurrection is allowed: one attempt, then dead.
  const worker = startWorker(server, agent, [
    "--transient-probability", "1",
    "--max-resurrections", "0",
  ]);
  const ids = [];
  try {
    for (const run of ["run-bulk-1", "run-bulk-2"]) {
      ids.push(await enqueue(server, agent, run, { steps: 3 }, ["--max-attempts", "1"]));
    }
    await eventually("both tasks to go dead", async () => {
      const states = await Promise.all(ids.map(async (id) => (await showTask(server, agent, id)).state));
      return states.every((state) => state === "dead");
    });
  } finally {
    await worker.stop();
  }

  const page = await newPage(browser);
  await signIn(page, server, operator);
  // No task waits for a decision, so the page opens on the dead letters, counted.
  await page.goto(`${server.consoleUrl}/tasks`);
  assert.match(await page.textContent("caption"), /Tasks in state dead/);
  assert.equal(await page.textContent("[data-key=count-dead]"), "(2)");
  assert.equal(await page.textContent("[data-key=count-pending]"), "(0)");
  await screenshot(page, "tasks-counts");

  // A task's own page, and the confirmation a cancel asks for (declined here).
  await Promise.all([page.waitForNavigation(), page.click(`a[href="/tasks/${ids[0]}"]`)]);
  assert.match(await page.textContent("main"), /simulated model timeout/);
  assert.equal(await page.locator(`form[action="/tasks/${ids[0]}/cancel"]`).count(), 0);
  await Promise.all([page.waitForNavigation(), page.click("a.danger:text-is('Cancel…')")]);
  assert.match(await page.textContent("#confirm"), /Cancel this task\?/);
  await screenshot(page, "task-cancel-confirm");
  await Promise.all([page.waitForNavigation(), page.click("a:text-is('No, keep it')")]);
  assert.equal((await showTask(server, agent, ids[0])).state, "dead");

  // Bulk requeue: the preview names the count, then the press requeues them all.
  await page.goto(`${server.consoleUrl}/tasks?state=dead`);
  await Promise.all([page.waitForNavigation(), page.click("a.bulk-requeue")]);
  assert.match(await page.textContent("#bulk"), /This will requeue 2 task\(s\) in state dead/);
  await screenshot(page, "tasks-bulk-preview");
  await Promise.all([
    page.waitForNavigation(),
    page.click("button:text-is('Yes, requeue 2 task(s)')"),
  ]);
  assert.match(await page.textContent("main"), /requeued 2 task\(s\); 0 refused/);
  for (const id of ids) {
    assert.equal((await showTask(server, agent, id)).state, "pending");
  }
  assert.equal(await page.textContent("[data-key=count-pending]"), "(2)");
  await page.context().close();
});
