/**
 * Whole-thread and retention operations (docs/langgraph-mapping.md, behaviour rule 5):
 * `deleteThread`, `deleteForRuns` and `prune`.
 *
 * Deleting checkpoints (`DeleteCheckpoints`) removes checkpoint rows only: a run's message log
 * and tool journal are append-only and stay, so every remaining checkpoint still verifies, and
 * a side effect journalled by an exactly-once tool is never forgotten by a prune. After any of
 * them the thread is read and written again as usual (a put after deleted newest checkpoints
 * rewinds the log through Resume, see writes.ts `sync`). A delete that matches nothing (a
 * LangGraph run id passed as a thread id, or the reverse) says so in a warning, never silently.
 */

import { Code } from "../errors.js";
import { serverFilter } from "./codec.js";
import type { Core } from "./core.js";
import { PREFIX, threadPrefix } from "./naming.js";
import { allSummaries, isCode, listRuns } from "./queries.js";

/** LangGraph's prune strategies. */
export type PruneStrategy = "keep_latest" | "delete";
const PRUNE_STRATEGIES: readonly string[] = ["keep_latest", "delete"];
/** Steps named in one DeleteCheckpoints call. */
const DELETE_BATCH = 500;

export async function deleteThread(core: Core, threadId: string): Promise<void> {
  const runs = await listRuns(core.client, threadPrefix(String(threadId)));
  if (runs.length === 0) {
    core.logger.warn(`checkpointd: deleteThread(${JSON.stringify(threadId)}) deleted nothing: no thread has that id ` +
      "(deleteForRuns takes LangGraph run ids)");
  }
  for (const run of runs) {
    try {
      await core.client.deleteRun({ runId: run });
    } catch (error) {
      if (!isCode(error, Code.NotFound)) throw error;
    }
    core.runs.drop(run);
  }
}

/** Deletes every checkpoint whose LangGraph metadata `run_id` is one of `runIds`, in every
 * thread and namespace (the server filters on the metadata map). */
export async function deleteForRuns(core: Core, runIds: readonly string[]): Promise<void> {
  const filters = runIds.map((r) => serverFilter({ run_id: String(r) })).filter((f) => Object.keys(f).length > 0);
  let deleted = 0;
  for (const run of filters.length === 0 ? [] : await listRuns(core.client, PREFIX)) {
    const steps: bigint[] = [];
    for (const metadataFilter of filters) {
      steps.push(...(await allSummaries(core.client, run, { metadataFilter })).map((s) => s.step));
    }
    await deleteSteps(core, run, steps);
    deleted += steps.length;
  }
  if (deleted === 0 && runIds.length > 0) {
    core.logger.warn(`checkpointd: deleteForRuns(${JSON.stringify(runIds)}) deleted nothing: no checkpoint's metadata ` +
      "run_id is one of them (a thread id? deleteThread takes those)");
  }
}

/** `keep_latest`: only the newest checkpoint of each namespace stays (with its pending writes);
 * `delete`: the threads go entirely. */
export async function prune(core: Core, threadIds: readonly string[], strategy: PruneStrategy): Promise<void> {
  if (!PRUNE_STRATEGIES.includes(strategy)) {
    throw new Error(`prune strategy must be one of ${PRUNE_STRATEGIES.join(", ")}, not ${JSON.stringify(strategy)}`);
  }
  for (const threadId of threadIds) {
    if (strategy === "delete") {
      await deleteThread(core, threadId);
      continue;
    }
    const runs = await listRuns(core.client, threadPrefix(String(threadId)));
    if (runs.length === 0) core.logger.warn(`checkpointd: prune: no thread ${JSON.stringify(threadId)}; nothing pruned`);
    for (const run of runs) {
      const steps = (await allSummaries(core.client, run)).map((s) => s.step);
      await deleteSteps(core, run, steps.slice(1)); // newest first: keep the first
    }
  }
}

async function deleteSteps(core: Core, run: string, steps: bigint[]): Promise<void> {
  if (steps.length === 0) return;
  const state = core.runs.get(run);
  // Not under a save in flight in this process.
  await state.gate.hold(async () => {
    try {
      for (let start = 0; start < steps.length; start += DELETE_BATCH) {
        let done;
        try {
          done = await core.client.deleteCheckpoints({ runId: run, steps: steps.slice(start, start + DELETE_BATCH) });
        } catch (error) {
          if (isCode(error, Code.NotFound)) return;
          throw error;
        }
        if (done.pinnedSteps.length > 0) core.logger.info(`checkpointd: run ${run}: kept pinned checkpoints at steps ${done.pinnedSteps.join(", ")}`);
      }
    } finally {
      // forget the deleted ids: the next write learns the run again
      state.forgetLabels();
      state.forget();
    }
  });
}
