/**
 * The saver's reads: `getTuple` (a checkpoint by id, or the thread's latest valid one, saying
 * loudly when corrupt ones were skipped) and `list`.
 */

import { isDeepStrictEqual } from "node:util";

import type { CheckpointListOptions, CheckpointTuple } from "@langchain/langgraph-checkpoint";

import { Code } from "../errors.js";
import { serverFilter } from "./codec.js";
import { address, stepOf, type Core } from "./core.js";
import { asMetadata, FALLBACK_KEY, fallbackOf, langgraphStep, report } from "./fallback.js";
import { AllCorrupt, load, migratePendingSends, toTuple, type NextVersion } from "./load.js";
import { parseRunId, PREFIX, runId, threadPrefix } from "./naming.js";
import { byLabel, isCode, labelsAt, listRuns, summaries } from "./queries.js";

type Configurable = Record<string, unknown> | undefined;

function checkpointIdOf(configurable: Configurable): string | undefined {
  const id = configurable?.["checkpoint_id"];
  return typeof id === "string" && id !== "" ? id : undefined;
}

export async function getTuple(core: Core, configurable: Configurable, nextVersion: NextVersion): Promise<CheckpointTuple | undefined> {
  const thread = configurable?.["thread_id"];
  if (thread === undefined || thread === null || thread === "") return undefined; // as LangGraph's savers
  const { threadId, ns } = address(configurable);
  const run = runId(threadId, ns);
  const state = core.runs.get(run);
  const checkpointId = checkpointIdOf(configurable);
  let loaded;
  try {
    loaded = await load(core, state, checkpointId === undefined ? "latest" : { label: checkpointId });
  } catch (error) {
    if (isCode(error, Code.NotFound)) {
      if (checkpointId === undefined) state.seenEmpty = true;
      return undefined;
    }
    if (error instanceof AllCorrupt) {
      const labels = await labelsAt(core.client, run, undefined);
      const steps = [...labels.keys()].sort((a, b) => b - a);
      const passed = steps.map((step) => ({ step, checkpointId: "", label: "", metadata: {}, quarantinedAt: undefined, reason: "" }));
      report(core.onCorrupt, core.logger, fallbackOf(threadId, ns, passed, undefined, labels));
      return undefined;
    }
    if (checkpointId !== undefined && isCode(error, Code.DataLoss)) {
      // Asked for by id, a corrupt checkpoint has nothing to fall back to: the same
      // CorruptCheckpoints as a refused fallback, under either policy, never a bare DATA_LOSS.
      const found = await byLabel(core.client, run, checkpointId);
      report(core.onCorrupt, core.logger, {
        threadId, ns, skippedIds: [checkpointId], skippedSteps: found === undefined ? [] : [found.step],
        skippedLanggraphSteps: [found === undefined ? null : langgraphStep(found.metadata)], servedId: undefined, requestedId: checkpointId,
      });
    }
    throw error;
  }
  await migratePendingSends(core, state, loaded, nextVersion);
  const tuple = await toTuple(core, threadId, ns, loaded);
  if (loaded.passedOver.length > 0) {
    // A server older than `passed_over` names only the steps: their ids come from a listing.
    const unnamed = loaded.passedOver.filter((p) => p.label === "").map((p) => p.step);
    const labels = unnamed.length > 0 ? await labelsAt(core.client, run, unnamed) : undefined;
    const fallback = fallbackOf(threadId, ns, loaded.passedOver, loaded.checkpointId, labels);
    report(core.onCorrupt, core.logger, fallback);
    (tuple.metadata as Record<string, unknown>)[FALLBACK_KEY] = asMetadata(fallback);
  }
  return tuple;
}

/** The namespace a config names, undefined for every namespace. */
function namespaceOf(configurable: Configurable): string | undefined {
  const ns = configurable?.["checkpoint_ns"];
  return typeof ns === "string" ? ns : undefined;
}

/** (run id, thread id, namespace or undefined when only the checkpoint knows it). */
async function runsToList(core: Core, configurable: Configurable): Promise<Array<{ run: string; threadId: string; ns: string | undefined }>> {
  const threadId = configurable?.["thread_id"];
  const wantedNs = namespaceOf(configurable);
  let prefix = PREFIX;
  if (threadId !== undefined && threadId !== null && threadId !== "") {
    if (wantedNs !== undefined) return [{ run: runId(String(threadId), wantedNs), threadId: String(threadId), ns: wantedNs }];
    prefix = threadPrefix(String(threadId));
  }
  const out = [];
  for (const run of await listRuns(core.client, prefix)) {
    const parsed = parseRunId(run);
    // A hashed namespace (undefined) is checked against the checkpoint's own once loaded.
    if (parsed !== undefined && (wantedNs === undefined || parsed.ns === undefined || parsed.ns === wantedNs)) out.push({ run, ...parsed });
  }
  return out;
}

/** The matching checkpoints, newest first within each run. */
export async function* listTuples(core: Core, configurable: Configurable, options: CheckpointListOptions, nextVersion: NextVersion): AsyncGenerator<CheckpointTuple> {
  let remaining = options.limit;
  if (remaining !== undefined && remaining <= 0) return;
  const filter = options.filter ?? {};
  const wantedId = checkpointIdOf(configurable);
  const beforeId = checkpointIdOf(options.before?.configurable);
  const wantedNs = namespaceOf(configurable);
  for (const { run, threadId, ns } of await runsToList(core, configurable)) {
    const state = core.runs.get(run);
    const beforeStep = beforeId === undefined ? undefined : await stepOf(core, state, beforeId);
    // a `before` checkpoint not in this run: compare ids, as LangGraph does
    const beforeLabel = beforeId !== undefined && beforeStep === undefined ? beforeId : undefined;
    const query = { metadataFilter: serverFilter(filter), ...(beforeStep === undefined ? {} : { beforeStep }) };
    for await (const summary of summaries(core.client, run, query)) {
      if (wantedId !== undefined && summary.label !== wantedId) continue;
      if (beforeLabel !== undefined && !(summary.label && summary.label < beforeLabel)) continue;
      let loaded;
      try {
        loaded = await load(core, state, { step: summary.step });
      } catch (error) {
        if (isCode(error, Code.NotFound)) continue; // pruned meanwhile
        if (isCode(error, Code.DataLoss)) {
          core.logger.warn(`checkpointd: thread ${JSON.stringify(threadId)} ns ${JSON.stringify(ns)}: checkpoint ` +
            `${summary.label} (step ${summary.step}) is corrupt; left out of the listing`);
          continue;
        }
        throw error;
      }
      if (wantedNs !== undefined && (ns ?? loaded.ns) !== wantedNs) continue;
      await migratePendingSends(core, state, loaded, nextVersion);
      const tuple = await toTuple(core, threadId, ns ?? loaded.ns, loaded);
      const metadata = (tuple.metadata ?? {}) as Record<string, unknown>;
      if (!Object.entries(filter).every(([key, value]) => isDeepStrictEqual(metadata[key], value))) continue;
      yield tuple;
      if (remaining !== undefined && --remaining <= 0) return;
    }
  }
}
