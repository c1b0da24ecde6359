/**
 * Calls wait for a server that is not up yet, within their deadline, instead of failing at once
 * (gRPC's wait-for-ready, as the Python client's `_readiness.py` does it). A client started
 * beside `checkpointd serve &` would otherwise fail its first call with UNAVAILABLE in a few
 * milliseconds, and a run resurrected while the server restarts would spend its retries at once.
 *
 * Before a call on a connection that is not open, the connection is opened, and a refusal that
 * means "nothing listens there yet" (connection refused or reset, a host not resolvable yet) is
 * retried until it opens, for at most the connect timeout and never past the call's own
 * deadline (which shrinks by the time waited). A server that does not come up in time fails
 * the call with UNAVAILABLE naming the address. Any other failure (a TLS handshake refused) is
 * not waited on: the call goes ahead and reports it as it always has.
 */

import { Code, ConnectError } from "@connectrpc/connect";
import type { Http2SessionManager } from "@connectrpc/connect-node";

/**
 * How long a call waits for an unreachable server by default, in milliseconds: the Python
 * client's `CONNECT_TIMEOUT` (5 s), about as long as the Rust runner retries its first connection.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** The first and the largest pause between connection attempts, as the Python client's backoff. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 2_000;

/** Node's error codes (anywhere in the causes) that mean the server may just not be up yet. */
const NOT_UP_YET = new Set([
  "ECONNREFUSED", "ECONNRESET", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN",
]);

function notUpYet(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && NOT_UP_YET.has(code)) return true;
  }
  return false;
}

/** The error a call fails with when the server did not come up within the wait. */
export function serverUnreachable(address: string, waitedMs: number, cause?: unknown): ConnectError {
  const detail = cause instanceof Error ? `: ${cause instanceof ConnectError ? cause.rawMessage : cause.message}` : "";
  return new ConnectError(
    `${address} not reachable within ${waitedMs / 1000}s (is checkpointd serving there?)${detail}`,
    Code.Unavailable, undefined, undefined, cause,
  );
}

/** Resolves after `ms`, or rejects with Canceled when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ConnectError("the operation was aborted", Code.Canceled));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The readiness wait of one connection (one Http2SessionManager). */
export class ServerReadiness {
  constructor(
    private readonly sessions: Http2SessionManager,
    private readonly address: string,
    private readonly connectTimeoutMs: number,
  ) {}

  /** True when the connection is open: a call goes ahead without waiting (the usual case). */
  ready(): boolean {
    const state = this.sessions.state();
    return state === "open" || state === "idle" || state === "verifying";
  }

  /**
   * Waits for the connection to open, for at most the connect timeout and `deadlineMs` (the
   * call's; undefined for none); resolves with the milliseconds waited. Rejects with
   * UNAVAILABLE when the server did not come up in time, Canceled when `signal` aborts.
   */
  async wait(deadlineMs: number | undefined, signal: AbortSignal | undefined): Promise<number> {
    const started = performance.now();
    const bound = deadlineMs === undefined ? this.connectTimeoutMs : Math.min(this.connectTimeoutMs, deadlineMs);
    let backoff = FIRST_BACKOFF_MS;
    for (;;) {
      if (signal?.aborted) throw new ConnectError("the operation was aborted", Code.Canceled);
      const left = bound - (performance.now() - started);
      // A connection attempt may hang (packets dropped): the wait's bound and the caller's
      // signal end it, whichever comes first.
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const outcome = await Promise.race([
        this.sessions.connect(),
        new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), Math.max(left, 0)))),
        new Promise<"aborted">((resolve) => {
          onAbort = () => resolve("aborted");
          signal?.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
      if (outcome === "aborted") throw new ConnectError("the operation was aborted", Code.Canceled);
      if (outcome === "timeout") throw serverUnreachable(this.address, bound);
      if (outcome !== "error") return performance.now() - started;
      const error = this.sessions.error();
      // Not a server still starting (a TLS refusal, say): the call reports it as it is.
      if (!notUpYet(error)) return performance.now() - started;
      const remaining = bound - (performance.now() - started);
      if (remaining <= 0) throw serverUnreachable(this.address, bound, error);
      await pause(Math.min(backoff, remaining), signal);
      if (performance.now() - started >= bound) throw serverUnreachable(this.address, bound, error);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
