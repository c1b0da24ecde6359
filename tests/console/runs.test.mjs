// A run in a real browser, over Postgres, with a real worker: the open run page follows new
// checkpoints without a reload; two checkpoints are compared (the diff is shown); a checkpoint
// corrupted in the database is shown as corrupt after a tenant verification; "/" focuses the
// runs search.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, newPage, signIn, screenshot } from "./lib/harness.mjs";
import { startWorker, enqueue, showTask, eventually } from "./lib/worker.mjs";

const STEPS = 8;
let server;
let browser;
let worker;
let agent;
let page;

before(async () => {
  server = await startServer([], { backend: process.env.CONSOLE_RUNS_BACKEND ?? "postgres" });
  agent = await server.createKey("agent", "default", "worker");
  const operator = await server.createKey("operator", "default", "alice");
  worker = startWorker(server, agent, ["--strategy", "every_step", "--step-delay", "400ms"]);
  browser = await launchBrowser();
  page = await newPage(browser);
  await signIn(page, server, operator);
});

after(async () => {
  await browser?.close();
  await worker?.stop();
  await server?.stop();
});

/** The "Latest step" the run page shows. */
function latestStep() {
  return page.evaluate(() => {
    const term = [...document.querySelectorAll("main dt")].find(
      (dt) => dt.textContent === "Latest step",
    );
    const shown = term.nextElementSibling.textContent;
    // A run whose worker has resumed it but saved nothing yet shows "none".
    return shown === "none" ? 0 : Number(shown);
  });
}

test("the open run page follows new checkpoints without a reload", async () => {
  const taskId = await enqueue(server, agent, "run-compare", { steps: STEPS });
  await eventually("the run's first checkpoint", async () => {
    const answer = await page.goto(`${server.consoleUrl}/runs/run-compare`);
    return answer.status() === 200;
  });
  await page.evaluate(() => {
    window.sameDocument = true;
  });
  const first = await latestStep();
  assert.ok(first < STEPS, `the page opened before the run ended (at step ${first})`);
  await eventually("the page to show the last step", async () => (await latestStep()) === STEPS);
  assert.equal(await page.evaluate(() => window.sameDocument), true, "the run page was not reloaded");
  await eventually("the task to complete", async () =>
    (await showTask(server, agent, taskId)).state === "completed");
});

test("two checkpoints compared show their difference", async () => {
  await page.goto(`${server.consoleUrl}/runs/run-compare`);
  await page.selectOption("#from", "1");
  await page.selectOption("#to", "3");
  await Promise.all([page.waitForNavigation(), page.click("button:text-is('Compare')")]);
  const diff = page.locator("pre[aria-label=Difference]");
  assert.match(await page.textContent("main"), /Step 1 → step 3/);
  assert.ok((await diff.locator("ins").count()) > 0, "lines added from step 1 to 3");
  assert.match(await diff.textContent(), /\+ .*fact #2/);
  await page.locator("h2:text-is('Compare two checkpoints')").evaluate((h) => h.scrollIntoView());
  await screenshot(page, "run-diff");
});

test("the run page opens comparing the previous checkpoint with the latest, in view", async () => {
  await page.goto(`${server.consoleUrl}/runs/run-compare`);
  assert.match(await page.textContent("#diff"), new RegExp(`Step ${STEPS - 1} → step ${STEPS}`));
  assert.equal(await page.inputValue("#from"), String(STEPS - 1));
  assert.equal(await page.inputValue("#to"), String(STEPS));
  const box = await page.locator("pre[aria-label=Difference]").boundingBox();
  assert.ok(box && box.y < 800, `the diff starts within the first screen (at ${box?.y})`);
  await screenshot(page, "run-diff-default");
});

test("a checkpoint corrupted in the database is shown as corrupt after a verification", async () => {
  const flip =
    server.backend === "sqlite"
      ? "state = CAST((CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(state, 2) AS BLOB)"
      : "state = set_byte(state, 0, (get_byte(state, 0) + 1) % 256)";
  await server.sql(`UPDATE checkpoints SET ${flip} WHERE run_id = 'run-compare' AND step = 2`);
  await page.goto(`${server.consoleUrl}/integrity`);
  await Promise.all([
    page.waitForNavigation(),
    page.click("button:text-is('Verify the tenant now')"),
  ]);
  assert.match(await page.textContent("main"), /CORRUPT/);
  await page.goto(`${server.consoleUrl}/runs/run-compare`);
  const rows = page.locator("tr", { has: page.locator("a:text-is('2')") });
  assert.match(await rows.first().textContent(), /CORRUPT/);
  assert.equal(await page.locator("td >> text=CORRUPT").count(), 1, "only step 2 is corrupt");
  assert.equal(await page.locator("td >> text=/^valid$/").count(), STEPS - 1);
  await page.locator("h2:text-is('Checkpoints')").evaluate((h) => h.scrollIntoView());
  await screenshot(page, "run-timeline-corrupt");
  // Back on the integrity page, the quarantined checkpoint is listed without verifying again,
  // with the reason in words and the repair.
  await page.goto(`${server.consoleUrl}/integrity`);
  const listed = await page.textContent("#quarantined");
  assert.match(listed, /1 checkpoint\(s\) quarantined/);
  assert.match(listed, /stored checksum does not match its bytes/);
  assert.match(listed, /checkpointd runs drop-quarantined run-compare/);
  await screenshot(page, "integrity-quarantined");
});

test("'/' focuses the runs search and the run is found by its prefix", async () => {
  await page.goto(`${server.consoleUrl}/runs`);
  await page.locator("body").focus();
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "prefix");
  await page.keyboard.type("run-comp");
  await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
  assert.equal(await page.locator("main a:text-is('run-compare')").count(), 1);
});
