/**
 * checkpointd's TypeScript client: typed gRPC clients with typed errors, checksum v1 and
 * idempotency key v1, client-side verification of loaded checkpoints, and the generated
 * messages of the contract (proto/checkpoint/v1).
 */

export * from "./checksum.js";
export * from "./client.js";
export * from "./errors.js";
export * from "./verify.js";
export * from "./gen/checkpoint/v1/checkpoint_pb.js";
export * from "./gen/checkpoint/v1/task_pb.js";
export { type ErrorInfo, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
export * from "./classify.js";
export * from "./context.js";
export { argumentsDigest, canonicalArguments } from "./digest.js";
export { MemoryBackend } from "./memory.js";
export * from "./pages.js";
export * from "./recovery.js";
export { RESULT_KEY, type RunStats } from "./session.js";
export * from "./store.js";
export * from "./strategy.js";
export * from "./worker.js";
export { parseDuration } from "./worker/duration.js";
export { loadAgent, parseAgentSpec, type LoadedAgent } from "./worker/load.js";
