// OpenID Connect sign-in to the console in a real browser, against a real OpenID provider
// (the certified oidc-provider) serving its pages and keys over HTTPS with a test CA: a person
// whose ID token says operator signs in through the provider's login form and approves a task
// a worker parked for approval; a person without the claim is refused. The provider is
// another site than the console (localhost against 127.0.0.1), so the SameSite rules of the
// sign-in and session cookies are exercised as in production.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { checkpointdBin, startServer, launchBrowser, screenshot } from "./lib/harness.mjs";
import { startProvider, CLAIMS_SCOPE } from "./lib/oidc-provider.mjs";

const run = promisify(execFile);
const CLIENT = { clientId: "checkpointd-console", clientSecret: "a-test-client-secret" };

let provider;
let server;
let browser;
let agentKey;
let secretDir;

/** A port free now on 127.0.0.1: the console's public URL must be known before it starts. */
async function freePort() {
  const probe = createServer();
  await new Promise((listening) => probe.listen(0, "127.0.0.1", listening));
  const { port } = probe.address();
  await new Promise((closed) => probe.close(closed));
  return port;
}

before(async () => {
  const port = await freePort();
  const consoleUrl = `http://127.0.0.1:${port}`;
  provider = await startProvider({
    client: { ...CLIENT, redirectUri: `${consoleUrl}/sign-in/oidc/callback` },
    accounts: {
      alice: { role: "operator", tenant_id: "acme" },
      bob: { tenant_id: "acme" },
    },
  });
  secretDir = await mkdtemp(join(tmpdir(), "checkpointd-oidc-secret-"));
  const secretFile = join(secretDir, "client-secret");
  await writeFile(secretFile, CLIENT.clientSecret);
  server = await startServer([
    "--console-listen", `127.0.0.1:${port}`,
    "--console-public-url", consoleUrl,
    "--console-oidc-issuer", provider.issuer,
    "--console-oidc-client-id", CLIENT.clientId,
    "--console-oidc-client-secret-file", secretFile,
    "--console-oidc-scopes", CLAIMS_SCOPE,
    "--console-oidc-provider-name", "Test IdP",
    "--outbound-ca-file", provider.caFile,
  ]);
  agentKey = await server.createKey("agent", "acme");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await provider?.stop();
  if (secretDir) {
    await rm(secretDir, { recursive: true, force: true });
  }
});

/** A browser context that accepts the provider's test certificate (the console is plain HTTP). */
async function newPerson() {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    ignoreHTTPSErrors: true,
  });
  return context.newPage();
}

/** Signs in as `login` through the provider's own login and consent pages. */
async function signInThroughProvider(page, login) {
  await page.goto(`${server.consoleUrl}/sign-in`);
  await page.click("text=Sign in with Test IdP");
  await page.waitForURL((url) => url.origin === provider.issuer);
  await page.fill("input[name=login]", login);
  await page.fill("input[name=password]", "any password");
  await page.click("button[type=submit]");
  // The consent page, the first time this account meets the client.
  await page.waitForLoadState();
  if (new URL(page.url()).origin === provider.issuer) {
    await page.click("button[type=submit]");
  }
  await page.waitForURL((url) => url.origin === server.consoleUrl);
  await page.waitForLoadState();
}

/** Enqueues a task with the CLI and starts a worker whose demo agent asks for approval. */
async function parkTaskForApproval(runId) {
  const env = { ...process.env, RUST_LOG: "warn", CHECKPOINTD_TOKEN: agentKey };
  const { stdout } = await run(
    checkpointdBin(),
    ["tasks", "enqueue", "--server", server.grpcUrl, "--run", runId, "--json"],
    { env },
  );
  const taskId = JSON.parse(stdout).task.task_id;
  const worker = spawn(
    checkpointdBin(),
    [
      "worker", "--server", server.grpcUrl, "--tenant", "acme",
      "--approval-at-step", "2", "--exit-after", "1",
      "--poll-interval", "100ms", "--strategy", "every_n:1",
    ],
    { env, stdio: ["ignore", "ignore", "inherit"] },
  );
  const exited = new Promise((done) => worker.once("exit", (code) => done(code)));
  return { taskId, worker, exited };
}

test("a person with the operator claim signs in through the provider and approves a task", async () => {
  const parked = await parkTaskForApproval(`oidc-run-${Date.now()}`);
  try {
    const page = await newPerson();
    await signInThroughProvider(page, "alice");
    // The callback's 200 page refreshes to the inbox, a same-site navigation that carries the
    // Strict session cookie: the inbox, not the sign-in page, is where alice lands.
    await page.waitForURL((url) => url.pathname !== "/sign-in/oidc/callback");
    assert.equal(new URL(page.url()).pathname, "/inbox", await page.textContent("body"));
    assert.match(await page.textContent("body"), /Sign out/);
    assert.match(await page.textContent("body"), /acme/);
    // The worker parks the task; the inbox shows it (reloaded until it is there).
    const form = `form[action="/tasks/${parked.taskId}/approve"]`;
    for (let tries = 0; !(await page.isVisible(form)); tries += 1) {
      assert.ok(tries < 100, "the parked task never reached the inbox");
      await new Promise((later) => setTimeout(later, 200));
      await page.reload();
    }
    await screenshot(page, "oidc-inbox");
    await page.fill(`${form} textarea[name=comment]`, "approved through the identity provider");
    await Promise.all([page.waitForNavigation(), page.click(`${form} button[type=submit]`)]);
    assert.match(await page.textContent("body"), /approved/i);
    assert.match(await page.textContent("body"), /alice/, "the decider is the person's sub");
    assert.equal(await parked.exited, 0, "the worker finished the approved task");
    await page.context().close();
  } finally {
    parked.worker.kill();
  }
});

test("a person without the operator claim is refused and gets no session", async () => {
  const page = await newPerson();
  await signInThroughProvider(page, "bob");
  assert.equal(new URL(page.url()).pathname, "/sign-in/oidc/callback");
  assert.match(await page.textContent("body"), /no operator or admin role/);
  const cookies = await page.context().cookies(server.consoleUrl);
  assert.ok(!cookies.some((cookie) => cookie.name === "checkpointd_console"), "no session cookie");
  await page.goto(`${server.consoleUrl}/inbox`);
  assert.equal(new URL(page.url()).pathname, "/sign-in", "the inbox sends bob to sign in");
  await page.context().close();
});
