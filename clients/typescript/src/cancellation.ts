/**
 * What stops a unary call before its answer: its deadline and the caller's AbortSignal, as one
 * subscription. Connect's `runUnaryCall` builds two linked AbortControllers per call and aborts
 * them when the call ends (a DOMException each time); a call without interceptors needs only a
 * timer and a listener, which is what this holds.
 */

import { Code, ConnectError } from "@connectrpc/connect";

/** The reason a call stopped early, as the ConnectError the caller sees. */
function cancelled(reason: unknown): ConnectError {
  return reason instanceof ConnectError ? reason : new ConnectError("the operation was aborted", Code.Canceled);
}

/** Calls back once, when the call must stop; `end` releases the timer and the listener. */
export interface Cancellation {
  /** Throws the error of a call that must already stop. */
  throwIfStopped(): void;
  /** Registers the one callback to run when the call must stop. */
  onStop(callback: (error: ConnectError) => void): void;
  /** The call is over: no callback after this. */
  end(): void;
}

/** A Cancellation from an AbortSignal that already carries the deadline (Connect's path). */
export function fromSignal(signal: AbortSignal): Cancellation {
  let listener: (() => void) | undefined;
  return {
    throwIfStopped: () => {
      if (signal.aborted) throw cancelled(signal.reason);
    },
    onStop: (callback) => {
      listener = () => callback(cancelled(signal.reason));
      signal.addEventListener("abort", listener, { once: true });
    },
    end: () => {
      if (listener !== undefined) signal.removeEventListener("abort", listener);
    },
  };
}

/** A Cancellation from a deadline in milliseconds (or none) and the caller's signal (or none). */
export function withDeadline(deadlineMs: number | undefined, signal: AbortSignal | undefined): Cancellation {
  let stopped: ConnectError | undefined;
  let callback: ((error: ConnectError) => void) | undefined;
  const stop = (error: ConnectError): void => {
    if (stopped !== undefined) return;
    stopped = error;
    callback?.(error);
  };
  const timer =
    deadlineMs === undefined
      ? undefined
      : setTimeout(() => stop(new ConnectError("the operation timed out", Code.DeadlineExceeded)), deadlineMs);
  const onAbort = (): void => stop(cancelled(signal?.reason));
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return {
    throwIfStopped: () => {
      if (stopped !== undefined) throw stopped;
    },
    onStop: (registered) => {
      callback = registered;
      if (stopped !== undefined) registered(stopped);
    },
    end: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      callback = undefined;
    },
  };
}
