/**
 * A real `checkpointd serve` for the tests: the binary at $CHECKPOINTD_BIN (default: the
 * workspace's release build) on free loopback ports and a fresh SQLite file, ready when it
 * answers a gRPC call, stopped with SIGTERM (then SIGKILL) at the end.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { Code, CheckpointdError, createCheckpointClient } from "../src/index.js";
import { repoRoot } from "./repo.js";

export interface TestServer {
  baseUrl: string;
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

async function freePort(): Promise<number> {
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

export async function startServer(): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "checkpointd-ts-"));
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = spawn(
    checkpointdBin(),
    [
      "serve",
      "--listen", `127.0.0.1:${port}`,
      "--admin-listen", `127.0.0.1:${adminPort}`,
      "--database", `sqlite://${join(dir, "checkpointd.db")}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const server: TestServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      child.kill("SIGTERM");
      const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited(child);
      clearTimeout(killed);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // Ready when a call reaches the service: an unknown run answers NOT_FOUND, not UNAVAILABLE.
  const probe = createCheckpointClient({ baseUrl: server.baseUrl, timeoutMs: 1_000 });
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
      if (error instanceof CheckpointdError && error.code === Code.NotFound) return server;
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`checkpointd did not answer within 30 s (${String(error)}):\n${output}`);
      }
    }
    await sleep(100);
  }
}
