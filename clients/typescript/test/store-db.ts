/**
 * The places the store and recovery tests run on (the in-memory backend, a real server on
 * SQLite and on Postgres), and damage to their stored data as a bad disk would do it: the first
 * byte of a checkpoint's state flipped directly in the SQLite file or Postgres schema (as the
 * Python tests do), so the server's checksum verification on read is what finds it.
 */

import { execFileSync } from "node:child_process";

import { CheckpointStore, MemoryBackend, createCheckpointClient, type Logger, type StoreBackend } from "../src/index.js";
import { BACKENDS, startServer, type TestServer } from "./server.js";

/** Runs SQL on the server's database (sqlite3 or psql must be installed). */
function execute(server: TestServer, sql: string): void {
  if (server.backend === "sqlite") {
    execFileSync("sqlite3", [server.database.replace(/^sqlite:\/\//, ""), sql], { stdio: ["ignore", "pipe", "pipe"] });
  } else {
    execFileSync("psql", [server.database, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], { stdio: ["ignore", "pipe", "pipe"] });
  }
}

/** Flips the first byte of the stored state of the checkpoint of `runId` at `step`. */
export function corruptState(server: TestServer, runId: string, step: number): void {
  const flip =
    server.backend === "sqlite"
      ? "state = CAST(CASE WHEN length(state) = 0 THEN X'00' ELSE " +
        "(CASE WHEN substr(state, 1, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(state, 2) END AS BLOB)"
      : "state = CASE WHEN length(state) = 0 THEN '\\x00'::bytea ELSE set_byte(state, 0, (get_byte(state, 0) + 1) % 256) END";
  execute(server, `UPDATE checkpoints SET ${flip} WHERE run_id = '${runId}' AND step = ${step}`);
}

/** Where a store test runs: the in-memory backend or a real server, with a way to damage it. */
export interface Place {
  name: string;
  /** A new store (a new writer) on this place, logging into `logger`, over `wrap(backend)`. */
  store(logger?: Logger, wrap?: (backend: StoreBackend) => StoreBackend): CheckpointStore;
  corruptState(runId: string, step: number): void;
  stop(): Promise<void>;
}

export const PLACES = ["memory", ...BACKENDS] as const;

export async function openPlace(name: (typeof PLACES)[number], args: string[] = []): Promise<Place> {
  if (name === "memory") {
    const backend = new MemoryBackend();
    return {
      name,
      store: (logger, wrap = (b) => b) => new CheckpointStore({ backend: wrap(backend), ...(logger === undefined ? {} : { logger }) }),
      corruptState: (runId, step) => backend.corruptState(runId, step),
      stop: async () => undefined,
    };
  }
  const server = await startServer({ backend: name, args });
  return {
    name,
    store: (logger, wrap = (b) => b) =>
      new CheckpointStore({
        backend: wrap(createCheckpointClient({ baseUrl: server.baseUrl })),
        ...(logger === undefined ? {} : { logger }),
      }),
    corruptState: (runId, step) => corruptState(server, runId, step),
    stop: () => server.stop(),
  };
}

/** A logger that keeps every line, so a test can check what was said loudly. */
export function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    info: (message) => lines.push({ level: "info", message }),
    warn: (message) => lines.push({ level: "warn", message }),
    error: (message) => lines.push({ level: "error", message }),
  };
}
