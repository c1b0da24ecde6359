/**
 * The LangGraph.js checkpointer of checkpointd, `@checkpointd/client/langgraph`: the saver, its
 * errors and policies, the exactly-once tools built on it, and the mapping's naming and framing
 * (docs/langgraph-mapping.md). Only this entry imports `@langchain/*`.
 */

export { CheckpointdSaver, type CheckpointdSaverOptions } from "./saver.js";
export { CorruptCheckpoints, FALLBACK_KEY, type CorruptionPolicy, type Fallback, type SaverLogger } from "./fallback.js";
export { ThreadTakenOver } from "./ownership.js";
export { ReplayMismatch } from "../errors.js";
export type { PruneStrategy } from "./threads.js";
export { parseRunId, pct, runId, threadPrefix, toolCallId, writeCallId, type ToolCallKind } from "./naming.js";
export {
  canonicalJson,
  decodeWrite,
  encodeToolResult,
  encodeWrite,
  filterable,
  frame,
  LOG_DIGEST_KEY,
  META_PREFIX,
  type Write,
} from "./codec.js";
export {
  exactlyOnce,
  ExactlyOnceTool,
  idempotencyKey,
  IN_DOUBT_INTERRUPT,
  ToolCallInDoubt,
  type ExactlyOnceFunctionOptions,
  type ExactlyOnceToolOptions,
  type InDoubtQuestion,
} from "./tools.js";
