/**
 * Names LangGraph's addresses take in checkpointd (docs/langgraph-mapping.md, "Names"): run ids
 * of (thread, namespace) pairs, journal call ids of pending writes and of exactly-once tool calls.
 *
 * A run id is `lg:<pct(thread_id)>:<pct(checkpoint_ns)>`. Percent-encoding escapes `:` and `%`,
 * so the form is unambiguous and `ListRuns(run_id_prefix="lg:<pct(thread)>:")` finds exactly one
 * thread's namespaces. A namespace too long for the 256-byte limit becomes `!` + a digest (`!`
 * never survives `pct`, so the two forms cannot meet); the checkpoint then carries the real one.
 */

import { createHash } from "node:crypto";

export const PREFIX = "lg:";
export const MAX_ID_BYTES = 256;
const HASHED = "!";
const TOOL_PREFIX = "lg.tool/";

const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");
const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");

/**
 * UTF-8 percent-encoding keeping only `A-Z a-z 0-9 - . _ ~`, upper-case hex: what Python's
 * `quote(text, safe="")` writes. `encodeURIComponent` keeps `!'()*` too, so those are escaped here.
 */
export function pct(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The run id prefix shared by every namespace of a thread. */
export function threadPrefix(threadId: string): string {
  const prefix = `${PREFIX}${pct(threadId)}:`;
  if (byteLength(prefix) > MAX_ID_BYTES - 1) {
    throw new Error(`thread_id is too long for checkpointd (${threadId.length} characters)`);
  }
  return prefix;
}

/** The checkpointd run that holds one (thread, namespace) pair. */
export function runId(threadId: string, checkpointNs: string): string {
  const prefix = threadPrefix(threadId);
  let encoded = pct(checkpointNs);
  if (byteLength(prefix) + byteLength(encoded) > MAX_ID_BYTES) {
    encoded = HASHED + sha256Hex(checkpointNs).slice(0, 40);
    if (byteLength(prefix) + byteLength(encoded) > MAX_ID_BYTES) {
      throw new Error("thread_id and checkpoint_ns are too long for checkpointd");
    }
  }
  return prefix + encoded;
}

/**
 * (thread id, namespace) of a run id this saver made; the namespace is undefined when it was
 * stored as a digest (the checkpoint carries it). Undefined for any other run.
 */
export function parseRunId(run: string): { threadId: string; ns: string | undefined } | undefined {
  if (!run.startsWith(PREFIX)) return undefined;
  const rest = run.slice(PREFIX.length);
  const colon = rest.indexOf(":");
  if (colon < 0) return undefined;
  const ns = rest.slice(colon + 1);
  return {
    threadId: decodeURIComponent(rest.slice(0, colon)),
    ns: ns.startsWith(HASHED) ? undefined : decodeURIComponent(ns),
  };
}

/**
 * The journal call id of one pending write. Regular writes (idx >= 0) get one id per
 * (checkpoint, task, idx), so the journal's first-write-wins keeps retries idempotent; the
 * special channels (idx < 0) pass a fresh `version` each time, and the newest one wins.
 */
export function writeCallId(checkpointId: string, taskId: string, idx: number, version = ""): string {
  const suffix = version ? `/${version}` : "";
  let call = `${checkpointId}/${taskId}/${idx}${suffix}`;
  if (byteLength(call) > MAX_ID_BYTES) {
    call = `${checkpointId}/#${sha256Hex(taskId).slice(0, 32)}/${idx}${suffix}`;
  }
  if (byteLength(call) > MAX_ID_BYTES) {
    throw new Error(`checkpoint id ${JSON.stringify(checkpointId)} is too long for a journal call id`);
  }
  return call;
}

/** The kinds of exactly-once tool call ids: `c` model tool call, `n` no call id, `k` user key. */
export type ToolCallKind = "c" | "n" | "k";

/**
 * The journal call id of an exactly-once tool call: `lg.tool/<kind>/<pct(part) joined by />`
 * (steps and indexes are digits, which `pct` keeps); over 256 bytes,
 * `lg.tool/h/<SHA-256 hex of the long id>`.
 */
export function toolCallId(kind: ToolCallKind, parts: readonly string[]): string {
  const call = `${TOOL_PREFIX}${kind}/${parts.map(pct).join("/")}`;
  return byteLength(call) <= MAX_ID_BYTES ? call : `${TOOL_PREFIX}h/${sha256Hex(call)}`;
}
