// The browser tests' harness: a real `checkpointd serve` with its web console, API keys made
// with the real CLI, raw SQL beside it (to corrupt a stored checkpoint the way the Rust tests
// do), and Debian's chromium driven by playwright-core. Nothing is downloaded: the browser is
// the system's (CHROMIUM_PATH, default /usr/bin/chromium).

import { spawn, execFile } from "node:child_process";
import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

/** The binary under test; the tests refuse to guess, so a stale build is never tested by accident. */
export function checkpointdBin() {
  const bin = process.env.CHECKPOINTD_BIN;
  if (!bin) {
    throw new Error(
      "set CHECKPOINTD_BIN to a built checkpointd (e.g. target/debug/checkpointd)",
    );
  }
  return bin;
}

/** Which database a test file's servers use: SQLite unless asked for Postgres. */
export function backendFor(requested) {
  const backend = requested ?? process.env.CONSOLE_BACKEND ?? "sqlite";
  if (backend !== "sqlite" && backend !== "postgres") {
    throw new Error(`unknown backend ${backend}: sqlite or postgres`);
  }
  return backend;
}

/** A name no other test (or other run of this one) uses. */
export function uniqueName(prefix) {
  return `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
}

/** A database of its own: a SQLite file in `dir`, or a fresh schema in TEST_DATABASE_URL. */
async function freshDatabase(backend, dir) {
  if (backend === "sqlite") {
    const file = join(dir, "checkpointd.db");
    return {
      url: `sqlite://${file}`,
      sql: async (statement) =>
        (await run("sqlite3", [file, statement])).stdout,
      remove: async () => {},
    };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    throw new Error("the postgres backend needs TEST_DATABASE_URL");
  }
  const schema = uniqueName("cpd_console");
  await run("psql", [base, "-v", "ON_ERROR_STOP=1", "-qc", `CREATE SCHEMA ${schema}`]);
  const separator = base.includes("?") ? "&" : "?";
  const url = `${base}${separator}options=-csearch_path%3D${schema}`;
  const inSchema = `SET search_path TO ${schema}; `;
  return {
    url,
    sql: async (statement) =>
      (await run("psql", [base, "-v", "ON_ERROR_STOP=1", "-qAtc", inSchema + statement]))
        .stdout,
    remove: async () => {
      await run("psql", [base, "-qc", `DROP SCHEMA IF EXISTS ${schema} CASCADE`]);
    },
  };
}

/** Reads the child's stdout until every address it prints is known. */
function readAddresses(child, wantConsole) {
  return new Promise((resolvePromise, reject) => {
    const addresses = {};
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(
      () => reject(new Error(`checkpointd printed no addresses in 30s: ${JSON.stringify(addresses)}`)),
      30_000,
    );
    const prefixes = [
      ["admin", "checkpointd admin listening on "],
      ["grpc", "checkpointd listening on "],
      ["console", "checkpointd console listening on "],
    ];
    lines.on("line", (line) => {
      for (const [name, prefix] of prefixes) {
        if (line.startsWith(prefix)) {
          addresses[name] = line.slice(prefix.length).trim();
        }
      }
      if (addresses.grpc && (!wantConsole || addresses.console)) {
        clearTimeout(timer);
        resolvePromise(addresses);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`checkpointd exited (${code ?? signal}) before it was listening`));
    });
  });
}

/**
 * Starts `checkpointd serve --auth api-key` with its console, on ports the system picks (or a
 * chosen `--console-listen` in `extraArgs`), over a database of its own. `extraArgs` are added
 * to the serve command (e.g. OpenID Connect flags); `options.backend` is "sqlite" or "postgres";
 * `options.env` adds environment variables. Resolves to the server's handle; call `stop()` in
 * an `after` hook.
 */
export async function startServer(extraArgs = [], options = {}) {
  const backend = backendFor(options.backend);
  const dir = await mkdtemp(join(tmpdir(), "checkpointd-console-"));
  const database = await freshDatabase(backend, dir);
  const consoleChosen = extraArgs.includes("--console-listen");
  const args = [
    "serve",
    "--listen", "127.0.0.1:0",
    "--admin-listen", "127.0.0.1:0",
    "--database", database.url,
    "--auth", "api-key",
    ...(consoleChosen ? [] : ["--console-listen", "127.0.0.1:0"]),
    ...extraArgs,
  ];
  const child = spawn(checkpointdBin(), args, {
    env: { RUST_LOG: "warn", ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let addresses;
  try {
    addresses = await readAddresses(child, true);
  } catch (error) {
    child.kill("SIGKILL");
    await database.remove();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  // Keep draining stdout so the server never blocks on a full pipe.
  child.stdout.resume();
  const exited = new Promise((resolveExit) => child.once("exit", resolveExit));
  const scheme = args.includes("--tls-cert") ? "https" : "http";
  return {
    backend,
    dir,
    databaseUrl: database.url,
    grpcAddr: addresses.grpc,
    grpcUrl: `http://${addresses.grpc}`,
    adminAddr: addresses.admin,
    consoleUrl: `${scheme}://${addresses.console}`,
    process: child,
    /** Runs raw SQL against the server's database, bypassing the server. */
    sql: database.sql,
    /** Makes an API key with the real CLI; resolves to the secret it prints once. */
    async createKey(role, tenant = "default", name = `${role}-key`) {
      const { stdout } = await run(checkpointdBin(), [
        "keys", "create",
        "--database", database.url,
        "--tenant", tenant,
        "--role", role,
        "--name", name,
        "--json",
      ]);
      return JSON.parse(stdout).key;
    },
    /** SIGTERM and wait; SIGKILL only when it does not stop in 10 s. Removes its database. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const stopped = await Promise.race([
          exited.then(() => true),
          new Promise((done) => setTimeout(() => done(false), 10_000)),
        ]);
        if (!stopped) {
          child.kill("SIGKILL");
          await exited;
        }
      }
      await database.remove();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's chromium through playwright-core; never a downloaded browser. */
export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    // CI runs as root in a container, where chromium's own sandbox cannot start.
    args: ["--no-sandbox"],
  });
}

/** A page in a fresh browser context, at a laptop-sized window (screenshots are 1280x800). */
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  return context.newPage();
}

/** Where screenshots go: CONSOLE_SCREENSHOTS, or tests/console/screenshots (git-ignored). */
export function screenshotDir() {
  return resolve(process.env.CONSOLE_SCREENSHOTS ?? join(here, "..", "screenshots"));
}

/** Saves a PNG of the page's viewport as `<name>.png` in the screenshot directory. */
export async function screenshot(page, name) {
  const dir = screenshotDir();
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Signs in through the console's own form, as a person would. */
export async function signIn(page, server, apiKey, tenant = "") {
  await page.goto(`${server.consoleUrl}/sign-in`);
  await page.fill("#api_key", apiKey);
  if (tenant) {
    await page.fill("#tenant", tenant);
  }
  await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
}
