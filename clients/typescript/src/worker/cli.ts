#!/usr/bin/env node
/**
 * `checkpointd-worker MODULE[:EXPORT]`: the queue worker as a process, the TypeScript twin of
 * `python -m checkpointd.worker` (same flags, same environment variables, same `event ...`
 * lines). SIGTERM or SIGINT drains: no more claims, running steps finish within
 * `--drain-deadline`, their runs are checkpointed and their tasks released.
 */

import { createCheckpointClient, createCheckpointdTransport, createTaskClient } from "../client.js";
import type { AgentFn } from "../recovery.js";
import { CheckpointStore, type State } from "../store.js";
import { Worker } from "../worker.js";
import { USAGE, parseWorkerArgs } from "./args.js";
import { event } from "./events.js";
import { loadAgent } from "./load.js";

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseWorkerArgs(argv);
  } catch (error) {
    process.stderr.write(`checkpointd-worker: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  if (args === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let loaded;
  try {
    loaded = await loadAgent<AgentFn, (task: unknown) => State>(args.agent);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const { step, initialState } = loaded;
  const transport = createCheckpointdTransport(args.client);
  const store = new CheckpointStore({ backend: createCheckpointClient(args.client, transport) });
  const worker = new Worker(step, createTaskClient(args.client, transport), store, {
    ...args.worker,
    ...(initialState === undefined ? {} : { initialState }),
  });
  const drain = () => worker.shutdown.abort();
  process.on("SIGTERM", drain);
  process.on("SIGINT", drain);
  event("started", { worker: worker.id, strategy: String(args.worker.recovery.strategy) });
  const report = await worker.run();
  const latencies = [...store.stats.latenciesMs].sort((a, b) => a - b);
  const quantile = (q: number) => (latencies.length === 0 ? 0 : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  process.stdout.write(
    `summary tasks=${report.ends.length} saves=${latencies.length} p50_ms=${quantile(0.5).toFixed(2)} p99_ms=${quantile(0.99).toFixed(2)}\n`,
  );
  return 0;
}

main(process.argv.slice(2)).then(
  // Exit at once: a step abandoned at the drain deadline or on a lost lease may still hold the event loop.
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`checkpointd-worker: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
