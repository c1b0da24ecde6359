/**
 * What the saver does when a thread's newest checkpoints are corrupt: never silent
 * (docs/langgraph-mapping.md, behaviour rule 3; DESIGN contract 13).
 *
 * checkpointd verifies every checkpoint's checksum on read. When the newest ones fail, the latest
 * valid one is served instead (as `LoadLatest` does), and that fallback is logged (thread,
 * namespace, skipped ids and steps, the id served), visible on the returned tuple's metadata
 * under {@link FALLBACK_KEY}, and refusable: with `onCorrupt: "raise"` the saver throws
 * {@link CorruptCheckpoints} instead. This holds for EVERY read that lands below quarantined
 * checkpoints (the server's `passed_over`), by any saver in any process, until an operator
 * repairs the thread (`checkpointd runs drop-quarantined`) or a newer checkpoint is saved above
 * them; not only for the read that found them. When every checkpoint is corrupt the thread starts
 * over, logged as an error under "warn", thrown under "raise". A corrupt checkpoint asked for by
 * id cannot be served at all: it throws CorruptCheckpoints under either policy.
 *
 * Skipped checkpoints are named three ways, under the keys Python's saver uses: LangGraph
 * checkpoint ids (`skipped_ids`), LangGraph's own step numbers (`skipped_langgraph_steps`, from
 * `metadata.step`, stored as `m.step`; null when a checkpoint has none) and checkpointd's steps
 * (`skipped_steps`, one more than LangGraph's for a thread saved from its first checkpoint).
 */

import { Code } from "../errors.js";
import type { PassedOver } from "../store.js";
import { META_PREFIX } from "./codec.js";

/** How the saver answers corruption: serve the newest valid checkpoint and say so, or refuse. */
export type CorruptionPolicy = "warn" | "raise";
export const POLICIES: readonly CorruptionPolicy[] = ["warn", "raise"];

/** Metadata key of a tuple served past corrupt checkpoints. */
export const FALLBACK_KEY = "checkpointd_fallback";

/** Where the saver reports: `console` by default. */
export interface SaverLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Checkpoints skipped as corrupt on the way to the one served (undefined: none valid). */
export interface Fallback {
  threadId: string;
  ns: string;
  /** LangGraph checkpoint ids of the skipped checkpoints, newest first ("" when unknown). */
  skippedIds: string[];
  /** checkpointd's step of each. */
  skippedSteps: number[];
  /** LangGraph's step (`metadata.step`) of each, null when unknown. */
  skippedLanggraphSteps: (number | null)[];
  servedId: string | undefined;
  /** Set when a checkpoint was asked for by id and is corrupt: nothing is served. */
  requestedId?: string;
}

export function describe(f: Fallback): string {
  const served = f.requestedId !== undefined
    ? `checkpoint ${JSON.stringify(f.requestedId)} was asked for by id and cannot be served`
    : f.servedId ? `serving ${f.servedId}` : "no valid checkpoint left: starting over";
  return `thread ${JSON.stringify(f.threadId)} ns ${JSON.stringify(f.ns)}: skipped corrupt checkpoints ` +
    `${JSON.stringify(f.skippedIds)} (LangGraph steps ${JSON.stringify(f.skippedLanggraphSteps)}, checkpointd steps ` +
    `${JSON.stringify(f.skippedSteps)}); ${served}`;
}

/** The value of {@link FALLBACK_KEY}, as Python's saver writes it. */
export interface FallbackMetadata {
  /** LangGraph checkpoint ids, newest first. */
  skipped_ids: string[];
  /** LangGraph's steps (`metadata.step`), null when unknown. */
  skipped_langgraph_steps: (number | null)[];
  /** checkpointd's steps (the key's meaning before LangGraph's were added). */
  skipped_steps: number[];
  served_id: string | null;
}

/** The value of {@link FALLBACK_KEY}. */
export function asMetadata(f: Fallback): FallbackMetadata {
  return {
    skipped_ids: [...f.skippedIds],
    skipped_langgraph_steps: [...f.skippedLanggraphSteps],
    skipped_steps: [...f.skippedSteps],
    served_id: f.servedId ?? null,
  };
}

/** LangGraph's step of a checkpoint from its stored metadata map (`m.step`, else `lg.step`). */
export function langgraphStep(metadata: Readonly<Record<string, string>>): number | null {
  for (const key of [`${META_PREFIX}step`, "lg.step"]) {
    const text = metadata[key];
    if (text === undefined) continue;
    const step = Number(text);
    if (Number.isSafeInteger(step)) return step;
  }
  return null;
}

/**
 * The fallback an answer's passed-over checkpoints make. `labels` names those the answer did
 * not (a server older than `passed_over` reports bare steps).
 */
export function fallbackOf(threadId: string, ns: string, passed: readonly PassedOver[], servedId: string | undefined,
  labels: ReadonlyMap<number, { label: string; metadata: Record<string, string> }> = new Map()): Fallback {
  return {
    threadId,
    ns,
    skippedIds: passed.map((p) => p.label || labels.get(p.step)?.label || ""),
    skippedSteps: passed.map((p) => p.step),
    skippedLanggraphSteps: passed.map((p) => langgraphStep(Object.keys(p.metadata).length > 0 ? p.metadata : labels.get(p.step)?.metadata ?? {})),
    servedId,
  };
}

/** The newest checkpoints of a thread are corrupt and the saver's policy is "raise". */
export class CorruptCheckpoints extends Error {
  override readonly name = "CorruptCheckpoints";
  readonly code = Code.DataLoss;
  readonly reason = "CHECKPOINT_CORRUPT";

  constructor(readonly fallback: Fallback) {
    super(describe(fallback));
  }
}

export function checkPolicy(policy: string): CorruptionPolicy {
  if (!(POLICIES as readonly string[]).includes(policy)) {
    throw new Error(`onCorrupt must be one of ${POLICIES.join(", ")}, not ${JSON.stringify(policy)}`);
  }
  return policy as CorruptionPolicy;
}

/** Logs the fallback, or throws it under the "raise" policy. */
export function report(policy: CorruptionPolicy, logger: SaverLogger, f: Fallback): void {
  if (policy === "raise" || f.requestedId !== undefined) {
    logger.error(`checkpointd: ${describe(f)}; refused${policy === "raise" ? ' (onCorrupt "raise")' : ""}`);
    throw new CorruptCheckpoints(f);
  }
  if (f.servedId === undefined) logger.error(`checkpointd: ${describe(f)}`);
  else logger.warn(`checkpointd: ${describe(f)}`);
}
