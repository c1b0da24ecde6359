// Signing in to the console in a real browser: an operator key opens the inbox; an agent key,
// which may not use the console, is refused and stays on the sign-in page, answered exactly as
// an unknown key is (nothing tells which a refused key was).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, newPage, signIn } from "./lib/harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("an operator key signs in and lands on a console page", async () => {
  const operator = await server.createKey("operator");
  const page = await newPage(browser);
  await signIn(page, server, operator);
  assert.doesNotMatch(new URL(page.url()).pathname, /sign-in/);
  assert.match(await page.textContent("body"), /Sign out/i);
  await page.context().close();
});

test("an agent key is refused at sign-in exactly as an unknown key is", async () => {
  const agent = await server.createKey("agent");
  const page = await newPage(browser);
  const refusal = async (key) => {
    await page.goto(`${server.consoleUrl}/sign-in`);
    await page.fill("#api_key", key);
    const [reply] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith("/sign-in")),
      page.click("button[type=submit]"),
    ]);
    assert.ok(await page.isVisible("#api_key"), "the sign-in form is shown again");
    return { status: reply.status(), text: await page.textContent("[role=alert]") };
  };
  const asAgent = await refusal(agent);
  assert.equal(asAgent.status, 401);
  assert.match(asAgent.text, /cannot sign in/);
  const flipped = agent.endsWith("0") ? "1" : "0";
  assert.deepEqual(await refusal(`${agent.slice(0, -1)}${flipped}`), asAgent);
  assert.deepEqual(await refusal("not-a-key"), asAgent);
  await page.context().close();
});
