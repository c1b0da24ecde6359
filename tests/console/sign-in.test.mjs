// Signing in to the console in a real browser: an operator key opens the inbox; an agent key,
// which may not use the console, is refused and stays on the sign-in page.

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

test("an agent key is refused at sign-in", async () => {
  const agent = await server.createKey("agent");
  const page = await newPage(browser);
  await page.goto(`${server.consoleUrl}/sign-in`);
  await page.fill("#api_key", agent);
  const [reply] = await Promise.all([
    page.waitForResponse((response) => response.url().endsWith("/sign-in")),
    page.click("button[type=submit]"),
  ]);
  assert.equal(reply.status(), 403);
  assert.match(await page.textContent("body"), /agent/i);
  assert.ok(await page.isVisible("#api_key"), "the sign-in form is shown again");
  await page.context().close();
});
