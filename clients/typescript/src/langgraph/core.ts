/**
 * What every saver operation shares: the client, the serializer, the message channel, the
 * per-run state, the loader and the saver's policies.
 */

import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

import type { CheckpointClient } from "../client.js";
import { Code } from "../errors.js";
import { JournalScope } from "../gen/checkpoint/v1/checkpoint_pb.js";
import type { CorruptionPolicy, SaverLogger } from "./fallback.js";
import { isCode } from "./queries.js";
import type { RunCache, RunState } from "./runs.js";

/** A message offset past any log: a load that returns no messages. */
export const NO_MESSAGES = (1n << 63n) - 1n;

export interface Core {
  client: CheckpointClient;
  serde: SerializerProtocol;
  /** The channel kept in the run's message log; undefined keeps every channel in the state. */
  channel: string | undefined;
  onCorrupt: CorruptionPolicy;
  exclusive: boolean;
  logger: SaverLogger;
  runs: RunCache;
  /**
   * A server without `RecordToolResults` and `SaveRequest.tool_count` (learnt from its
   * UNIMPLEMENTED answer): journal writes then go one by one, and wait for the run's saves,
   * since such a server checksums a save over the whole journal at save time.
   */
  legacyJournal: boolean;
}

/** (thread id, namespace) of a LangGraph config's `configurable`. */
export function address(configurable: Record<string, unknown> | undefined): { threadId: string; ns: string } {
  const threadId = configurable?.["thread_id"];
  if (threadId === undefined || threadId === null || threadId === "") {
    throw new Error('CheckpointdSaver: the config has no "thread_id" in its "configurable"; pass one, e.g. ' +
      '{ configurable: { thread_id: "my-thread" } }');
  }
  const ns = configurable?.["checkpoint_ns"];
  return { threadId: String(threadId), ns: typeof ns === "string" ? ns : "" };
}

/** The step of a checkpoint by its LangGraph id: remembered, else asked for. */
export async function stepOf(core: Core, state: RunState, checkpointId: string): Promise<bigint | undefined> {
  const known = state.labels.get(checkpointId);
  if (known !== undefined) return known;
  try {
    const response = await core.client.loadAtStep({
      runId: state.runId,
      label: checkpointId,
      journal: JournalScope.NONE,
      messageOffset: NO_MESSAGES,
    });
    const step = response.checkpoint?.step;
    if (step === undefined) return undefined;
    state.remember(checkpointId, step);
    return step;
  } catch (error) {
    if (isCode(error, Code.NotFound) || isCode(error, Code.DataLoss)) return undefined;
    throw error;
  }
}
