/**
 * The saver's writes: `put` saves a checkpoint at the run's next step, `putWrites` journals
 * pending writes at their checkpoint's step (docs/langgraph-mapping.md, behaviour rules 1 and 2).
 *
 * A put holds the run's gate (puts of a run go one at a time) from the sync that learns the
 * run's head through the save to the recording of the writes that arrived before it. A save
 * names the journal prefix its checksum covers (`tool_count`), so journal writes go on meanwhile.
 * Under LangGraph's default durability ("async") a checkpoint's put runs in the background
 * beside its tasks, so its pending writes may come first: they are held, and the put journals
 * them at the step it saves at, in the same round trip as its save, returning once both landed,
 * so when a graph call returns its writes are durable as under any other durability mode. A save
 * refused there leaves them orphaned at that step under the checkpoint's id, which no checkpoint
 * stored at that step has (reads take the writes named after their own checkpoint's id, at its
 * step): they are journalled again where the checkpoint lands, under fresh call ids.
 */

import { randomUUID } from "node:crypto";

import { ConnectError } from "@connectrpc/connect";
import { copyCheckpoint, ERROR, WRITES_IDX_MAP, type ChannelVersions, type Checkpoint, type PendingWrite } from "@langchain/langgraph-checkpoint";

import { checkpointChecksum } from "../checksum.js";
import { Code, CheckpointdError } from "../errors.js";
import type { RunHead } from "../gen/checkpoint/v1/checkpoint_pb.js";
import { encodeWrite, ENVELOPE_VERSION, LOG_DIGEST_KEY, splitMetadata } from "./codec.js";
import { address, stepOf, type Core } from "./core.js";
import { loadForSync, StaleLog, type Loaded } from "./load.js";
import { runId, writeCallId } from "./naming.js";
import { check, fenced, take } from "./ownership.js";
import { isCode } from "./queries.js";
import { ofJournal, ofResult, type HeldWrite, type JournalEntry, type RunState, type Saving, type SerializedMessage } from "./runs.js";

/** Saves retried after a conflict with another writer before giving up. */
const SAVE_ATTEMPTS = 8;

type Configurable = Record<string, unknown> | undefined;

/**
 * The channel values a checkpoint stores. A checkpoint with a parent stores every value, so that
 * each checkpoint stays whole on its own (retention deletes ancestors; the checksum covers one
 * checkpoint): for a graph, a value `newVersions` does not name equals its ancestor's anyway. A
 * checkpoint without a parent has no ancestor to carry unchanged channels from, so, as
 * LangGraph's own savers, it keeps only the channels `newVersions` names (and unversioned ones).
 */
function storedValues(checkpoint: Checkpoint, newVersions: ChannelVersions, parentId: string | undefined): Record<string, unknown> {
  if (parentId !== undefined) return { ...checkpoint.channel_values };
  const values: Record<string, unknown> = {};
  for (const [channel, value] of Object.entries(checkpoint.channel_values)) {
    if (channel in newVersions || !(channel in checkpoint.channel_versions)) values[channel] = value;
  }
  return values;
}

export async function put(core: Core, configurable: Configurable, checkpoint: Checkpoint, metadata: Record<string, unknown>, newVersions: ChannelVersions): Promise<void> {
  const { threadId, ns } = address(configurable);
  const parent = configurable?.["checkpoint_id"];
  const parentId = typeof parent === "string" && parent !== "" ? parent : undefined;
  const state = core.runs.get(runId(threadId, ns));
  // The caller's loop goes on while this put waits for the gate: keep the values it gave.
  const snapshot: Checkpoint = { ...copyCheckpoint(checkpoint), channel_values: storedValues(checkpoint, newVersions, parentId) };
  await state.gate.hold(() => putHeld(core, state, ns, snapshot, { ...metadata }, parentId));
}

/**
 * A put's saves, with the run's gate held: syncs when needed, retries after conflicts. The
 * writes for the checkpoint held or arriving while a save is on its way are journalled at that
 * save's step beside it; the put returns once the checkpoint and all of them landed at one step.
 */
async function putHeld(core: Core, state: RunState, ns: string, checkpoint: Checkpoint, metadata: Record<string, unknown>, parentId: string | undefined): Promise<void> {
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    // A thread this process found empty and has not written yet needs no GetRun on its first
    // attempt: a save refused because another writer got there first syncs for the next one.
    const assumeEmpty = attempt === 0 && state.seenEmpty && state.newestLabel === undefined && !core.exclusive;
    if (!state.synced && !(await sync(core, state, assumeEmpty, attempt >= 2))) continue;
    const step = state.nextStep;
    const saving: Saving = { checkpointId: checkpoint.id, step, journalled: [journalAt(core, state, checkpoint.id, step, state.takeHeld(checkpoint.id))] };
    if (!core.legacyJournal) state.saving = saving;
    let saved = false;
    let placed: HeldWrite[];
    try {
      saved = await save(core, state, ns, checkpoint, metadata, parentId, step);
    } finally {
      state.saving = undefined;
      placed = (await Promise.all(saving.journalled)).flat();
      // Not saved: kept for the next attempt, or for a retry of the put if this one fails.
      if (!saved) state.hold(checkpoint.id, [...placed, ...state.takeHeld(checkpoint.id)]);
    }
    if (!saved) continue;
    // The step it landed at is `step`, unless it was stored already (a retried put).
    const landed = state.labels.get(checkpoint.id);
    if (landed === undefined) throw new Error(`checkpoint ${checkpoint.id} of run ${state.runId} vanished after its save`);
    // What is not journalled at that step yet: writes placed elsewhere, or not at all (legacy
    // server, journal call failed: recorded now, so a lasting failure fails the put), and writes
    // that came after the save.
    const rest = [...placed.filter((w) => w.journalledAt !== landed), ...state.takeHeld(checkpoint.id)];
    if (rest.length > 0) await recordWrites(core, state, checkpoint.id, landed, rest);
    return;
  }
  throw new Error(`could not save checkpoint ${checkpoint.id} of run ${state.runId}: ${SAVE_ATTEMPTS} conflicting writers in a row`);
}

/**
 * Journals writes of a checkpoint at the step its save is about to take, beside that save (its
 * checksum names the journal prefix it covers, so the two may land in either order); gives them
 * back as they then stand. Never fails: writes it could not journal stay for the put to record
 * after its save. A server without `RecordToolResults` checksums a save over the whole journal
 * at save time: there nothing goes out beside a save.
 */
async function journalAt(core: Core, state: RunState, checkpointId: string, step: bigint, writes: HeldWrite[]): Promise<HeldWrite[]> {
  const todo = writes.filter((w) => w.journalledAt !== step);
  if (todo.length === 0 || core.legacyJournal) return writes;
  try {
    if (!(await recordBatch(core, state, checkpointId, step, todo))) return writes;
  } catch {
    return writes.map((w) => ({ ...w, idTaken: true })); // it may have landed all the same
  }
  return writes.map((w) => ({ ...w, journalledAt: step, idTaken: true }));
}

async function serialize(core: Core, message: unknown): Promise<SerializedMessage> {
  const [role, content] = await core.serde.dumpsTyped(message);
  return { role, content };
}

function sameBytes(a: SerializedMessage, b: SerializedMessage): boolean {
  return a.role === b.role && Buffer.compare(Buffer.from(a.content), Buffer.from(b.content)) === 0;
}

/**
 * True when `messages` starts with the log prefix held. Identity first: LangGraph's reducers
 * carry the same message objects from step to step, so the common case costs one comparison
 * per message; otherwise the serialized forms are compared.
 */
async function extendsLog(core: Core, state: RunState, messages: unknown[]): Promise<boolean> {
  if (messages.length < state.logLength) return false;
  for (let i = 0; i < state.logLength; i++) {
    if (messages[i] === state.messages[i]) continue;
    if (!sameBytes(await serialize(core, messages[i]), state.serialized[i] as SerializedMessage)) return false;
  }
  return true;
}

/**
 * One save attempt at `step`, the run's next step; false when the run moved on under us (the
 * state is then marked for a sync).
 */
async function save(core: Core, state: RunState, ns: string, checkpoint: Checkpoint, metadata: Record<string, unknown>, parentId: string | undefined, step: bigint): Promise<boolean> {
  const values: Record<string, unknown> = { ...checkpoint.channel_values };
  let fresh: unknown[] = [];
  let inLog = false;
  const channel = core.channel;
  const offset = state.logLength;
  if (channel !== undefined && Array.isArray(values[channel])) {
    const messages = values[channel] as unknown[];
    if (await extendsLog(core, state, messages)) {
      inLog = true;
      fresh = messages.slice(offset);
      delete values[channel];
    }
  }
  const { mapped, rest } = splitMetadata(metadata);
  const envelope = {
    v: ENVELOPE_VERSION,
    checkpoint: { ...checkpoint, channel_values: values },
    parent: parentId ?? null,
    ns,
    log: inLog ? channel : null,
    metadata: rest,
  };
  const [contentType, payload] = await core.serde.dumpsTyped(envelope);
  const serialized = await Promise.all(fresh.map((m) => serialize(core, m)));
  const chain = state.chainAt(offset).extend(serialized);
  mapped[LOG_DIGEST_KEY] = chain.hex;
  const tools = state.tools; // one reading: concurrent journal writes may advance the state's chain
  const checksum = checkpointChecksum({ runId: state.runId, step, contentType, state: payload, metadata: mapped }, chain, tools);
  try {
    await core.client.save({
      runId: state.runId,
      step,
      contentType,
      state: payload,
      messages: serialized,
      messageOffset: BigInt(offset),
      metadata: mapped,
      epoch: state.ownedEpoch ?? state.epoch,
      checksum,
      label: checkpoint.id,
      ...(core.legacyJournal ? {} : { toolCount: BigInt(tools.length) }), // the journal prefix the checksum covers
    });
  } catch (error) {
    if (!(error instanceof CheckpointdError)) throw error;
    if (error.code === Code.AlreadyExists) {
      state.forget();
      if (error.reason !== "LABEL_TAKEN") return false;
      // This checkpoint id is stored already (a retried put whose answer was lost): learn its
      // step, so writes for it that come later are journalled, not held for a put to come.
      return (await stepOf(core, state, checkpoint.id)) !== undefined;
    }
    if (error.code === Code.FailedPrecondition) {
      state.forget(); // a stale epoch, a step behind the latest, a log that grew: resync
      return false;
    }
    if (error.code === Code.InvalidArgument && error.reason === "CHECKSUM_MISMATCH") {
      state.forget();
      state.dropLog(); // the server's log or journal is not what this process held
      return false;
    }
    throw error;
  }
  if (state.logLength === offset) state.extendLog(fresh, serialized);
  state.nextStep = step + 1n;
  state.remember(checkpoint.id, step);
  return true;
}

/**
 * Learns the run's next step, epoch, log and journal chain from the server (or, with
 * `assumeEmpty`, takes the run for one without checkpoints without asking); false when the run
 * moved on while it looked (the caller tries again).
 */
async function sync(core: Core, state: RunState, assumeEmpty: boolean, hard: boolean): Promise<boolean> {
  if (hard) state.dropLog();
  if (core.exclusive) await take(core.client, state);
  let head;
  try {
    if (!assumeEmpty) head = (await core.client.getRun({ runId: state.runId })).run;
  } catch (error) {
    if (!isCode(error, Code.NotFound)) throw error;
  }
  if (head === undefined) {
    state.dropLog();
    state.nextStep = 0n;
    state.epoch = 0n;
    state.synced = true;
    state.resetJournal([]);
    return true;
  }
  check(state, head.epoch);
  let entries: JournalEntry[];
  let epoch: bigint;
  let nextStep: bigint;
  if (head.latestStep !== undefined) {
    let loaded: Loaded | undefined;
    try {
      loaded = await loadForSync(core, state, head.latestStep, head.messageCount);
    } catch (error) {
      if (!(error instanceof StaleLog)) throw error;
      state.dropLog();
      loaded = await loadForSync(core, state, head.latestStep, head.messageCount);
    }
    if (loaded === undefined && await unchanged(core, state, head)) {
      // Not a race: the log runs past the newest checkpoint for good, because newer ones were
      // deleted (deleteForRuns, prune, an operator). Without a rewind every save would be refused
      // and the thread wedged ("conflicting writers"); Resume truncates the log to it.
      loaded = await loadForSync(core, state, head.latestStep, head.messageCount, true);
    }
    if (loaded === undefined) return false;
    entries = loaded.journal;
    epoch = loaded.epoch ?? head.epoch;
    // our own Resume past a corrupt newest checkpoint
    if (loaded.epoch !== undefined && state.ownedEpoch !== undefined) state.ownedEpoch = loaded.epoch;
    nextStep = head.latestStep + 1n;
  } else if (head.messageCount > 0n) {
    // Every checkpoint deleted, the message log left: a save from offset 0 would be bad input
    // until Resume (restarting from scratch) truncates the log.
    const loaded = await loadForSync(core, state, 0n, 0n, true);
    if (loaded === undefined) return false;
    entries = loaded.journal;
    epoch = loaded.epoch ?? head.epoch;
    if (loaded.epoch !== undefined && state.ownedEpoch !== undefined) state.ownedEpoch = loaded.epoch;
    nextStep = loaded.step + 1n;
  } else {
    state.dropLog();
    const journal = head.toolCount > 0n ? (await core.client.getJournal({ runId: state.runId })).entries : [];
    entries = journal.map(ofJournal);
    epoch = head.epoch;
    nextStep = 0n;
  }
  state.synced = true;
  if (!state.resetJournal(entries)) {
    state.synced = false;
    throw new CheckpointdError(new ConnectError(`the tool journal of run ${state.runId} has a gap; see GetJournal`, Code.DataLoss));
  }
  state.epoch = epoch;
  state.nextStep = nextStep;
  return true;
}

/** True when the run's head is as `head` still says: a mismatch seen since is not a race. */
async function unchanged(core: Core, state: RunState, head: RunHead): Promise<boolean> {
  let again: RunHead | undefined;
  try {
    again = (await core.client.getRun({ runId: state.runId })).run;
  } catch (error) {
    if (isCode(error, Code.NotFound)) return false;
    throw error;
  }
  return again !== undefined && again.latestStep === head.latestStep && again.messageCount === head.messageCount &&
    again.epoch === head.epoch && again.toolCount === head.toolCount;
}

export async function putWrites(core: Core, configurable: Configurable, writes: PendingWrite[], taskId: string, taskPath: string): Promise<void> {
  const { threadId, ns } = address(configurable);
  const checkpointId = configurable?.["checkpoint_id"];
  if (typeof checkpointId !== "string" || checkpointId === "") {
    throw new Error('CheckpointdSaver.putWrites: the config has no "checkpoint_id" in its "configurable"');
  }
  const state = core.runs.get(runId(threadId, ns));
  const held: HeldWrite[] = await Promise.all(writes.map(async ([channel, value], idx): Promise<HeldWrite> => {
    const [type, bytes] = await core.serde.dumpsTyped(value);
    return { taskId, taskPath, idx: WRITES_IDX_MAP[channel] ?? idx, channel, type, value: bytes };
  }));
  // A process runs a checkpoint's tasks only after saving or loading it, and either teaches it
  // the id; so an id it does not know yet, on a run it knows, is one whose put is still on its
  // way here: no need to ask the server.
  const pending = !state.labels.has(checkpointId) && state.newerThanKnown(checkpointId);
  let step = pending ? undefined : await stepOf(core, state, checkpointId);
  if (core.exclusive && state.ownedEpoch === undefined) await state.gate.hold(() => take(core.client, state));
  // The put's save remembers the id before it takes what is held.
  step ??= state.labels.get(checkpointId);
  if (step === undefined) {
    // Not saved yet: its put (running beside these writes) records them; if its save is on its
    // way, at that save's step right now.
    const saving = state.saving;
    if (saving?.checkpointId === checkpointId) saving.journalled.push(journalAt(core, state, checkpointId, saving.step, held));
    else state.hold(checkpointId, held);
    return;
  }
  const known = step;
  const record = () => recordWrites(core, state, checkpointId, known, held);
  await (core.legacyJournal ? state.gate.hold(record) : record());
}

/** The journal entries of pending writes of one checkpoint at `step`. */
function entriesOf(checkpointId: string, step: bigint, writes: HeldWrite[]) {
  return writes.map((w) => ({
    // Special channels (idx < 0) are journalled anew each time; the newest one wins on read. A
    // write whose plain call id may be taken at another step (its save refused there) gets a
    // fresh one too: at this step it is then the first of its (task, idx), so it is read.
    callId: writeCallId(checkpointId, w.taskId, w.idx, w.idx < 0 || w.idTaken ? randomUUID().replaceAll("-", "") : ""),
    toolName: w.channel,
    step,
    output: encodeWrite(w.taskId, w.taskPath, w.idx, w.type, w.value),
    isError: w.channel === ERROR,
  }));
}

/**
 * Journals writes in one `RecordToolResults` call (one transaction); false, journalling nothing,
 * on a server without it (which `Core.legacyJournal` then remembers).
 */
async function recordBatch(core: Core, state: RunState, checkpointId: string, step: bigint, writes: HeldWrite[]): Promise<boolean> {
  const results = entriesOf(checkpointId, step, writes);
  try {
    const response = await fenced(core.client, state, (epoch) => core.client.recordToolResults({ runId: state.runId, epoch, results }));
    for (const recorded of response.results) if (recorded.result !== undefined) state.learn(ofResult(recorded.result));
    return true;
  } catch (error) {
    if (!isCode(error, Code.Unimplemented)) throw error;
    core.legacyJournal = true;
    return false;
  }
}

/**
 * Journals a task's pending writes in one `RecordToolResults` call (one transaction); one call
 * per write on a server without it (`Core.legacyJournal`).
 */
export async function recordWrites(core: Core, state: RunState, checkpointId: string, step: bigint, writes: HeldWrite[]): Promise<void> {
  if (!core.legacyJournal && (await recordBatch(core, state, checkpointId, step, writes))) return;
  for (const result of entriesOf(checkpointId, step, writes)) {
    const recorded = await fenced(core.client, state, (epoch) => core.client.recordToolResult({ runId: state.runId, epoch, ...result }));
    if (recorded.result !== undefined) state.learn(ofResult(recorded.result));
  }
}
