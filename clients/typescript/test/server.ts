/**
 * A real `checkpointd serve` for the tests: the binary at $CHECKPOINTD_BIN (default: the
 * workspace's release build) on free loopback ports, on a fresh SQLite file or a fresh schema of
 * the Postgres at $TEST_DATABASE_URL, optionally behind TLS; ready when it answers a gRPC call,
 * stopped with SIGTERM (then SIGKILL) at the end, its file or schema removed.
 */

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { Code, CheckpointdError, createCheckpointClient, type CheckpointdTlsOptions } from "../src/index.js";
import { repoRoot } from "./repo.js";

/** The stores every integration test runs on. */
export const BACKENDS = ["sqlite", "postgres"] as const;
export type Backend = (typeof BACKENDS)[number];

/** The Postgres the tests use when TEST_DATABASE_URL is unset. */
const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

export interface ServerOptions {
  /** The store: a fresh SQLite file (the default) or a fresh Postgres schema. */
  backend?: Backend;
  /** More `serve` flags, e.g. `--tls-cert`. */
  args?: string[];
  /** TLS for the readiness probe; set, the base URL is `https://127.0.0.1:<port>`. */
  tls?: CheckpointdTlsOptions;
  /** The gRPC port (a free one when absent), for a client made before the server starts. */
  port?: number;
}

export interface TestServer {
  baseUrl: string;
  backend: Backend;
  /** The `--database` URL the server runs on, for tests that damage stored data directly. */
  database: string;
  /** Everything the server wrote to stderr and stdout, for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

function checkpointdBin(): string {
  const bin = process.env["CHECKPOINTD_BIN"] ?? join(repoRoot(), "target", "release", "checkpointd");
  if (!existsSync(bin)) {
    throw new Error(`no checkpointd binary at ${bin}: build it (cargo build --release) or set CHECKPOINTD_BIN`);
  }
  return bin;
}

/** A loopback port free right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port bound");
  return address.port;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

function psql(url: string, sql: string): void {
  try {
    execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], { stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(
      `the Postgres tests need psql and the Postgres at ${url} (set TEST_DATABASE_URL): ${String(error)} ${stderr}` +
        " Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
    );
  }
}

let schemas = 0;

/** A fresh schema in $TEST_DATABASE_URL: the URL whose search_path is it, and its dropper. */
function postgresSchema(): { url: string; drop(): void } {
  const base = process.env["TEST_DATABASE_URL"] ?? DEFAULT_DATABASE_URL;
  const name = `cpd_ts_${process.pid}_${++schemas}_${Date.now()}`;
  psql(base, `CREATE SCHEMA ${name}`);
  const separator = base.includes("?") ? "&" : "?";
  return {
    url: `${base}${separator}options=-csearch_path%3D${name}`,
    drop: () => psql(base, `DROP SCHEMA IF EXISTS ${name} CASCADE`),
  };
}

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const backend = options.backend ?? "sqlite";
  const dir = mkdtempSync(join(tmpdir(), "checkpointd-ts-"));
  const schema = backend === "postgres" ? postgresSchema() : undefined;
  const database = schema?.url ?? `sqlite://${join(dir, "checkpointd.db")}`;
  const [port, adminPort] = [options.port ?? (await freePort()), await freePort()];
  const child = spawn(
    checkpointdBin(),
    [
      "serve",
      "--listen", `127.0.0.1:${port}`,
      "--admin-listen", `127.0.0.1:${adminPort}`,
      "--database", database,
      ...(options.args ?? []),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const server: TestServer = {
    baseUrl: `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
    backend,
    database,
    output: () => output,
    async stop() {
      child.kill("SIGTERM");
      const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited(child);
      clearTimeout(killed);
      rmSync(dir, { recursive: true, force: true });
      schema?.drop();
    },
  };
  // Ready when a call reaches the service: an unknown run answers NOT_FOUND (UNAUTHENTICATED
  // with --auth on), not UNAVAILABLE.
  const probe = createCheckpointClient({
    baseUrl: server.baseUrl,
    timeoutMs: 1_000,
    ...(options.tls === undefined ? {} : { tls: options.tls }),
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await server.stop();
      throw new Error(`checkpointd exited with ${child.exitCode} before answering:\n${output}`);
    }
    try {
      await probe.getRun({ runId: "readiness-probe" });
      return server;
    } catch (error) {
      if (error instanceof CheckpointdError && (error.code === Code.NotFound || error.code === Code.Unauthenticated)) {
        return server;
      }
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`checkpointd did not answer within 30 s (${String(error)}):\n${output}`);
      }
    }
    await sleep(100);
  }
}
