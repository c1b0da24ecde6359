/** Paged reads the saver makes: a prefix's runs, and a run's checkpoint summaries. */

import type { CheckpointClient } from "../client.js";
import { Code, CheckpointdError } from "../errors.js";
import type { CheckpointSummary } from "../gen/checkpoint/v1/checkpoint_pb.js";

export const PAGE = 100;

export function isCode(error: unknown, code: Code): error is CheckpointdError {
  return error instanceof CheckpointdError && error.code === code;
}

/** Every run id starting with `prefix`, ascending (the database filters the range). */
export async function listRuns(client: CheckpointClient, prefix: string): Promise<string[]> {
  const runs: string[] = [];
  let pageToken = "";
  do {
    const page = await client.listRuns({ runIdPrefix: prefix, pageSize: PAGE, pageToken });
    runs.push(...page.runs.map((head) => head.runId));
    pageToken = page.nextPageToken;
  } while (pageToken);
  return runs;
}

export interface SummaryQuery {
  metadataFilter?: Record<string, string>;
  beforeStep?: bigint;
  /** Newest first unless false. */
  descending?: boolean;
}

/** A run's checkpoint summaries page by page ([] for a run that does not exist). */
export async function* summaries(client: CheckpointClient, runId: string, query: SummaryQuery = {}): AsyncGenerator<CheckpointSummary> {
  let pageToken = "";
  do {
    let page;
    try {
      page = await client.listCheckpoints({
        runId,
        pageSize: PAGE,
        pageToken,
        descending: query.descending ?? true,
        metadataFilter: query.metadataFilter ?? {},
        ...(query.beforeStep === undefined ? {} : { beforeStep: query.beforeStep }),
      });
    } catch (error) {
      if (isCode(error, Code.NotFound)) return;
      throw error;
    }
    yield* page.checkpoints;
    pageToken = page.nextPageToken;
  } while (pageToken);
}

/** Every summary of a listing. */
export async function allSummaries(client: CheckpointClient, runId: string, query: SummaryQuery = {}): Promise<CheckpointSummary[]> {
  const out: CheckpointSummary[] = [];
  for await (const summary of summaries(client, runId, query)) out.push(summary);
  return out;
}

/** A checkpoint's LangGraph id and stored metadata map. */
export interface Named {
  label: string;
  metadata: Record<string, string>;
}

/**
 * The LangGraph ids and metadata of a run's checkpoints at `steps` (all of them for undefined),
 * by step: what a server older than `passed_over`, or an ALL_CHECKPOINTS_CORRUPT refusal, does
 * not say about the checkpoints it skipped.
 */
export async function labelsAt(client: CheckpointClient, runId: string, steps: number[] | undefined): Promise<Map<number, Named>> {
  const wanted = steps === undefined ? undefined : new Set(steps);
  const found = new Map<number, Named>();
  for await (const summary of summaries(client, runId)) {
    const step = Number(summary.step);
    if (wanted === undefined || wanted.has(step)) found.set(step, { label: summary.label, metadata: { ...summary.metadata } });
    if (wanted !== undefined && found.size === wanted.size) break;
  }
  return found;
}

/** The step and metadata of the checkpoint labelled `label` (a LangGraph id); undefined if none. */
export async function byLabel(client: CheckpointClient, runId: string, label: string): Promise<{ step: number; metadata: Record<string, string> } | undefined> {
  for await (const summary of summaries(client, runId)) {
    if (summary.label === label) return { step: Number(summary.step), metadata: { ...summary.metadata } };
  }
  return undefined;
}
