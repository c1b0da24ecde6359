/**
 * Exclusive writing of a thread: one saver owns it, a superseded one is refused
 * (docs/langgraph-mapping.md, behaviour rule 4).
 *
 * checkpointd fences writers by epoch: `Resume` hands out a new, larger epoch and every later
 * write carrying an older one is refused (`STALE_EPOCH`). By default the saver follows
 * LangGraph's model, where any process may write a thread in turn: it writes with the run's
 * current epoch and, when fenced, adopts the new one. With `exclusive: true` it takes each
 * thread it writes once with a `Resume`, and a saver another exclusive one superseded gets
 * {@link ThreadTakenOver} on its next write, so two processes can never fork one thread.
 */

import type { CheckpointClient } from "../client.js";
import { Code, CheckpointdError } from "../errors.js";
import { NO_MESSAGES } from "./core.js";
import type { RunState } from "./runs.js";

/** Another writer took this thread (a newer epoch); this saver must not write it again. */
export class ThreadTakenOver extends Error {
  override readonly name = "ThreadTakenOver";
  readonly code = Code.FailedPrecondition;
  readonly reason = "STALE_EPOCH";

  constructor(readonly runId: string, readonly ours: bigint, readonly theirs: bigint) {
    super(`run ${runId} was taken over by another writer (epoch ${theirs}, this saver holds ${ours}); ` +
      "this saver no longer writes it");
  }
}

/** Makes this saver the thread's writer with a new epoch, once (the run's gate held). */
export async function take(client: CheckpointClient, state: RunState): Promise<void> {
  if (state.ownedEpoch !== undefined) return;
  const resumed = await client.resume({ runId: state.runId, messageOffset: NO_MESSAGES });
  state.ownedEpoch = resumed.epoch;
  state.dropLog(); // Resume may have truncated the log to the newest valid checkpoint
}

/** Refuses to go on when the run's epoch is no longer the one this saver took. */
export function check(state: RunState, epoch: bigint): void {
  if (state.ownedEpoch !== undefined && epoch !== state.ownedEpoch) {
    throw new ThreadTakenOver(state.runId, state.ownedEpoch, epoch);
  }
}

/**
 * `call(epoch)` with the run's epoch (the one taken, when exclusive). Fenced by a newer epoch (a
 * Resume after corruption, another shared writer's), it adopts that one and tries again, three
 * times at most, unless this saver writes exclusively and another writer took the thread.
 */
export async function fenced<T>(client: CheckpointClient, state: RunState, call: (epoch: bigint) => Promise<T>): Promise<T> {
  let epoch = state.ownedEpoch ?? state.epoch;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(epoch);
    } catch (error) {
      if (!(error instanceof CheckpointdError) || error.code !== Code.FailedPrecondition || attempt === 2) throw error;
      const head = (await client.getRun({ runId: state.runId })).run;
      epoch = head?.epoch ?? 0n;
      check(state, epoch);
    }
  }
}
