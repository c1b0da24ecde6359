// Never lose an operator's input (issue 34), in a real browser against a real server and the
// real worker: while task events arrive (other tasks enqueued by the CLI, claimed and parked by
// the worker, and rejected by the CLI), an operator types a comment at human speed, then Tabs
// to Reject and presses it, or clicks Reject with the mouse at human speed; the decision
// recorded carries the whole comment, on the right task. And a session that ends while a
// comment is half typed keeps the draft through the sign-in page; typing keeps it alive.

import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, launchBrowser, newPage, signIn } from "./lib/harness.mjs";
import { startWorker, enqueue, showTask, tasksCli, eventually } from "./lib/worker.mjs";

// Every test gets its own server and worker: the churn of one never moves the cards of the next.
let cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  cleanups = [];
});

/** A server (with `serverArgs`), a parking worker, keys, a browser page signed in on the inbox. */
async function setup(serverArgs = []) {
  const server = await startServer(serverArgs);
  cleanups.push(() => server.stop());
  const agent = await server.createKey("agent", "default", "worker");
  const operator = await server.createKey("operator", "default", "alice");
  const worker = startWorker(server, agent, [
    "--approval-at-step", "2",
    "--side-effect-file", join(server.dir, "emails.txt"),
  ]);
  cleanups.push(() => worker.stop());
  const browser = await launchBrowser();
  cleanups.push(() => browser.close());
  const page = await newPage(browser);
  await signIn(page, server, operator);
  await page.goto(`${server.consoleUrl}/inbox`);
  return { server, agent, operator, page };
}

/** Parks a task for `runId` and waits until its card is in the open inbox. */
async function parked(env, runId) {
  const taskId = await enqueue(env.server, env.agent, runId);
  await env.page.locator(`article#task-${taskId}`).waitFor({ timeout: 30_000 });
  return taskId;
}

/**
 * Real task events until `stop()`: each round enqueues a task (the worker claims it and parks
 * it: task.input_required) and rejects the one parked before (task.rejected). Their ids are
 * newer than the target's, so their cards come and go below it.
 */
function churn(env) {
  let running = true;
  const made = [];
  const loop = (async () => {
    for (let round = 0; running; round += 1) {
      made.push(await enqueue(env.server, env.agent, `churn-${round}`));
      const earlier = made[made.length - 2];
      if (earlier) {
        const task = await showTask(env.server, env.agent, earlier);
        if (task.state === "input_required" && !task.approval?.decision) {
          await tasksCli(env.server, env.operator, [
            "reject", earlier, "--by", "churn", "--comment", "churn",
          ]).catch(() => {});
        }
      }
      await new Promise((done) => setTimeout(done, 150));
    }
  })();
  return {
    made,
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** The page's count of live events received and of patches applied. */
function counts(page) {
  return page.evaluate(() => ({
    events: Number(document.querySelector("main").dataset.liveEvents || 0),
    patched: Number(document.querySelector("main").dataset.refreshed || 0),
  }));
}

/** Waits until the page has received (or applied) a live change after `before`. */
async function anotherChange(page, before) {
  await eventually("a live change on the page", async () => {
    const now = await counts(page);
    return now.events > before.events || now.patched > before.patched;
  }, 15_000);
}

/** The decision recorded on `taskId`, once there is one. */
async function decision(env, taskId) {
  return eventually(`a decision on ${taskId}`, async () => {
    const task = await showTask(env.server, env.agent, taskId);
    return task.approval?.decision ? task.approval : null;
  });
}

const COMMENT =
  "Rejected: the recipient list includes an external domain; ask legal first (ticket OPS-4471).";

test("typing a comment while events arrive, then Tab to Reject and Enter, records the whole comment", async () => {
  const env = await setup();
  const { page } = env;
  const target = await parked(env, "run-target");
  const events = churn(env);
  cleanups.push(() => events.stop());
  const start = await counts(page);
  await page.click(`#comment-${target}`);
  await page.keyboard.type(COMMENT, { delay: 45 });
  const typed = await counts(page);
  assert.ok(typed.patched - start.patched >= 2, `the page was patched while typing: ${JSON.stringify([start, typed])}`);
  assert.equal(await page.inputValue(`#comment-${target}`), COMMENT);

  // One comment box, then Approve, then Reject: two Tabs.
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  const onReject = () => page.evaluate((id) => {
    const active = document.activeElement;
    return active?.tagName === "BUTTON" && active.textContent === "Reject" &&
      active.getAttribute("formaction") === `/tasks/${id}/reject`;
  }, target);
  assert.ok(await onReject(), "Tab moves to this card's Reject button");
  // A change arrives while the button has the focus; the focus stays on it.
  await anotherChange(page, await counts(page));
  await page.waitForTimeout(400);
  assert.ok(await onReject(), "the focus is still on Reject after a live change, not on <body>");

  await Promise.all([page.waitForNavigation({ timeout: 10_000 }), page.keyboard.press("Enter")]);
  await events.stop();
  const decided = await decision(env, target);
  assert.equal(decided.decision, "rejected");
  assert.equal(decided.comment, COMMENT);
  for (const other of events.made) {
    const task = await showTask(env.server, env.agent, other);
    assert.notEqual(task.approval?.comment, COMMENT, `only the target carries the comment (${other})`);
  }
});

test("a human-speed mouse click on Reject while events arrive rejects that task with the whole comment", async () => {
  const env = await setup();
  const { page } = env;
  const target = await parked(env, "run-target");
  const events = churn(env);
  cleanups.push(() => events.stop());
  await page.click(`#comment-${target}`);
  await page.keyboard.type(COMMENT, { delay: 30 });

  const button = page.locator(`form[action="/tasks/${target}/approve"] button.reject`);
  const box = await button.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 12 });
  await page.waitForTimeout(120);
  await page.mouse.down();
  // Held as a person holds a button: long enough for a live change to arrive meanwhile.
  await anotherChange(page, await counts(page));
  await page.waitForTimeout(150);
  await Promise.all([page.waitForNavigation({ timeout: 10_000 }), page.mouse.up()]);
  await events.stop();

  const decided = await decision(env, target);
  assert.equal(decided.decision, "rejected");
  assert.equal(decided.comment, COMMENT);
});

test("a draft survives the end of its session: sign in again and it is back; typing keeps a session alive", async () => {
  const env = await setup(["--console-session-ttl", "3s"]);
  const { page, server, operator } = env;
  const first = await parked(env, "run-typed");
  const second = await parked(env, "run-idle");

  // Typing for longer than the session's 3 s idle life keeps it alive (activity pings).
  await page.click(`#comment-${first}`);
  await page.keyboard.type("kept alive by typing, slowly, for five seconds or so.", { delay: 100 });
  await Promise.all([
    page.waitForNavigation({ timeout: 10_000 }),
    page.click(`form[action="/tasks/${first}/approve"] button.reject`),
  ]);
  assert.equal(new URL(page.url()).pathname, "/inbox", "sent, not sent to sign in");
  assert.equal((await decision(env, first)).comment, "kept alive by typing, slowly, for five seconds or so.");

  // Half a comment, then idle past the session's end.
  const draft = "Not until the invoice is checked";
  await page.click(`#comment-${second}`);
  await page.keyboard.type(draft, { delay: 40 });
  await page.waitForTimeout(4_500);
  assert.match(await page.textContent("#session-notice"), /session has ended/);
  assert.equal(await page.inputValue(`#comment-${second}`), draft, "the page did not jump away");
  await Promise.all([
    page.waitForURL(/\/sign-in$/, { timeout: 10_000 }),
    page.click(`form[action="/tasks/${second}/approve"] button.reject`),
  ]);
  const still = await showTask(server, env.agent, second);
  assert.equal(still.approval?.decision ?? "", "", "nothing was sent into the ended session");

  await signIn(page, server, operator);
  // Back on the page the person was on (the inbox, as it was after the first decision).
  await page.waitForURL(/\/inbox\?done=rejected/);
  await page.waitForFunction(
    ([id, text]) => document.getElementById(`comment-${id}`)?.value === text,
    [second, draft],
    { timeout: 10_000 },
  );
  await Promise.all([
    page.waitForNavigation({ timeout: 10_000 }),
    page.click(`form[action="/tasks/${second}/approve"] button.reject`),
  ]);
  const decided = await decision(env, second);
  assert.equal(decided.decision, "rejected");
  assert.equal(decided.comment, draft);
});

test("a card decided elsewhere while its Reject button has the focus keeps the focus and the comment", async () => {
  const env = await setup();
  const { page } = env;
  const target = await parked(env, "run-elsewhere");
  await page.click(`#comment-${target}`);
  await page.keyboard.type("mine", { delay: 40 });
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  const before = await counts(page);
  // Another operator decides it over the API: the fresh page has no decision forms for it.
  await tasksCli(env.server, env.operator, ["approve", target, "--by", "bob", "--comment", "theirs"]);
  await eventually("the page patched after the decision", async () =>
    (await counts(page)).patched > before.patched, 15_000);
  const state = await page.evaluate((id) => ({
    focus: document.activeElement?.tagName,
    action: document.activeElement?.getAttribute("formaction"),
    comment: document.getElementById(`comment-${id}`)?.value,
  }), target);
  assert.deepEqual(state, { focus: "BUTTON", action: `/tasks/${target}/reject`, comment: "mine" });
});
