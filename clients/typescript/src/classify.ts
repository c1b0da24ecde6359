/**
 * Fatal versus transient, as the Python client decides it: typed errors first, then the gRPC
 * code of a refusal, then message patterns. Fatal stops a run at once; transient resurrects it.
 */

import { Code, CheckpointdError, ReplayMismatch } from "./errors.js";

/** Will fail again on retry: the run is not resurrected and the task is not retried. */
export class FatalError extends Error {
  override readonly name: string = "FatalError";
}

/** May succeed on retry: the run is resurrected from its latest valid checkpoint. */
export class TransientError extends Error {
  override readonly name: string = "TransientError";
}

/** A human's decision on an approval request. */
export interface Decision {
  action: string;
  approved: boolean;
  decidedBy?: string;
  comment?: string;
}

/** A step needs a human decision first (thrown by `StepContext.requestApproval`). */
export class ApprovalRequired extends Error {
  override readonly name: string = "ApprovalRequired";
  constructor(
    readonly action: string,
    readonly details: unknown = undefined,
  ) {
    super(`approval required for ${action}`);
  }
}

export type ErrorKind = "fatal" | "transient";

/** Message fragments that make an untyped error fatal (matched case-insensitively). */
export const DEFAULT_FATAL_PATTERNS: readonly string[] = [
  "credential",
  "unauthorized",
  "unauthenticated",
  "authentication",
  "invalid api key",
  "permission denied",
  "forbidden",
  "no module named",
  "module not found",
  "cannot find module",
  "missing configuration",
  "not configured",
];

// The service refused the data or the caller: retrying sends the same thing.
const FATAL_CODES: ReadonlySet<Code> = new Set([
  Code.InvalidArgument,
  Code.Unauthenticated,
  Code.PermissionDenied,
  Code.DataLoss,
  Code.ResourceExhausted,
]);

/** Decides whether an error thrown by a step (or by the store under it) is fatal. */
export class ErrorClassifier {
  readonly fatalPatterns: readonly string[];

  constructor(fatalPatterns: readonly string[] = DEFAULT_FATAL_PATTERNS) {
    this.fatalPatterns = fatalPatterns.map((pattern) => pattern.toLowerCase());
  }

  classify(error: unknown): ErrorKind {
    if (error instanceof FatalError) return "fatal";
    if (error instanceof TransientError || error instanceof ApprovalRequired) return "transient";
    // A replay refused for other arguments: the step makes the same call again on retry.
    if (error instanceof ReplayMismatch) return "fatal";
    if (error instanceof CheckpointdError) return FATAL_CODES.has(error.code) ? "fatal" : "transient";
    // Programming errors, JavaScript's ImportError/NameError/TypeError: a retry runs the same code.
    if (error instanceof TypeError || error instanceof ReferenceError || error instanceof SyntaxError) return "fatal";
    const message = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).toLowerCase();
    return this.fatalPatterns.some((pattern) => message.includes(pattern)) ? "fatal" : "transient";
  }
}

/**
 * FAILED_PRECONDITION reasons that do not mean another owner has the run: the server lost the
 * saves (or journal entries) this process built on, so the run resumes from what it restores.
 */
export const RESUMABLE_REASONS: ReadonlySet<string> = new Set(["MESSAGE_LOG_BEHIND", "JOURNAL_BEHIND"]);

/** A write refused for a stale epoch or a lost lease: another owner has the run. */
export function isFenced(error: unknown): boolean {
  return (
    error instanceof CheckpointdError &&
    error.code === Code.FailedPrecondition &&
    !RESUMABLE_REASONS.has(error.reason ?? "")
  );
}
