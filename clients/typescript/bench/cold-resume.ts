/**
 * A new process resuming a chat thread (as clients/python/bench/cold_resume.py): opens the saver,
 * `getState`, prints the timings as JSON.
 *
 *   node dist-test/bench/cold-resume.js checkpointd|postgres BASE_URL_OR_DSN SCHEMA THREAD EXPECTED_MESSAGES
 *
 * Imports come first and are not timed (node and module start-up are the same for both savers);
 * `open_ms` is the saver's construction, `get_state_ms` the call until the state is returned
 * (connections open lazily, on the first call, for both).
 */

import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

import { CheckpointdSaver } from "../src/langgraph/index.js";
import { pgPool } from "./common.js";
import { chatGraph } from "./graphs.js";

const [kind, where, schema, thread, expected] = process.argv.slice(2);
if (kind === undefined || where === undefined || schema === undefined || thread === undefined || expected === undefined) {
  throw new Error("usage: cold-resume.js checkpointd|postgres BASE_URL_OR_DSN SCHEMA THREAD EXPECTED_MESSAGES");
}
const started = performance.now();
let saver: CheckpointdSaver | PostgresSaver;
if (kind === "checkpointd") saver = new CheckpointdSaver({ baseUrl: where });
else if (kind === "postgres") saver = new PostgresSaver(pgPool(where, 1), undefined, { schema });
else throw new Error(`unknown saver ${kind}`);
const graph = chatGraph(saver);
const opened = performance.now();
const state = await graph.getState({ configurable: { thread_id: thread } });
const done = performance.now();
const got = (state.values as { messages: unknown[] }).messages.length;
if (saver instanceof PostgresSaver) await saver.end();
if (got !== Number(expected)) throw new Error(`${kind}: ${got} messages, expected ${expected}`);
console.log(JSON.stringify({ open_ms: opened - started, get_state_ms: done - opened }));
