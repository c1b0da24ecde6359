/**
 * What the LangGraph.js benchmark's programs share (as clients/python/bench/common.py): timing
 * samples and their percentiles, a `pg` pool, schemas on the shared Postgres and their sizes, and
 * a release `checkpointd serve` on a schema of its own.
 */

import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

/** The part of `pg.Pool` the benchmark uses (the package ships no types and @types/pg is not a dependency). */
export interface PgPool {
  query(sql: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

/** A `pg.Pool` of `max` connections on `url`; the same `pg` PostgresSaver itself loads. */
export function pgPool(url: string, max: number): PgPool {
  const require = createRequire(import.meta.url);
  const pg = require("pg") as { Pool: new (config: { connectionString: string; max: number }) => PgPool };
  return new pg.Pool({ connectionString: url, max });
}

export class Timings {
  readonly samples = new Map<string, number[]>();

  /** Adds one sample, in milliseconds. */
  add(name: string, ms: number): void {
    const list = this.samples.get(name);
    if (list === undefined) this.samples.set(name, [ms]);
    else list.push(ms);
  }

  async time<T>(name: string, body: () => Promise<T>): Promise<T> {
    const start = performance.now();
    const result = await body();
    this.add(name, performance.now() - start);
    return result;
  }

  values(name: string): number[] {
    const list = this.samples.get(name);
    if (list === undefined || list.length === 0) throw new Error(`no samples for ${name}`);
    return list;
  }

  /** The q-quantile (nearest rank), as common.py's `p`. */
  p(name: string, q: number): number {
    const data = [...this.values(name)].sort((a, b) => a - b);
    return data[Math.min(data.length - 1, Math.floor(q * data.length))]!;
  }

  /** The median (the mean of the middle two for an even count), as `statistics.median`. */
  p50(name: string): number {
    const data = [...this.values(name)].sort((a, b) => a - b);
    const mid = data.length >> 1;
    return data.length % 2 === 1 ? data[mid]! : (data[mid - 1]! + data[mid]!) / 2;
  }
}

/** `url` with `schema` as its search_path (how checkpointd is pointed at a schema). */
export function withSchema(url: string, schema: string): string {
  return `${url}${url.includes("?") ? "&" : "?"}options=-csearch_path%3D${schema}`;
}

export async function resetSchema(pool: PgPool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.query(`CREATE SCHEMA ${schema}`);
}

/** pg_total_relation_size (heap, TOAST, indexes) of every table of `schema`, largest first. */
export async function tableBytes(pool: PgPool, schema: string): Promise<Map<string, number>> {
  const { rows } = await pool.query(
    "SELECT c.relname AS name, pg_total_relation_size(c.oid) AS size FROM pg_class c " +
      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 2 DESC",
    [schema],
  );
  return new Map(rows.map((row) => [String(row["name"]), Number(row["size"])]));
}

export function sum(sizes: Map<string, number>): number {
  return [...sizes.values()].reduce((a, b) => a + b, 0);
}

export interface Checkpointd {
  baseUrl: string;
  stop(): Promise<void>;
}

const LISTENING = "checkpointd listening on ";

/** `checkpointd serve` on free ports; ready once it prints the address it listens on. */
export async function startCheckpointd(binary: string, database: string): Promise<Checkpointd> {
  const child = spawn(
    binary,
    ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--database", database],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  let address: string | undefined;
  for await (const line of lines) {
    if (line.startsWith(LISTENING)) {
      address = line.slice(LISTENING.length).trim();
      break;
    }
  }
  if (address === undefined) throw new Error(`${binary} exited before listening (database ${database})`);
  // Keep draining stdout so a chatty server never blocks on a full pipe.
  child.stdout!.resume();
  return {
    baseUrl: `http://${address}`,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
