/**
 * Keeps a claimed task's lease alive: a heartbeat every third of the lease. A heartbeat the
 * queue fences (FAILED_PRECONDITION: another worker owns the task, or an operator cancelled it)
 * reports the lease lost, so the running step is abandoned and nothing more is written; any
 * other failure is retried at the next beat, since the lease has two more beats to run.
 */

import { setTimeout as sleep } from "node:timers/promises";

import type { TaskClient } from "../client.js";
import { Code, CheckpointdError } from "../errors.js";
import type { Task } from "../gen/checkpoint/v1/task_pb.js";
import { protoDuration } from "./duration.js";

export interface LeaseKeeper {
  /** Aborted when a heartbeat was fenced: the task belongs to someone else now. */
  readonly lost: AbortSignal;
  /** Stops the heartbeats and waits for one in flight. */
  stop(): Promise<void>;
}

/** Starts heartbeating `task` (as claimed, with its attempt) every `leaseMs / 3`. */
export function keepLease(tasks: TaskClient, task: Task, leaseMs: number, warn: (line: string) => void): LeaseKeeper {
  const lost = new AbortController();
  const stopped = new AbortController();
  const beating = (async () => {
    for (;;) {
      try {
        await sleep(leaseMs / 3, undefined, { signal: stopped.signal });
      } catch {
        return; // stopped
      }
      try {
        await tasks.heartbeat({ taskId: task.taskId, attempt: task.attempt, leaseDuration: protoDuration(leaseMs) });
      } catch (error) {
        if (error instanceof CheckpointdError && error.code === Code.FailedPrecondition) {
          warn(`lease lost; stopping task_id=${task.taskId} reason=${error.reason ?? "none"}`);
          lost.abort(error);
          return;
        }
        warn(`heartbeat failed; retrying task_id=${task.taskId}: ${String(error)}`);
      }
    }
  })();
  return {
    lost: lost.signal,
    async stop() {
      stopped.abort();
      await beating;
    },
  };
}
