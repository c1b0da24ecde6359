/**
 * Real LangGraph.js graphs on CheckpointdSaver against PostgresSaver, in one run, on the same
 * Postgres, under LangGraph.js's default durability (no `durability` anywhere): the TypeScript
 * counterpart of clients/python/bench/real_graphs.py (issue 21, "Performance").
 *
 *   node dist-test/bench/langgraph-vs-postgres.js --checkpointd /path/to/checkpointd \
 *     --database postgres://postgres@127.0.0.1:5432/test
 *
 * Sections, each rotating the savers' order call by call (round by round for concurrency) so they
 * share the machine's noise: the chat loop on one thread (invoke p50), the bytes that thread left
 * in each saver's schema, a cold resume of it (a new node process per sample), the short graph per
 * call (model with tool calls -> ToolNode -> Send fan-out, a new thread per call) with every `put`
 * and `putWrites` timed by wrapping the saver's method, and rounds of N concurrent invocations of
 * the short graph (throughput). Both short-graph sections also record this process's CPU per
 * invocation: LangGraph.js, the saver and its client library share one thread, so on a busy
 * machine CPU is what sets the pace. MemorySaver runs beside them as what LangGraph.js costs.
 * Timings are reported, never asserted.
 */

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";

import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

import { CheckpointdSaver } from "../src/langgraph/index.js";
import { pgPool, resetSchema, startCheckpointd, sum, tableBytes, Timings, withSchema, type PgPool } from "./common.js";
import { BRANCHES, chatGraph, chatInput, shortGraph, shortInput } from "./graphs.js";

const CKPT_SCHEMA = "bench_js_checkpointd";
const PG_SCHEMA = "bench_js_postgres";
const MEMORY = "memory (reference)";
const SIDES = ["checkpointd", "postgres"] as const;
type Savers = Record<string, BaseCheckpointSaver>;

const { values: flags } = parseArgs({
  options: {
    checkpointd: { type: "string" },
    database: { type: "string", default: process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test" },
    "chat-steps": { type: "string", default: "500" },
    "short-calls": { type: "string", default: "100" },
    warmup: { type: "string", default: "5" },
    "cold-runs": { type: "string", default: "7" },
    concurrency: { type: "string", default: "20" },
    rounds: { type: "string", default: "10" },
  },
});
if (flags.checkpointd === undefined) throw new Error("langgraph-vs-postgres needs --checkpointd PATH (a release checkpointd binary)");
const count = (name: keyof typeof flags): number => {
  const n = Number(flags[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${String(flags[name])}`);
  return n;
};
const args = {
  binary: flags.checkpointd,
  database: flags.database!,
  chatSteps: count("chat-steps"),
  shortCalls: count("short-calls"),
  warmup: count("warmup"),
  coldRuns: count("cold-runs"),
  concurrency: count("concurrency"),
  rounds: count("rounds"),
};

/** The names in an order that rotates with i (two names: alternating). */
function rotate<T>(i: number, names: readonly T[]): T[] {
  const k = i % names.length;
  return [...names.slice(k), ...names.slice(0, k)];
}

const config = (thread: string) => ({ configurable: { thread_id: thread } });
const uid = () => Math.random().toString(16).slice(2, 10);

/**
 * Replaces `saver[method]` on the instance by a wrapper recording each call's duration (LangGraph
 * looks the method up on the instance, so the graph calls the wrapper); returns the undo.
 */
function timeMethod(saver: BaseCheckpointSaver, method: "put" | "putWrites", timings: Timings, name: string): () => void {
  const inner = (saver[method] as (...a: unknown[]) => Promise<unknown>).bind(saver);
  const timed = async (...a: unknown[]) => {
    const start = performance.now();
    try {
      return await inner(...a);
    } finally {
      timings.add(name, performance.now() - start);
    }
  };
  Object.assign(saver, { [method]: timed });
  return () => void delete (saver as unknown as Record<string, unknown>)[method];
}

async function chatLoop(savers: Savers, timings: Timings): Promise<string> {
  const thread = `chat-${uid()}`;
  const graphs = Object.fromEntries(Object.entries(savers).map(([name, saver]) => [name, chatGraph(saver)]));
  for (let i = 1; i <= args.chatSteps; i++) {
    for (const name of rotate(i, Object.keys(graphs))) {
      const out = await timings.time(`chat invoke: ${name}`, () => graphs[name]!.invoke(chatInput(i), config(thread)));
      if (out.messages.length !== 2 * i) throw new Error(`${name}: ${out.messages.length} messages after turn ${i}`);
    }
  }
  return thread;
}

async function coldResume(baseUrl: string, thread: string, timings: Timings): Promise<void> {
  const run = promisify(execFile);
  const child = join(dirname(fileURLToPath(import.meta.url)), "cold-resume.js");
  const where = { checkpointd: baseUrl, postgres: args.database };
  for (let r = 1; r <= args.coldRuns; r++) {
    for (const name of rotate(r, SIDES)) {
      const { stdout } = await run(process.execPath, [child, name, where[name], PG_SCHEMA, thread, String(2 * args.chatSteps)]);
      const got = JSON.parse(stdout) as { open_ms: number; get_state_ms: number };
      timings.add(`cold open + getState: ${name}`, got.open_ms + got.get_state_ms);
      timings.add(`cold getState alone: ${name}`, got.get_state_ms);
    }
  }
}

async function shortCalls(savers: Savers, timings: Timings): Promise<void> {
  const graphs = Object.fromEntries(Object.entries(savers).map(([name, saver]) => [name, shortGraph(saver)]));
  const scratch = new Timings();
  const undo = Object.entries(savers).flatMap(([name, saver]) => [
    timeMethod(saver, "putWrites", scratch, `putWrites: ${name}`),
    timeMethod(saver, "put", scratch, `put: ${name}`),
  ]);
  for (let i = 1; i <= args.warmup + args.shortCalls; i++) {
    if (i === args.warmup + 1) scratch.samples.clear();
    for (const name of rotate(i, Object.keys(graphs))) {
      const before = scratch.samples.get(`putWrites: ${name}`)?.length ?? 0;
      const cpu = process.cpuUsage();
      const start = performance.now();
      const out = await graphs[name]!.invoke(shortInput(i), config(`short-${name.slice(0, 5)}-${uid()}`));
      const elapsed = performance.now() - start;
      const used = process.cpuUsage(cpu);
      if (out.parts.length !== BRANCHES || out.messages.length !== 4) throw new Error(`${name}: unexpected ${JSON.stringify(out)}`);
      if (i > args.warmup) {
        timings.add(`short invoke: ${name}`, elapsed);
        // This process's CPU (LangGraph.js, the saver, its client library) during the call: the
        // calls run one at a time, so it is this call's.
        timings.add(`short invoke, client CPU: ${name}`, (used.user + used.system) / 1000);
        const writes = scratch.samples.get(`putWrites: ${name}`)?.slice(before) ?? [];
        timings.add(`putWrites per invoke (sum): ${name}`, writes.reduce((a, b) => a + b, 0));
      }
    }
  }
  for (const [key, list] of scratch.samples) timings.samples.set(key, list);
  for (const restore of undo) restore();
}

/** Rounds of N concurrent invocations (different threads) per side; invocations/s per side. */
async function concurrent(savers: Savers, timings: Timings): Promise<Record<string, number>> {
  const graphs = Object.fromEntries(Object.entries(savers).map(([name, saver]) => [name, shortGraph(saver)]));
  const n = args.concurrency;
  const spent: Record<string, number> = Object.fromEntries(Object.keys(graphs).map((name) => [name, 0]));
  for (let r = 0; r <= args.rounds; r++) {
    for (const name of rotate(r, Object.keys(graphs))) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      await Promise.all(
        Array.from({ length: n }, async (_, k) => {
          const out = await graphs[name]!.invoke(shortInput(r * n + k), config(`conc-${name.slice(0, 5)}-${uid()}`));
          if (out.parts.length !== BRANCHES) throw new Error(`${name}: unexpected ${JSON.stringify(out)}`);
        }),
      );
      const elapsed = performance.now() - start;
      const used = process.cpuUsage(cpu);
      if (r > 0) {
        // round 0 warms every side up
        spent[name]! += elapsed;
        timings.add(`round of ${n}: ${name}`, elapsed);
        timings.add(`round of ${n}, client CPU per invoke: ${name}`, (used.user + used.system) / 1000 / n);
      }
    }
  }
  return Object.fromEntries(Object.entries(spent).map(([name, ms]) => [name, (args.rounds * n) / (ms / 1000)]));
}

function version(pkg: string): string {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "node_modules", pkg, "package.json");
  return (JSON.parse(readFileSync(root, "utf8")) as { version: string }).version;
}

async function environment(admin: PgPool): Promise<string> {
  const { rows } = await admin.query("SELECT current_setting('server_version') AS v, current_setting('default_toast_compression') AS c");
  const { stdout } = await promisify(execFile)(args.binary, ["--version"]);
  const packages = ["@langchain/langgraph", "@langchain/langgraph-checkpoint", "@langchain/langgraph-checkpoint-postgres", "@langchain/core", "pg", "@connectrpc/connect-node"];
  return [
    `${new Date().toISOString()}, ${cpus().length} CPUs (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    `node ${process.version}, ${stdout.trim()} (${args.binary}), PostgreSQL ${String(rows[0]?.["v"])} (TOAST ${String(rows[0]?.["c"])})`,
    packages.map((p) => `${p} ${version(p)}`).join(", "),
  ].join("\n");
}

const loads = () => loadavg().map((x) => x.toFixed(2)).join(" ");

function ratioLine(label: string, ours: number, theirs: number, target: string, ok: boolean): string {
  return `| ${label.padEnd(44)} | ${ours.toFixed(2).padStart(11)} | ${theirs.toFixed(2).padStart(10)} | ${(ours / theirs).toFixed(2).padStart(6)}x | ${target.padEnd(8)} | ${(ok ? "PASS" : "MISS").padEnd(6)} |`;
}

function report(
  t: Timings,
  bytes: Record<string, Map<string, number>>,
  throughput: Record<string, number>,
  chatSeconds: number,
  totalSeconds: number,
): void {
  console.log(`\nLangGraph.js real graphs, default durability (${totalSeconds.toFixed(0)} s; chat loop ${chatSeconds.toFixed(0)} s)\n`);
  const width = Math.max(48, ...[...t.samples.keys()].map((k) => k.length));
  console.log(`| ${"operation".padEnd(width)} |    n |   p50 ms |   p95 ms |`);
  console.log(`|${"-".repeat(width + 2)}|------|----------|----------|`);
  for (const [name, list] of t.samples) {
    console.log(`| ${name.padEnd(width)} | ${String(list.length).padStart(4)} | ${t.p50(name).toFixed(2).padStart(8)} | ${t.p(name, 0.95).toFixed(2).padStart(8)} |`);
  }
  console.log(`\nthroughput, invocations/s: ${Object.entries(throughput).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")}`);
  for (const [schema, tables] of Object.entries(bytes)) {
    console.log(`bytes ${schema}: ${sum(tables).toLocaleString("en")} (${[...tables].map(([k, v]) => `${k} ${v.toLocaleString("en")}`).join(", ")})`);
  }
  const ratio = (key: string) => t.p50(`${key}: checkpointd`) / t.p50(`${key}: postgres`);
  const ckptBytes = sum(bytes[CKPT_SCHEMA]!);
  const pgBytes = sum(bytes[PG_SCHEMA]!);
  const tp = throughput["checkpointd"]! / throughput["postgres"]!;
  console.log(`\n| ${"ratio checkpointd / PostgresSaver".padEnd(44)} | checkpointd |   postgres |   ratio | target   | result |`);
  console.log(`|${"-".repeat(46)}|-------------|------------|---------|----------|--------|`);
  const rows: [string, string, string, (x: number) => boolean][] = [
    ["short graph invoke p50 (ms)", "short invoke", "<= 1.0x", (x) => x <= 1.0],
    ["chat loop invoke p50 (ms)", "chat invoke", "<= 0.5x", (x) => x <= 0.5],
    ["cold resume, open + getState p50 (ms)", "cold open + getState", "<= 1.0x", (x) => x <= 1.0],
  ];
  for (const [label, key, target, ok] of rows) {
    console.log(ratioLine(label, t.p50(`${key}: checkpointd`), t.p50(`${key}: postgres`), target, ok(ratio(key))));
  }
  console.log(ratioLine(`${args.concurrency} concurrent invoke (inv/s)`, throughput["checkpointd"]!, throughput["postgres"]!, ">= 1.5x", tp >= 1.5));
  console.log(ratioLine(`bytes, ${args.chatSteps}-step chat thread (KiB)`, ckptBytes / 1024, pgBytes / 1024, "<= 0.05x", ckptBytes / pgBytes <= 0.05));
  const p95 = t.p("short invoke: checkpointd", 0.95) / t.p("short invoke: postgres", 0.95);
  console.log(
    `\nnot targets: short invoke p95 ${p95.toFixed(2)}x, chat invoke p95 ` +
      `${(t.p("chat invoke: checkpointd", 0.95) / t.p("chat invoke: postgres", 0.95)).toFixed(2)}x, ` +
      `client CPU per invoke p50: alone ${ratio("short invoke, client CPU").toFixed(2)}x, ` +
      `in rounds ${ratio(`round of ${args.concurrency}, client CPU per invoke`).toFixed(2)}x; ` +
      `cold getState alone ${ratio("cold getState alone").toFixed(2)}x, put p50 ${ratio("put").toFixed(2)}x, ` +
      `putWrites per invoke (sum) p50 ${ratio("putWrites per invoke (sum)").toFixed(2)}x; ` +
      `MemorySaver (LangGraph.js alone): short invoke p50 ${t.p50(`short invoke: ${MEMORY}`).toFixed(2)} ms, ` +
      `chat invoke p50 ${t.p50(`chat invoke: ${MEMORY}`).toFixed(2)} ms, ${throughput[MEMORY]!.toFixed(1)} concurrent inv/s`,
  );
  console.log("every checkpointd checkpoint carries a client checksum v1, checked by the server on save and verified on every read");
}

const admin = pgPool(args.database, 2);
await resetSchema(admin, CKPT_SCHEMA);
await resetSchema(admin, PG_SCHEMA);
console.log(await environment(admin));
console.log(`load average at start: ${loads()}`);
const server = await startCheckpointd(args.binary, withSchema(args.database, CKPT_SCHEMA));
const postgres = new PostgresSaver(pgPool(args.database, 20), undefined, { schema: PG_SCHEMA });
try {
  await postgres.setup();
  const ours = new CheckpointdSaver({ baseUrl: server.baseUrl });
  const savers: Savers = { checkpointd: ours, postgres, [MEMORY]: new MemorySaver() };
  const timings = new Timings();
  const started = performance.now();
  const thread = await chatLoop(savers, timings);
  const chatSeconds = (performance.now() - started) / 1000;
  console.log(`chat loop done (${chatSeconds.toFixed(0)} s), load average ${loads()}`);
  const bytes = { [CKPT_SCHEMA]: await tableBytes(admin, CKPT_SCHEMA), [PG_SCHEMA]: await tableBytes(admin, PG_SCHEMA) };
  await coldResume(server.baseUrl, thread, timings);
  await shortCalls(savers, timings);
  console.log(`short graph done, load average ${loads()}`);
  const throughput = await concurrent(savers, timings);
  report(timings, bytes, throughput, chatSeconds, (performance.now() - started) / 1000);
  console.log(`load average at end: ${loads()}`);
} finally {
  await postgres.end();
  await admin.end();
  await server.stop();
}
