// The inbox at scale, in a real browser: 300 tasks waiting for a decision (written straight
// into the SQLite database, each asking at a different age, for one of three actions) are
// paged 20 at a time with the view in the URL, filtered by action and age with counts, sorted
// either way, each card short enough that its Approve button is in view with it; approving
// from a filtered second page comes back to that page. Set UPDATE_DOCS_SCREENSHOTS=1 to
// refresh docs/images/console-inbox.png from it.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, launchBrowser, newPage, signIn, screenshot } from "./lib/harness.mjs";
import { showTask } from "./lib/worker.mjs";

const TASKS = 300;
const PAGE = 20;
const docsImage = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "images",
  "console-inbox.png");

/** Task `i`'s action (1-based): 120 emails, 120 invoices, 60 deploys. */
function actionOf(i) {
  return ["send_email step-2", "send_email step-2", "pay_invoice step-3", "pay_invoice step-3",
    "deploy_production step-4"][i % 5];
}

/** Task `i`'s id: a UUID that sorts by `i`. */
function idOf(i) {
  return `01900000-0000-7000-8000-${String(i).padStart(12, "0")}`;
}

let server;
let browser;
let agent;
let operator;
let page;

before(async () => {
  server = await startServer([], { backend: "sqlite" });
  agent = await server.createKey("agent", "default", "worker");
  operator = await server.createKey("operator", "default", "alice");
  // Task i asked i minutes ago; the step is in its details as the runner puts it there.
  const now = Date.now() * 1000;
  await server.sql(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${TASKS})
    INSERT INTO tasks (tenant, id, run_id, state, attempt, attempts_used, initial_delay_ms,
      multiplier, max_delay_ms, jitter, max_attempts, next_attempt_at, approval_action,
      approval_requested_at, created_at, updated_at, approval_details, input, auto_resume_hitl)
    SELECT 'default', printf('01900000-0000-7000-8000-%012d', i), printf('run-%03d', i),
      'input_required', 1, 0, 1000, 2.0, 60000, 0.0, 5, ${now},
      CASE i % 5 WHEN 0 THEN 'send_email step-2' WHEN 1 THEN 'send_email step-2'
        WHEN 2 THEN 'pay_invoice step-3' WHEN 3 THEN 'pay_invoice step-3'
        ELSE 'deploy_production step-4' END,
      ${now} - i * 60000000, ${now} - i * 60000000, ${now} - i * 60000000,
      CAST(printf('{"to":"ops","amount":%d,"step":%d}', i * 10, 2 + (i % 5) / 2) AS BLOB),
      CAST('{"steps":4}' AS BLOB), i % 2
    FROM n`);
  browser = await launchBrowser();
  page = await newPage(browser);
  await signIn(page, server, operator);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The task ids of the cards on the page, top to bottom. */
async function cardIds() {
  return page.$$eval("article.task", (cards) => cards.map((card) => card.id.replace(/^task-/, "")));
}

async function counts() {
  return (await page.textContent("#inbox-counts")).replace(/\s+/g, " ").trim();
}

test("300 waiting tasks are paged 20 at a time, oldest request first, with counts", async () => {
  await page.goto(`${server.consoleUrl}/inbox`);
  assert.equal(await counts(), `${TASKS} waiting; showing 1–${PAGE}.`);
  // The longest waiting first: task 300 asked 300 minutes ago.
  assert.deepEqual(await cardIds(), Array.from({ length: PAGE }, (_, n) => idOf(TASKS - n)));
  assert.match(await page.textContent(".pager"), /page 1 of 15/);
  assert.equal(await page.locator("a[rel=prev]").count(), 0);
  // The step the request names, not a checkpoint's.
  const first = page.locator(`#task-${idOf(300)}`);
  assert.match(await first.locator(".step").textContent(), /step 2/);
  assert.match(await first.textContent(), /waiting 5 h/);
  // Task 300 has auto_resume_hitl 0, 299 has 1: each card says what approving does.
  assert.match(await first.locator(".effect").textContent(), /parks the task until/);
  assert.match(await page.locator(`#task-${idOf(299)} .effect`).textContent(), /resumes the task at once/);
  // One comment box per task.
  assert.equal(await page.locator("article.task textarea").count(), PAGE);

  // Every card fits the window with its decision: scrolled to, its title and its Approve
  // button are both in view.
  const viewport = page.viewportSize();
  for (const card of await page.locator("article.task").all()) {
    await card.scrollIntoViewIfNeeded();
    const box = await card.boundingBox();
    assert.ok(box.height < viewport.height / 2, `a card is ${box.height}px tall`);
    const approve = await card.getByRole("button", { name: "Approve" }).boundingBox();
    assert.ok(approve.y >= 0 && approve.y + approve.height <= viewport.height);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  const shot = await screenshot(page, "inbox-300");
  if (process.env.UPDATE_DOCS_SCREENSHOTS === "1") {
    await page.screenshot({ path: docsImage });
  }
  assert.ok(shot);
});

test("next and previous pages keep the view in the URL and never overlap", async () => {
  await page.goto(`${server.consoleUrl}/inbox`);
  const pageOne = await cardIds();
  await Promise.all([page.waitForNavigation(), page.click("a[rel=next]")]);
  assert.match(page.url(), /[?&]page=2(&|$)/);
  assert.equal(await counts(), `${TASKS} waiting; showing 21–40.`);
  const pageTwo = await cardIds();
  assert.deepEqual(pageTwo, Array.from({ length: PAGE }, (_, n) => idOf(TASKS - PAGE - n)));
  assert.equal(pageOne.filter((id) => pageTwo.includes(id)).length, 0);
  await Promise.all([page.waitForNavigation(), page.click("a[rel=prev]")]);
  assert.deepEqual(await cardIds(), pageOne);
  // A bookmarked last page, newest first: the 20 that waited longest, newest of them first.
  await page.goto(`${server.consoleUrl}/inbox?sort=newest&page=15`);
  assert.deepEqual(await cardIds(), Array.from({ length: PAGE }, (_, n) => idOf(281 + n)));
  assert.equal(await page.locator("a[rel=next]").count(), 0);
  const past = await page.goto(`${server.consoleUrl}/inbox?page=0`);
  assert.equal(past.status(), 400);
  assert.match(await page.textContent("main"), /page must be a whole number/);
});

test("sorting newest first and filtering by action and age, with counts per action", async () => {
  await page.goto(`${server.consoleUrl}/inbox`);
  await page.selectOption("select[name=sort]", "newest");
  await Promise.all([page.waitForNavigation(), page.click("form.filters button")]);
  assert.match(page.url(), /sort=newest/);
  assert.deepEqual((await cardIds()).slice(0, 3), [idOf(1), idOf(2), idOf(3)]);

  const options = await page.$$eval("select[name=action] option", (all) => all.map((o) => o.textContent));
  assert.deepEqual(options, [
    `any (${TASKS})`,
    "pay_invoice step-3 (120)",
    "send_email step-2 (120)",
    "deploy_production step-4 (60)",
  ]);
  await page.selectOption("select[name=action]", "deploy_production step-4");
  await page.selectOption("select[name=age]", "1h");
  await Promise.all([page.waitForNavigation(), page.click("form.filters button")]);
  // Deploys are i = 4, 9, ..., 299; waiting at least an hour: i >= 60, so 64 to 299: 48.
  assert.equal(await counts(), `${TASKS} waiting, 48 match the filters; showing 1–20.`);
  const ids = await cardIds();
  assert.equal(ids[0], idOf(64));
  for (const id of ids) {
    assert.match(await page.locator(`#task-${id} h2`).textContent(), /^deploy_production step-4$/);
  }
  assert.match(await page.textContent(".pager"), /page 1 of 3/);
});

test("approving from a filtered second page decides that task and comes back to the page", async () => {
  const view = "action=pay_invoice%20step-3&page=2";
  await page.goto(`${server.consoleUrl}/inbox?${view}`);
  // Invoices are i = 2, 3, 7, 8, ...; oldest first, page 2 starts at the 21st from the top.
  const before = await cardIds();
  const chosen = before[0];
  const card = page.locator(`#task-${chosen}`);
  await page.fill(`#comment-${chosen}`, "paid from page two");
  await Promise.all([
    page.waitForNavigation(),
    card.getByRole("button", { name: "Approve" }).click(),
  ]);
  const url = new URL(page.url());
  assert.equal(url.pathname, "/inbox");
  assert.equal(url.searchParams.get("action"), "pay_invoice step-3");
  assert.equal(url.searchParams.get("page"), "2");
  assert.equal(url.searchParams.get("done"), "approved");
  // Task i has auto_resume_hitl = i % 2: an even one stays parked (and listed, decided, with
  // a Resume button); an odd one resumes and leaves the inbox.
  const task = await showTask(server, agent, chosen);
  assert.equal(task.approval.decision, "approved");
  assert.equal(task.approval.comment, "paid from page two");
  assert.equal(task.approval.decided_by, `key:${operator.split("_")[1]}`);
  const i = Number(chosen.slice(-12));
  if (i % 2 === 1) {
    assert.equal(task.state, "pending");
    assert.equal(await page.locator(`#task-${chosen}`).count(), 0);
    assert.match(await counts(), /^299 waiting, 119 match the filters;/);
  } else {
    assert.equal(task.state, "input_required");
    const parked = page.locator(`#task-${chosen}`);
    assert.match(await parked.textContent(), /Approved by alice/);
    assert.equal(await parked.getByRole("button", { name: "Resume the task" }).count(), 1);
  }
});
