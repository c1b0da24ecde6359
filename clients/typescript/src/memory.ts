/**
 * `MemoryBackend`: checkpointd's checkpoint rules in this process, for tests and throwaway runs
 * (`CheckpointStore.inMemory()`), as the Python client's memory backend. It answers the calls
 * the store makes (Resume, Save, LoadLatest, LoadAtStep, Validate, GetRun, RecordToolResult,
 * RecordToolIntent) with the server's messages, errors and reasons: checksum v1 computed on save
 * and verified on every read (a corrupt checkpoint is quarantined and skipped; when all are,
 * Resume restarts from scratch), fencing epochs, idempotent saves and tool results, the message
 * log with offsets, the tool journal with intents and calls in doubt. No tenants, auth, size
 * limits, retention, labels, journal scopes or paging (every answer is whole, with the whole journal).
 *
 * Several stores may share one backend, as several processes share one server.
 * `corruptState` and `corruptToolResult` damage stored data the way a bad disk would.
 */

import { randomUUID } from "node:crypto";

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampNow, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

import { MessageChain, ToolChain, checkpointChecksum, idempotencyKey } from "./checksum.js";
import { CheckpointdError, ERROR_DOMAIN, ReplayMismatch } from "./errors.js";
import * as pb from "./gen/checkpoint/v1/checkpoint_pb.js";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

/** A refusal as the server sends it: a code and an ErrorInfo reason. */
export function refused(code: Code, reason: string, message: string): CheckpointdError {
  return new CheckpointdError(
    new ConnectError(message, code, undefined, [{ desc: ErrorInfoSchema, value: { reason, domain: ERROR_DOMAIN } }]),
  );
}

/** A stored checkpoint. */
interface Row {
  id: string;
  epoch: bigint;
  contentType: string;
  state: Uint8Array;
  metadata: Record<string, string>;
  messageCount: number;
  toolCount: number;
  checksum: string;
  createdAt: Timestamp;
  quarantine: string | undefined;
}

/** A journal entry (a result, or an intent when `intent`) and the chain after it. */
interface Entry {
  intent: boolean;
  callId: string;
  toolName: string;
  step: bigint;
  output: Uint8Array;
  isError: boolean;
  /** The call's arguments digest as journalled; "" when none was sent. */
  argumentsDigest: string;
  seq: number;
  recordedAt: Timestamp;
  chain: string;
}

const DIGEST = /^[0-9a-f]{64}$/;

/** A request's arguments digest: empty, or 64 lower-case hex digits (bad input otherwise). */
function checkDigest(raw: string | undefined): string {
  const digest = raw ?? "";
  if (digest !== "" && !DIGEST.test(digest)) {
    throw new CheckpointdError(new ConnectError("arguments_digest must be 64 lower-case hex digits or empty", Code.InvalidArgument,
      undefined, [{ desc: ErrorInfoSchema, value: { reason: "INVALID_ARGUMENT", domain: ERROR_DOMAIN, metadata: { field: "arguments_digest" } } }]));
  }
  return digest;
}

/** ARGUMENTS_MISMATCH when the call id is journalled with another non-empty digest. */
function checkSameArguments(callId: string, known: readonly (Entry | undefined)[], digest: string): void {
  for (const entry of known) {
    if (entry !== undefined && digest !== "" && entry.argumentsDigest !== "" && entry.argumentsDigest !== digest) {
      throw ReplayMismatch.of(callId, entry.argumentsDigest, digest);
    }
  }
}

interface RunData {
  epoch: bigint;
  checkpoints: Map<number, Row>;
  messages: pb.Message[];
  journal: Entry[];
  updatedAt: Timestamp;
}

function pushed(chain: ToolChain, entry: Entry): ToolChain {
  return entry.intent ? chain.pushIntent(entry) : chain.pushResult(entry);
}

function journalChain(entries: readonly Entry[]): ToolChain {
  return entries.reduce(pushed, ToolChain.EMPTY);
}

/**
 * Journal entries that fail verification: each is checked against the chain recomputed over
 * the entries before it, so every entry from the first damaged one on counts as corrupt (the
 * server, which keeps each entry's chain value, can tell a lone damaged entry; this is stricter).
 */
function corruptEntries(journal: readonly Entry[]): Entry[] {
  let chain = ToolChain.EMPTY;
  const corrupt: Entry[] = [];
  journal.forEach((entry, index) => {
    chain = pushed(chain, entry);
    if (corrupt.length > 0 || entry.seq !== index + 1 || chain.hex !== entry.chain) corrupt.push(entry);
  });
  return corrupt;
}

function checkId(kind: string, raw: string): string {
  if (raw === "") throw refused(Code.InvalidArgument, "INVALID_ARGUMENT", `${kind} must not be empty`);
  if (Buffer.byteLength(raw) > 256) throw refused(Code.InvalidArgument, "INVALID_ARGUMENT", `${kind} is over 256 bytes`);
  if (/[\u0000-\u001f\u007f-\u009f]/.test(raw)) {
    throw refused(Code.InvalidArgument, "INVALID_ARGUMENT", `${kind} must not contain control characters`);
  }
  return raw;
}

function checkStep(step: bigint | undefined): number {
  const value = step ?? 0n;
  if (value < 0n) throw refused(Code.InvalidArgument, "INVALID_ARGUMENT", `step must be >= 0, got ${value}`);
  return Number(value);
}

/** Fencing: a write carries exactly the run's current epoch. */
function checkEpoch(requested: bigint, current: bigint): void {
  if (requested < current) {
    throw refused(
      Code.FailedPrecondition,
      "STALE_EPOCH",
      `stale epoch ${requested}: the run was resumed at epoch ${current}; this writer is fenced`,
    );
  }
  if (requested > current) {
    throw refused(Code.FailedPrecondition, "EPOCH_NOT_ISSUED", `epoch ${requested} was never issued: the run is at epoch ${current}`);
  }
}

type In<S extends Parameters<typeof create>[0]> = MessageInitShape<S>;

/** Runs kept in this process; the calls of a CheckpointClient that a CheckpointStore makes. */
export class MemoryBackend {
  private readonly runs = new Map<string, RunData>();

  constructor(readonly tenant = "default") {}

  /** Flips the first byte of the stored state of the checkpoint at `step`, as a bad disk would. */
  corruptState(runId: string, step: number): void {
    const row = this.runs.get(runId)?.checkpoints.get(step);
    if (row === undefined) throw new RangeError(`run ${runId} has no checkpoint at step ${step}`);
    row.state = row.state.length === 0 ? Uint8Array.of(0) : Uint8Array.of((row.state[0]! + 1) % 256, ...row.state.subarray(1));
  }

  /** Flips the first byte of a journalled result's output. */
  corruptToolResult(runId: string, callId: string): void {
    const entry = this.runs.get(runId)?.journal.find((e) => e.callId === callId && !e.intent);
    if (entry === undefined) throw new RangeError(`run ${runId} has no journalled result ${callId}`);
    entry.output = entry.output.length === 0 ? Uint8Array.of(0) : Uint8Array.of((entry.output[0]! + 1) % 256, ...entry.output.subarray(1));
  }

  private checkpoint(runId: string, step: number, data: RunData, offset = 0n): pb.Checkpoint {
    const row = data.checkpoints.get(step)!;
    const skip = Math.min(Number(offset), row.messageCount);
    return create(pb.CheckpointSchema, {
      checkpointId: row.id,
      runId,
      step: BigInt(step),
      contentType: row.contentType,
      state: row.state,
      messages: data.messages.slice(skip, row.messageCount),
      metadata: row.metadata,
      epoch: row.epoch,
      checksum: row.checksum,
      createdAt: row.createdAt,
      messageCount: BigInt(row.messageCount),
      toolCount: BigInt(row.toolCount),
      messagesOffset: BigInt(skip),
    });
  }

  private result(entry: Entry): pb.ToolResult {
    return create(pb.ToolResultSchema, {
      callId: entry.callId,
      toolName: entry.toolName,
      step: entry.step,
      output: entry.output,
      isError: entry.isError,
      seq: BigInt(entry.seq),
      recordedAt: entry.recordedAt,
      argumentsDigest: entry.argumentsDigest,
    });
  }

  private intent(runId: string, entry: Entry): pb.ToolIntent {
    return create(pb.ToolIntentSchema, {
      callId: entry.callId,
      toolName: entry.toolName,
      step: entry.step,
      idempotencyKey: idempotencyKey(this.tenant, runId, entry.callId),
      seq: BigInt(entry.seq),
      recordedAt: entry.recordedAt,
      argumentsDigest: entry.argumentsDigest,
    });
  }

  private journal(runId: string, entries: readonly Entry[]): { toolResults: pb.ToolResult[]; toolIntents: pb.ToolIntent[] } {
    return {
      toolResults: entries.filter((e) => !e.intent).map((e) => this.result(e)),
      toolIntents: entries.filter((e) => e.intent).map((e) => this.intent(runId, e)),
    };
  }

  /** Why the checkpoint at `step` does not verify against its checksum, or undefined. */
  private verify(runId: string, data: RunData, step: number): string | undefined {
    const row = data.checkpoints.get(step)!;
    if (data.messages.length < row.messageCount) return `message log holds ${data.messages.length} of the ${row.messageCount} messages`;
    if (data.journal.length < row.toolCount) return `tool journal holds ${data.journal.length} of the ${row.toolCount} entries`;
    const computed = checkpointChecksum(
      { runId, step, contentType: row.contentType, state: row.state, metadata: row.metadata },
      MessageChain.over(data.messages.slice(0, row.messageCount)),
      journalChain(data.journal.slice(0, row.toolCount)),
    );
    return computed === row.checksum ? undefined : `checksum mismatch: stored ${row.checksum}, computed ${computed}`;
  }

  /**
   * The newest step that verifies (corrupt ones above it quarantined on the way) and the steps
   * skipped, newest first. A damaged journal is DATA_LOSS unless `fallBack`: then the newest
   * checkpoint that does not cover its first corrupt entry is restored.
   */
  private latestValid(runId: string, data: RunData | undefined, fallBack: boolean): { step: number | undefined; skipped: number[] } {
    const skipped: number[] = [];
    if (data === undefined) return { step: undefined, skipped };
    const corrupt = corruptEntries(data.journal);
    const steps = [...data.checkpoints.keys()].sort((a, b) => b - a);
    for (const step of steps) {
      const row = data.checkpoints.get(step)!;
      if (row.quarantine !== undefined) continue;
      const firstCorrupt = corrupt[0];
      if (firstCorrupt !== undefined) {
        if (!fallBack) throw refused(Code.DataLoss, "CHECKPOINT_CORRUPT", `tool journal is corrupt at entry ${firstCorrupt.seq}`);
        if (row.toolCount >= firstCorrupt.seq) {
          row.quarantine = `covers tool journal entry ${firstCorrupt.seq}, which is corrupt`;
          skipped.push(step);
          continue;
        }
      }
      const reason = this.verify(runId, data, step);
      if (reason === undefined) return { step, skipped };
      row.quarantine = reason;
      skipped.push(step);
    }
    return { step: undefined, skipped };
  }

  /** What LoadLatest and Resume say on every read: the quarantined checkpoints above `restored`. */
  private static passedOver(data: RunData | undefined, restored: number | undefined): pb.PassedOverCheckpoint[] {
    return MemoryBackend.quarantinedAbove(data, restored).map((step) => {
      const row = data!.checkpoints.get(step)!;
      return create(pb.PassedOverCheckpointSchema, {
        step: BigInt(step), checkpointId: row.id, metadata: { ...row.metadata }, reason: row.quarantine ?? "",
      });
    });
  }

  private static quarantinedAbove(data: RunData | undefined, restored: number | undefined): number[] {
    if (data === undefined) return [];
    return [...data.checkpoints.entries()]
      .filter(([step, row]) => row.quarantine !== undefined && (restored === undefined || step > restored))
      .map(([step]) => step)
      .sort((a, b) => b - a);
  }

  async resume(request: In<typeof pb.ResumeRequestSchema>): Promise<pb.ResumeResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    if (request.requireExisting && !this.runs.has(runId)) {
      throw refused(Code.NotFound, "RUN_NOT_FOUND", `run ${runId} not found; Resume with require_existing starts no new run`);
    }
    const data = this.runs.get(runId) ?? { epoch: 0n, checkpoints: new Map(), messages: [], journal: [], updatedAt: timestampNow() };
    this.runs.set(runId, data);
    // The epoch goes up first, so nothing an older owner writes from here on can land.
    data.epoch += 1n;
    data.updatedAt = timestampNow();
    const corrupt = corruptEntries(data.journal);
    const declared = request.capabilities ?? [];
    if (!declared.includes(pb.ClientCapability.IN_DOUBT_CALLS) && corrupt.length > 0) {
      throw refused(Code.DataLoss, "CHECKPOINT_CORRUPT", `the tool journal of run ${runId} has corrupt entries`);
    }
    const { step } = this.latestValid(runId, data, true);
    const count = step === undefined ? 0 : data.checkpoints.get(step)!.messageCount;
    data.messages.length = count;
    const sound = data.journal.filter((e) => !corrupt.includes(e));
    const completed = new Set(sound.filter((e) => !e.intent).map((e) => e.callId));
    const corruptCalls = new Set(corrupt.map((e) => e.callId));
    const seen = new Set<string>();
    const inDoubt: pb.InDoubtCall[] = [];
    for (const entry of data.journal) {
      const damaged = corruptCalls.has(entry.callId);
      if ((entry.intent || damaged) && !completed.has(entry.callId) && !seen.has(entry.callId)) {
        seen.add(entry.callId);
        inDoubt.push(
          create(pb.InDoubtCallSchema, {
            callId: entry.callId,
            toolName: entry.toolName,
            step: entry.step,
            idempotencyKey: idempotencyKey(this.tenant, runId, entry.callId),
            corrupt: damaged,
          }),
        );
      }
    }
    if (!declared.includes(pb.ClientCapability.IN_DOUBT_CALLS) && inDoubt.length > 0) {
      throw refused(
        Code.FailedPrecondition,
        "CAPABILITY_REQUIRED",
        `run ${runId} has ${inDoubt.length} call(s) in doubt; resume with capability CLIENT_CAPABILITY_IN_DOUBT_CALLS`,
      );
    }
    return create(pb.ResumeResponseSchema, {
      ...(step === undefined ? {} : { checkpoint: this.checkpoint(runId, step, data, request.messageOffset) }),
      recoveredFromStep: BigInt(step ?? 0),
      skippedSteps: MemoryBackend.quarantinedAbove(data, step).map(BigInt),
      passedOver: MemoryBackend.passedOver(data, step),
      epoch: data.epoch,
      restartedFromScratch: step === undefined,
      inDoubt,
      corruptCallIds: [...corruptCalls],
      ...this.journal(runId, sound),
    });
  }

  async save(request: In<typeof pb.SaveRequestSchema>): Promise<pb.SaveResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    const step = checkStep(request.step);
    const data = this.runs.get(runId) ?? { epoch: 0n, checkpoints: new Map<number, Row>(), messages: [], journal: [], updatedAt: timestampNow() };
    checkEpoch(request.epoch ?? 0n, data.epoch);
    const offset = Number(request.messageOffset ?? 0n);
    if (offset > data.messages.length) {
      throw refused(
        Code.FailedPrecondition,
        "MESSAGE_LOG_BEHIND",
        `message_offset ${offset} is past the stored message log, which holds ${data.messages.length} messages; ` +
          "Resume the run and continue from what it restores",
      );
    }
    const incoming = (request.messages ?? []).map((m) => create(pb.MessageSchema, m));
    const log = [...data.messages.slice(0, offset), ...incoming];
    const metadata = { ...(request.metadata ?? {}) };
    const contentType = request.contentType ?? "";
    const state = request.state ?? new Uint8Array();
    const tools = journalChain(data.journal);
    const checksum = checkpointChecksum({ runId, step, contentType, state, metadata }, MessageChain.over(log), tools);
    if (request.checksum !== undefined && request.checksum !== checksum) {
      throw refused(
        Code.InvalidArgument,
        "CHECKSUM_MISMATCH",
        `checksum mismatch: the request carries ${request.checksum}, the content hashes to ${checksum}`,
      );
    }
    const existing = data.checkpoints.get(step);
    let replace = false;
    if (existing !== undefined) {
      if (existing.quarantine !== undefined) replace = true;
      else if (existing.checksum === checksum) {
        return create(pb.SaveResponseSchema, { checkpointId: existing.id, checksum, createdAt: existing.createdAt, alreadyExisted: true });
      } else if ((request.epoch ?? 0n) > existing.epoch) replace = true;
      else throw refused(Code.AlreadyExists, "STEP_CONFLICT", `step ${step} of run ${runId} already holds a different checkpoint`);
    }
    const latest = [...data.checkpoints.entries()].filter(([, row]) => row.quarantine === undefined).map(([s]) => s);
    const latestStep = latest.length === 0 ? undefined : Math.max(...latest);
    if (!replace && latestStep !== undefined && latestStep >= step) {
      throw refused(Code.FailedPrecondition, "STEP_BEHIND_LATEST", `step ${step} is not after the run's latest checkpoint at step ${latestStep}`);
    }
    if (offset !== data.messages.length) {
      throw refused(
        Code.InvalidArgument,
        "INVALID_ARGUMENT",
        `message_offset ${offset} does not match the message log's length ${data.messages.length}`,
      );
    }
    this.runs.set(runId, data);
    data.messages = log;
    const createdAt = timestampNow();
    data.updatedAt = createdAt;
    const row: Row = {
      id: randomUUID(),
      epoch: request.epoch ?? 0n,
      contentType,
      state,
      metadata,
      messageCount: log.length,
      toolCount: data.journal.length,
      checksum,
      createdAt,
      quarantine: undefined,
    };
    data.checkpoints.set(step, row);
    return create(pb.SaveResponseSchema, { checkpointId: row.id, checksum, createdAt });
  }

  async loadLatest(request: In<typeof pb.LoadLatestRequestSchema>): Promise<pb.LoadLatestResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    const data = this.runs.get(runId);
    const found = this.latestValid(runId, data, false);
    if (found.step === undefined || data === undefined) {
      const skipped = found.skipped.length > 0 ? found.skipped : MemoryBackend.quarantinedAbove(data, undefined);
      if (skipped.length === 0) throw refused(Code.NotFound, "CHECKPOINT_NOT_FOUND", `run ${runId} has no checkpoints`);
      throw refused(Code.DataLoss, "ALL_CHECKPOINTS_CORRUPT", `every checkpoint of run ${runId} is corrupt (${skipped.length} quarantined)`);
    }
    return create(pb.LoadLatestResponseSchema, {
      checkpoint: this.checkpoint(runId, found.step, data, request.messageOffset),
      skippedSteps: found.skipped.map(BigInt),
      passedOver: MemoryBackend.passedOver(data, found.step),
      ...this.journal(runId, data.journal),
    });
  }

  async loadAtStep(request: In<typeof pb.LoadAtStepRequestSchema>): Promise<pb.LoadAtStepResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    const step = checkStep(request.step);
    const data = this.runs.get(runId);
    const row = data?.checkpoints.get(step);
    if (data === undefined || row === undefined) {
      throw refused(Code.NotFound, "CHECKPOINT_NOT_FOUND", `run ${runId} has no checkpoint at step ${step}`);
    }
    if (row.quarantine !== undefined) {
      throw refused(Code.DataLoss, "CHECKPOINT_CORRUPT", `checkpoint at step ${step} is quarantined: ${row.quarantine}`);
    }
    if (corruptEntries(data.journal).length > 0) throw refused(Code.DataLoss, "CHECKPOINT_CORRUPT", "tool journal is corrupt");
    const reason = this.verify(runId, data, step);
    if (reason !== undefined) {
      row.quarantine = reason;
      throw refused(Code.DataLoss, "CHECKPOINT_CORRUPT", `checkpoint at step ${step} is corrupt: ${reason}`);
    }
    return create(pb.LoadAtStepResponseSchema, {
      checkpoint: this.checkpoint(runId, step, data, request.messageOffset),
      ...this.journal(runId, data.journal),
    });
  }

  async validate(request: In<typeof pb.ValidateRequestSchema>): Promise<pb.ValidateResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    const data = this.runs.get(runId);
    const steps = request.step === undefined ? [...(data?.checkpoints.keys() ?? [])].sort((a, b) => a - b) : [checkStep(request.step)];
    if (data === undefined || steps.length === 0) throw refused(Code.NotFound, "CHECKPOINT_NOT_FOUND", `run ${runId} has no checkpoints`);
    const verdicts = steps.map((step) => {
      const row = data.checkpoints.get(step);
      if (row === undefined) throw refused(Code.NotFound, "CHECKPOINT_NOT_FOUND", `run ${runId} has no checkpoint at step ${step}`);
      const earlier = row.quarantine;
      const reason = this.verify(runId, data, step);
      if (reason !== undefined && earlier === undefined) row.quarantine = reason;
      return create(pb.CheckpointVerdictSchema, {
        step: BigInt(step),
        valid: reason === undefined,
        reason: reason ?? (earlier === undefined ? "" : `quarantined earlier: ${earlier}`),
        storedChecksum: row.checksum,
        quarantined: earlier !== undefined || reason !== undefined,
      });
    });
    return create(pb.ValidateResponseSchema, { verdicts });
  }

  async getRun(request: In<typeof pb.GetRunRequestSchema>): Promise<pb.GetRunResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    const data = this.runs.get(runId);
    if (data === undefined) throw refused(Code.NotFound, "RUN_NOT_FOUND", `run ${runId} not found`);
    const steps = [...data.checkpoints.keys()];
    const valid = steps.filter((s) => data.checkpoints.get(s)!.quarantine === undefined);
    return create(pb.GetRunResponseSchema, {
      run: {
        runId,
        epoch: data.epoch,
        latestStep: BigInt(steps.length === 0 ? 0 : Math.max(...steps)),
        latestValidStep: BigInt(valid.length === 0 ? 0 : Math.max(...valid)),
        messageCount: BigInt(data.messages.length),
        toolCount: BigInt(data.journal.length),
        checkpointCount: BigInt(steps.length),
        updatedAt: data.updatedAt,
      },
    });
  }

  async recordToolResult(request: In<typeof pb.RecordToolResultRequestSchema>): Promise<pb.RecordToolResultResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    const callId = checkId("call_id", request.callId ?? "");
    const data = this.runs.get(runId) ?? { epoch: 0n, checkpoints: new Map(), messages: [], journal: [], updatedAt: timestampNow() };
    checkEpoch(request.epoch ?? 0n, data.epoch);
    const argumentsDigest = checkDigest(request.argumentsDigest);
    const existing = data.journal.find((e) => e.callId === callId && !e.intent);
    checkSameArguments(callId, [existing, data.journal.find((e) => e.callId === callId && e.intent)], argumentsDigest);
    if (existing !== undefined) return create(pb.RecordToolResultResponseSchema, { result: this.result(existing), alreadyRecorded: true });
    const entry = this.append(runId, data, {
      intent: false,
      callId,
      toolName: request.toolName ?? "",
      step: BigInt(checkStep(request.step)),
      output: request.output ?? new Uint8Array(),
      isError: request.isError ?? false,
      argumentsDigest,
    });
    return create(pb.RecordToolResultResponseSchema, { result: this.result(entry) });
  }

  async recordToolIntent(request: In<typeof pb.RecordToolIntentRequestSchema>): Promise<pb.RecordToolIntentResponse> {
    const runId = checkId("run_id", request.runId ?? "");
    const callId = checkId("call_id", request.callId ?? "");
    const data = this.runs.get(runId) ?? { epoch: 0n, checkpoints: new Map(), messages: [], journal: [], updatedAt: timestampNow() };
    checkEpoch(request.epoch ?? 0n, data.epoch);
    const argumentsDigest = checkDigest(request.argumentsDigest);
    const intent = data.journal.find((e) => e.callId === callId && e.intent);
    const result = data.journal.find((e) => e.callId === callId && !e.intent);
    checkSameArguments(callId, [intent, result], argumentsDigest);
    if (intent !== undefined || result !== undefined) {
      // A call known already (an intent, a result or both) gets no second intent.
      return create(pb.RecordToolIntentResponseSchema, {
        ...(intent === undefined ? {} : { intent: this.intent(runId, intent) }),
        ...(result === undefined ? {} : { result: this.result(result) }),
        alreadyRecorded: true,
      });
    }
    const entry = this.append(runId, data, {
      intent: true,
      callId,
      toolName: request.toolName ?? "",
      step: BigInt(checkStep(request.step)),
      output: new Uint8Array(),
      isError: false,
      argumentsDigest,
    });
    return create(pb.RecordToolIntentResponseSchema, { intent: this.intent(runId, entry) });
  }

  /** Journals a new entry: its seq and chain value are the run's next. */
  private append(runId: string, data: RunData, fields: Omit<Entry, "seq" | "recordedAt" | "chain">): Entry {
    this.runs.set(runId, data);
    const chain = pushed(journalChain(data.journal), { ...fields, seq: 0, recordedAt: timestampNow(), chain: "" });
    const entry: Entry = { ...fields, seq: chain.length, recordedAt: timestampNow(), chain: chain.hex };
    data.journal.push(entry);
    data.updatedAt = entry.recordedAt;
    return entry;
  }
}
