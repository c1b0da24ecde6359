/**
 * Reading LangGraph checkpoints back from checkpointd loads.
 *
 * A load asks only for the messages after the log prefix the saver already holds
 * (`message_offset`) and for the journal entries of the checkpoint's own step (`JournalScope
 * STEP`: its pending writes). The rebuilt log is checked against the chain digest the checkpoint
 * carries in its metadata (covered by its checksum, which the server verified on this read), so a
 * stale prefix (the thread deleted and written again by another process) is detected, dropped and
 * loaded again in full instead of being returned.
 */

import {
  compareWritesSortKeys,
  maxChannelVersion,
  TASKS,
  writesSortKey,
  type ChannelVersions,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";

/** One channel's version (LangGraph does not export the name). */
type ChannelVersion = ChannelVersions[string];
/** The saver's `getNextVersion`, for a channel that had no version. */
export type NextVersion = (current: undefined) => ChannelVersion;

import { Code, CheckpointdError } from "../errors.js";
import { ClientCapability, JournalScope, type Checkpoint as PbCheckpoint, type ToolIntent, type ToolResult } from "../gen/checkpoint/v1/checkpoint_pb.js";
import { passedOverOf, type PassedOver } from "../store.js";
import { decodeWrite, joinMetadata, LOG_DIGEST_KEY, META_PREFIX, type Write } from "./codec.js";
import type { Core } from "./core.js";
import { ofIntent, ofResult, type JournalEntry, type RunState, type SerializedMessage } from "./runs.js";

/** The message-log prefix held for a run is not the server's: drop it and load again. */
export class StaleLog extends Error {}

/** Every checkpoint of the run failed verification (the thread must start over). */
export class AllCorrupt extends Error {}

/** A sync that must go through Resume. */
class Rewind extends Error {}

/** One checkpoint read back, LangGraph-shaped. */
export interface Loaded {
  checkpointId: string;
  step: bigint;
  checkpoint: Record<string, unknown>;
  metadata: Record<string, unknown>;
  parentId: string | undefined;
  ns: string;
  writes: Write[];
  journal: JournalEntry[];
  epoch: bigint | undefined;
  /**
   * Quarantined checkpoints above this one, newest first (a load of "latest" only): on every
   * such load, not only the one that found them corrupt.
   */
  passedOver: PassedOver[];
}

/** What a checkpoint is asked for by: its LangGraph id, its step, or the latest valid one. */
export type Target = { label: string } | { step: bigint } | "latest";

interface Envelope {
  v: number;
  checkpoint: Record<string, unknown>;
  parent: string | null;
  ns: string;
  log: string | null;
  metadata: Record<string, unknown> | null;
}

/** A checkpoint by target. NotFound and DataLoss propagate; AllCorrupt for "latest" when
 * every checkpoint of the run is corrupt. */
export async function load(core: Core, state: RunState, target: Target): Promise<Loaded> {
  for (let attempt = 0; ; attempt++) {
    const base = { runId: state.runId, journal: JournalScope.STEP, messageOffset: BigInt(state.logLength) };
    let checkpoint: PbCheckpoint | undefined;
    let results: ToolResult[];
    let passedOver: PassedOver[] = [];
    try {
      if (target === "latest") {
        const response = await core.client.loadLatest(base);
        ({ checkpoint, toolResults: results } = response);
        passedOver = passedOverOf(response);
      } else {
        const response = await core.client.loadAtStep({ ...base, ...target });
        ({ checkpoint, toolResults: results } = response);
      }
    } catch (error) {
      if (target === "latest" && error instanceof CheckpointdError && error.reason === "ALL_CHECKPOINTS_CORRUPT") {
        throw new AllCorrupt(error.message, { cause: error });
      }
      throw error;
    }
    if (checkpoint === undefined) throw new Error(`checkpointd answered a load of ${state.runId} without a checkpoint`);
    try {
      const loaded = await decode(core, state, checkpoint, results, false);
      loaded.passedOver = passedOver;
      state.remember(loaded.checkpointId, loaded.step);
      return loaded;
    } catch (error) {
      if (!(error instanceof StaleLog) || attempt > 0) throw error;
      state.dropLog();
      state.forget();
    }
  }
}

/**
 * The run's newest checkpoint with the whole journal, leaving the held log equal to the
 * server's. A corrupt newest checkpoint is resolved by Resume, which restores the newest valid
 * one, truncates the log to it and hands out a new epoch; so is `rewind` (the log runs past the
 * newest checkpoint because newer ones were deleted: a save would otherwise never line up with
 * it). Undefined when the run moved on.
 */
export async function loadForSync(core: Core, state: RunState, step: bigint, messageCount: bigint, rewind = false): Promise<Loaded | undefined> {
  if (rewind) state.dropLog();
  const messageOffset = BigInt(state.logLength);
  let epoch: bigint | undefined;
  let checkpoint: PbCheckpoint | undefined;
  let results: ToolResult[];
  let intents: ToolIntent[];
  try {
    if (rewind) throw new Rewind();
    const response = await core.client.loadAtStep({ runId: state.runId, step, journal: JournalScope.ALL, messageOffset });
    ({ checkpoint, toolResults: results, toolIntents: intents } = response);
  } catch (error) {
    if (!(error instanceof Rewind) && !(error instanceof CheckpointdError && error.code === Code.DataLoss)) throw error;
    // Exactly-once tools settle their own calls in doubt (RecordToolIntent tells them), so the
    // saver declares it understands them rather than be refused CAPABILITY_REQUIRED.
    const resumed = await core.client.resume({ runId: state.runId, messageOffset, capabilities: [ClientCapability.IN_DOUBT_CALLS] });
    epoch = resumed.epoch;
    checkpoint = resumed.restartedFromScratch ? undefined : resumed.checkpoint;
    ({ toolResults: results, toolIntents: intents } = resumed);
    if (checkpoint !== undefined) messageCount = checkpoint.messageCount;
  }
  let loaded: Loaded;
  if (checkpoint === undefined) {
    state.dropLog();
    loaded = { checkpointId: "", step: -1n, checkpoint: {}, metadata: {}, parentId: undefined, ns: "", writes: [], journal: [], epoch: undefined, passedOver: [] };
  } else {
    if (checkpoint.messageCount !== messageCount) return undefined;
    loaded = await decode(core, state, checkpoint, [], true);
  }
  loaded.epoch = epoch;
  loaded.journal = [...results.map(ofResult), ...intents.map(ofIntent)];
  return loaded;
}

async function decode(core: Core, state: RunState, checkpoint: PbCheckpoint, results: ToolResult[], exact: boolean): Promise<Loaded> {
  const envelope = (await core.serde.loadsTyped(checkpoint.contentType, checkpoint.state)) as Envelope;
  const body = { ...envelope.checkpoint };
  const values = { ...((body["channel_values"] as Record<string, unknown> | undefined) ?? {}) };
  const messages = await logMessages(core, state, checkpoint, exact);
  if (envelope.log) values[envelope.log] = messages;
  body["channel_values"] = values;
  const mapped: Record<string, string> = {};
  for (const [key, value] of Object.entries(checkpoint.metadata)) if (key.startsWith(META_PREFIX)) mapped[key] = value;
  const label = checkpoint.label || String(body["id"] ?? "");
  const prefix = `${label}/`;
  const writes = new Map<string, Write>();
  for (const result of [...results].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))) {
    if (!result.callId.startsWith(prefix)) continue;
    const write = decodeWrite(result.output, result.toolName, result.seq);
    if (write === undefined) continue;
    const key = JSON.stringify([write.taskId, write.idx]);
    if (write.idx >= 0 && writes.has(key)) continue; // regular writes: the first one stands
    writes.set(key, write); // special channels: the newest one stands
  }
  const ordered = [...writes.values()].sort((a, b) =>
    compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
  return {
    checkpointId: label,
    step: checkpoint.step,
    checkpoint: body,
    metadata: joinMetadata(mapped, envelope.metadata ?? {}),
    parentId: envelope.parent ?? undefined,
    ns: String(envelope.ns ?? ""),
    writes: ordered,
    journal: [],
    epoch: undefined,
    passedOver: [],
  };
}

/**
 * The checkpoint's message log: the held prefix plus what the load returned, checked against
 * the checkpoint's log digest. With `exact`, the held log becomes exactly it.
 */
async function logMessages(core: Core, state: RunState, checkpoint: PbCheckpoint, exact: boolean): Promise<unknown[]> {
  const serialized: SerializedMessage[] = checkpoint.messages.map((m) => ({ role: m.role, content: m.content }));
  const start = Number(checkpoint.messagesOffset);
  if (start > state.logLength) throw new StaleLog();
  const chain = state.chainAt(start).extend(serialized);
  const expected = checkpoint.metadata[LOG_DIGEST_KEY];
  if (expected !== undefined && chain.hex !== expected) throw new StaleLog();
  const objects = await Promise.all(serialized.map((m) => core.serde.loadsTyped(m.role, m.content)));
  // Another call of this process may have dropped the held log while this one deserialized.
  if (start > state.logLength) throw new StaleLog();
  if (exact) state.truncateLog(start);
  if (start === state.logLength && objects.length > 0) {
    state.extendLog(objects, serialized);
    return state.messages.slice(0, start + objects.length);
  }
  return [...state.messages.slice(0, start), ...objects];
}

/** A LangGraph tuple of a loaded checkpoint. */
export async function toTuple(core: Core, threadId: string, ns: string, loaded: Loaded): Promise<CheckpointTuple> {
  const tuple: CheckpointTuple = {
    config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: loaded.checkpointId } },
    checkpoint: loaded.checkpoint as unknown as CheckpointTuple["checkpoint"],
    metadata: loaded.metadata as unknown as CheckpointTuple["metadata"],
    pendingWrites: await Promise.all(
      loaded.writes.map(async (w): Promise<[string, string, unknown]> => [w.taskId, w.channel, await core.serde.loadsTyped(w.type, w.value)])),
  };
  if (loaded.parentId) {
    tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: loaded.parentId } };
  }
  return tuple;
}

/**
 * A checkpoint of format v < 4 keeps its pending sends as writes to the `__pregel_tasks` channel
 * of its parent; LangGraph reads them as that channel's value of the child (as its savers do).
 */
export async function migratePendingSends(core: Core, state: RunState, loaded: Loaded, nextVersion: NextVersion): Promise<void> {
  if (Number(loaded.checkpoint["v"]) >= 4 || loaded.parentId === undefined) return;
  let parent: Loaded;
  try {
    parent = await load(core, state, { label: loaded.parentId });
  } catch (error) {
    if (error instanceof CheckpointdError && (error.code === Code.NotFound || error.code === Code.DataLoss)) return;
    throw error;
  }
  const sends = await Promise.all(parent.writes.filter((w) => w.channel === TASKS).map((w) => core.serde.loadsTyped(w.type, w.value)));
  const values = { ...(loaded.checkpoint["channel_values"] as Record<string, unknown>), [TASKS]: sends };
  const versions = { ...((loaded.checkpoint["channel_versions"] as Record<string, ChannelVersion> | undefined) ?? {}) };
  const known = Object.values(versions);
  versions[TASKS] = known.length > 0 ? maxChannelVersion(...known) : nextVersion(undefined);
  loaded.checkpoint = { ...loaded.checkpoint, channel_values: values, channel_versions: versions };
}
