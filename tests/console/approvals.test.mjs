// Approvals in a real browser, with a real worker (the bundled demo agent asks for approval
// before step 2's email, which appends a line to a file): a parked task appears in the open
// inbox without a reload; approving it lets the worker finish with the email sent exactly
// once; rejecting another finishes it with no email; the approve button is reachable with Tab.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, launchBrowser, newPage, signIn, screenshot } from "./lib/harness.mjs";
import { startWorker, enqueue, showTask, eventually, emailsSent } from "./lib/worker.mjs";

let server;
let browser;
let worker;
let agent;
let operator;
let spool;

before(async () => {
  server = await startServer();
  agent = await server.createKey("agent", "default", "worker");
  operator = await server.createKey("operator", "default", "alice");
  spool = join(server.dir, "emails.txt");
  worker = startWorker(server, agent, [
    "--approval-at-step", "2",
    "--side-effect-file", spool,
    "--strategy", "every_step",
  ]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await worker?.stop();
  await server?.stop();
});

/** Opens the inbox and marks the document, so a reload (which would drop the mark) shows. */
async function openInbox() {
  const page = await newPage(browser);
  await signIn(page, server, operator);
  await page.goto(`${server.consoleUrl}/inbox`);
  await page.evaluate(() => {
    window.sameDocument = true;
  });
  return page;
}

/** The inbox card of `taskId`, once the live stream has brought it in. */
async function cardAppears(page, taskId) {
  const card = page.locator(`#task-${taskId}`);
  await card.waitFor({ timeout: 30_000 });
  assert.equal(await page.evaluate(() => window.sameDocument), true, "the inbox was not reloaded");
  return card;
}

/** The emails the demo agent sent for `runId` at step 2 (the approved one). */
async function approvedEmails(runId) {
  return (await emailsSent(spool)).filter((line) => line === `${runId} step-2/send_email`);
}

test("a parked task appears in the open inbox without a reload; approving it sends the email once", async () => {
  const page = await openInbox();
  assert.match(await page.textContent("main"), /Nothing is waiting/);
  const taskId = await enqueue(server, agent, "run-approve");
  const card = await cardAppears(page, taskId);
  assert.match(await card.textContent(), /send_email step-2/);
  await screenshot(page, "inbox");

  // Keyboard: Tab from the top of the page reaches this card's Approve button.
  const approve = card.getByRole("button", { name: "Approve" });
  await page.locator("body").focus();
  let reached = false;
  for (let presses = 0; presses < 40 && !reached; presses += 1) {
    await page.keyboard.press("Tab");
    reached = await approve.evaluate((button) => document.activeElement === button);
  }
  assert.ok(reached, "Tab reaches the Approve button");
  await page.fill(`#comment-${taskId}`, "go ahead");
  await approve.focus();
  await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
  assert.match(await page.textContent("main"), /approve/i);

  const done = await eventually("the approved task to complete", async () => {
    const task = await showTask(server, agent, taskId);
    return task.state === "completed" ? task : null;
  });
  // Recorded as the operator's key (ckpt_<id>_<secret>), as over gRPC.
  assert.equal(done.approval.decided_by, `key:${operator.split("_")[1]}`);
  assert.equal(done.approval.decision, "approved");
  assert.equal(done.approval.comment, "go ahead");
  assert.deepEqual(await approvedEmails("run-approve"), ["run-approve step-2/send_email"]);
  await page.context().close();
});

test("rejecting a parked task with a comment finishes it without the email", async () => {
  const page = await openInbox();
  const taskId = await enqueue(server, agent, "run-reject");
  const card = await cardAppears(page, taskId);
  await page.fill(`#comment-${taskId}`, "not today");
  await Promise.all([
    page.waitForNavigation(),
    card.getByRole("button", { name: "Reject" }).click(),
  ]);
  const done = await eventually("the rejected task to complete", async () => {
    const task = await showTask(server, agent, taskId);
    return task.state === "completed" ? task : null;
  });
  assert.equal(done.approval.decision, "rejected");
  assert.equal(done.approval.comment, "not today");
  assert.deepEqual(await approvedEmails("run-reject"), []);
  // The inbox no longer lists it.
  await page.goto(`${server.consoleUrl}/inbox`);
  assert.equal(await page.locator(`#task-${taskId}`).count(), 0);
  await page.context().close();
});
