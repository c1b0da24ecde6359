/**
 * What the saver does when a thread's newest checkpoints are corrupt: never silent
 * (docs/langgraph-mapping.md, behaviour rule 3).
 *
 * checkpointd verifies every checkpoint's checksum on read. When the newest ones fail, the latest
 * valid one is served instead (as `LoadLatest` does), and that fallback is logged (thread,
 * namespace, skipped ids and steps, the id served), visible on the returned tuple's metadata
 * under {@link FALLBACK_KEY}, and refusable: with `onCorrupt: "raise"` the saver throws
 * {@link CorruptCheckpoints} instead. When every checkpoint is corrupt the thread starts over,
 * logged as an error under "warn", thrown under "raise".
 */

import { Code } from "../errors.js";

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
  skippedIds: string[];
  skippedSteps: number[];
  servedId: string | undefined;
}

export function describe(f: Fallback): string {
  const served = f.servedId ? `serving ${f.servedId}` : "no valid checkpoint left: starting over";
  const skipped = f.skippedIds.length ? f.skippedIds : f.skippedSteps;
  return `thread ${JSON.stringify(f.threadId)} ns ${JSON.stringify(f.ns)}: skipped corrupt checkpoints ` +
    `${JSON.stringify(skipped)} (steps ${JSON.stringify(f.skippedSteps)}); ${served}`;
}

/** The value of {@link FALLBACK_KEY}. */
export function asMetadata(f: Fallback): { skipped_ids: string[]; skipped_steps: number[] } {
  return { skipped_ids: [...f.skippedIds], skipped_steps: [...f.skippedSteps] };
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
  if (policy === "raise") {
    logger.error(`checkpointd: ${describe(f)}; refused (onCorrupt "raise")`);
    throw new CorruptCheckpoints(f);
  }
  if (f.servedId === undefined) logger.error(`checkpointd: ${describe(f)}`);
  else logger.warn(`checkpointd: ${describe(f)}`);
}
