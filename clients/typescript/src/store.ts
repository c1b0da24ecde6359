/**
 * `CheckpointStore`: the checkpoint interface agent authors know, over gRPC (or in this
 * process's memory, with `CheckpointStore.inMemory()`), as the Python client's store.
 *
 * The store keeps, per run it writes, what a correct writer must carry: the fencing epoch from
 * the last Resume, the message log's length (so a save sends only new messages), the checksum v1
 * chains (so every save carries the client's checksum for the server to verify) and the tool
 * journal. Loads verify the checksum on the client too and say so in `Checkpoint.isValid`;
 * corrupt checkpoints skipped, or a restart from scratch, are logged loudly.
 */

import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

import { MessageChain, ToolChain, checkpointChecksum } from "./checksum.js";
import { createCheckpointClient, type CheckpointClient, type CheckpointdClientOptions } from "./client.js";
import { Code, CheckpointdError } from "./errors.js";
import type * as pb from "./gen/checkpoint/v1/checkpoint_pb.js";
import { MemoryBackend, refused } from "./memory.js";
import { loadAtStepWhole, loadLatestWhole, resumeWhole } from "./pages.js";

const tracer = trace.getTracer("checkpointd");

/** The content type of the state this interface writes: a JSON object. */
export const CONTENT_TYPE = "application/json";

/** Where the store and the recovery loop say what they did. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Warnings and errors to stderr, routine news dropped (as Python's default logging level). */
export const DEFAULT_LOGGER: Logger = {
  info: () => undefined,
  warn: (message) => console.warn(message),
  error: (message) => console.error(message),
};

/** A message of a run's history: a role and any JSON fields (`content`, tool-call fields). */
export type ChatMessage = { role: string; [field: string]: unknown };
/** A run's state: a JSON object. */
export type State = Record<string, unknown>;

/** A journalled tool call, decoded. */
export interface JournalledResult {
  callId: string;
  toolName: string;
  step: number;
  output: unknown;
  isError: boolean;
}

/**
 * A restorable snapshot of an agent run. On save, `toolResults` is ignored: tools are
 * journalled when they run (see `StepContext.callTool`).
 */
export interface AgentCheckpoint {
  checkpointId: string;
  runId: string;
  stepNumber: number;
  state: State;
  messages: ChatMessage[];
  toolResults: JournalledResult[];
  timestamp: Date | undefined;
  checksum: string;
  /** False when the checksum recomputed here does not match what was loaded. */
  isValid: boolean;
  metadata: Record<string, string>;
  epoch: bigint;
  /** Set by `loadLatest`: the quarantined checkpoints above this one (empty: not a fallback). */
  passedOver?: PassedOver[];
}

/**
 * A quarantined checkpoint newer than the one a load or Resume returned: the answer was a
 * fallback past it. Reported on every read until an operator repairs the run (DESIGN contract
 * 13), not only on the read that found it corrupt. Its fields other than `step` come from a
 * checkpoint that failed verification: for telling people, never for restoring.
 */
export interface PassedOver {
  step: number;
  /** Empty when the server predates `passed_over` (only `skipped_steps` known). */
  checkpointId: string;
  label: string;
  metadata: Record<string, string>;
  quarantinedAt: Date | undefined;
  reason: string;
}

/**
 * The checkpoints an answer passed over, newest first: its `passedOver`, or on a server that
 * predates it (which leaves it empty) the steps it found corrupt on this read.
 */
export function passedOverOf(reply: { passedOver: readonly pb.PassedOverCheckpoint[]; skippedSteps: readonly bigint[] }): PassedOver[] {
  if (reply.passedOver.length > 0) {
    return reply.passedOver.map((p) => ({
      step: Number(p.step),
      checkpointId: p.checkpointId,
      label: p.label,
      metadata: { ...p.metadata },
      quarantinedAt: date(p.quarantinedAt),
      reason: p.reason,
    }));
  }
  return reply.skippedSteps.map((step) => ({ step: Number(step), checkpointId: "", label: "", metadata: {}, quarantinedAt: undefined, reason: "" }));
}

/** What a save takes: the run, the step, and the whole (append-only) history. */
export interface CheckpointInput {
  runId: string;
  stepNumber: number;
  state?: State;
  messages?: readonly ChatMessage[];
  metadata?: Record<string, string>;
}

/** A side-effecting call whose outcome is unknown after a crash. */
export interface InDoubt {
  callId: string;
  toolName: string;
  step: number;
  idempotencyKey: string;
  corrupt: boolean;
}

/** What Resume restored: where the run continues, under which epoch. */
export interface Resumed {
  runId: string;
  epoch: bigint;
  checkpoint: AgentCheckpoint | undefined;
  recoveredFromStep: number;
  restartedFromScratch: boolean;
  /** Corrupt checkpoints this Resume found (and quarantined), newest first. */
  skippedSteps: number[];
  /** Every quarantined checkpoint above the one restored, newest first, on every Resume. */
  passedOver: PassedOver[];
  inDoubt: InDoubt[];
  corruptCallIds: string[];
}

/** Latency (ms) and state size of every save this store made. */
export interface SaveStats {
  latenciesMs: number[];
  sizes: number[];
  /** Saves that carried the client's checksum (all but those after a gap in the journal). */
  withClientChecksum: number;
}

/** The calls a store makes: a CheckpointClient, or the in-memory backend. */
export type StoreBackend = Pick<
  CheckpointClient,
  "resume" | "save" | "loadLatest" | "loadAtStep" | "validate" | "getRun" | "recordToolResult" | "recordToolIntent"
>;

/** What the store carries for a run it writes. */
interface Run {
  epoch: bigint;
  messages: MessageChain;
  /** Undefined when the journal seen has a gap (a corrupt entry): saves then carry no checksum. */
  tools: ToolChain | undefined;
  journal: Map<string, pb.ToolResult>;
  intents: Map<string, pb.ToolIntent>;
  inDoubt: Map<string, InDoubt>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function dumps(value: unknown): Uint8Array {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`cannot store ${String(value)}: it is not JSON-serialisable`);
  return encoder.encode(text);
}

/** A message as the wire holds it: its role, and every other field as a JSON object. */
export function encodeMessage(message: ChatMessage): { role: string; content: Uint8Array } {
  const { role, ...body } = message;
  if (typeof role !== "string" || role === "") {
    throw new TypeError(`a message needs a non-empty string role, got ${JSON.stringify(message)}`);
  }
  return { role, content: dumps(body) };
}

/** A stored message back as a ChatMessage; content other clients wrote comes back as text. */
export function decodeMessage(role: string, content: Uint8Array): ChatMessage {
  let text: string | undefined;
  try {
    text = decoder.decode(content);
    const body: unknown = JSON.parse(text);
    if (body !== null && typeof body === "object" && !Array.isArray(body) && !("role" in body)) {
      return { role, ...(body as Record<string, unknown>) };
    }
  } catch {
    // Not JSON (or not UTF-8): shown as it is below.
  }
  return { role, content: text ?? content };
}

/** A tool's output as stored: JSON, or bytes as they are. */
export function encodeOutput(value: unknown): Uint8Array {
  return value instanceof Uint8Array ? value : dumps(value ?? null);
}

/** A stored output back: its JSON value, or its bytes when not JSON. */
export function decodeOutput(raw: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(raw));
  } catch {
    return raw;
  }
}

function decodeState(raw: Uint8Array): State {
  if (raw.length === 0) return {};
  try {
    const value: unknown = JSON.parse(decoder.decode(raw));
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as State;
  } catch {
    // Written by a client whose state is not a JSON object: shown, not interpreted.
  }
  return { raw: Buffer.from(raw).toString("utf8") };
}

function date(stamp: Timestamp | undefined): Date | undefined {
  return stamp === undefined || (stamp.seconds === 0n && stamp.nanos === 0) ? undefined : timestampDate(stamp);
}

function resultOf(result: pb.ToolResult): JournalledResult {
  return {
    callId: result.callId,
    toolName: result.toolName,
    step: Number(result.step),
    output: decodeOutput(result.output),
    isError: result.isError,
  };
}

type JournalEntry = { kind: "result"; entry: pb.ToolResult } | { kind: "intent"; entry: pb.ToolIntent };

function push(chain: ToolChain, entry: JournalEntry): ToolChain {
  return entry.kind === "intent" ? chain.pushIntent(entry.entry) : chain.pushResult(entry.entry);
}

/** The tool chain over journal entries seq 1..`upto` (all when undefined); undefined on a gap. */
function journalChain(
  results: readonly pb.ToolResult[],
  intents: readonly pb.ToolIntent[],
  upto?: bigint,
): ToolChain | undefined {
  const entries: JournalEntry[] = [
    ...results.map((entry) => ({ kind: "result" as const, entry })),
    ...intents.map((entry) => ({ kind: "intent" as const, entry })),
  ].sort((a, b) => (a.entry.seq < b.entry.seq ? -1 : a.entry.seq > b.entry.seq ? 1 : 0));
  let chain = ToolChain.EMPTY;
  for (const entry of entries) {
    if (upto !== undefined && entry.entry.seq > upto) break;
    if (entry.entry.seq !== BigInt(chain.length + 1)) return undefined;
    chain = push(chain, entry);
  }
  if (upto !== undefined && BigInt(chain.length) !== upto) return undefined;
  return chain;
}

/** A loaded checkpoint, its checksum recomputed here (a journal with a gap is left to the server). */
function toCheckpoint(message: pb.Checkpoint, results: readonly pb.ToolResult[], intents: readonly pb.ToolIntent[]): AgentCheckpoint {
  const tools = journalChain(results, intents, message.toolCount);
  let valid = true;
  // A load from a message offset carries only the log's tail: the chain needs all of it.
  if (tools !== undefined && message.messagesOffset === 0n) {
    const chain = MessageChain.over(message.messages);
    valid =
      BigInt(chain.length) === message.messageCount &&
      message.checksum ===
        checkpointChecksum(
          { runId: message.runId, step: message.step, contentType: message.contentType, state: message.state, metadata: message.metadata },
          chain,
          tools,
        );
  }
  return {
    checkpointId: message.checkpointId,
    runId: message.runId,
    stepNumber: Number(message.step),
    state: decodeState(message.state),
    messages: message.messages.map((m) => decodeMessage(m.role, m.content)),
    toolResults: [...results].sort((a, b) => (a.seq < b.seq ? -1 : 1)).map(resultOf),
    timestamp: date(message.createdAt),
    checksum: message.checksum,
    isValid: valid,
    metadata: { ...message.metadata },
    epoch: message.epoch,
  };
}

export interface CheckpointStoreOptions extends Partial<CheckpointdClientOptions> {
  /** The calls go here instead of a gRPC client built from the options (e.g. a MemoryBackend). */
  backend?: StoreBackend;
  /** Where skipped corrupt checkpoints and restarts are reported; {@link DEFAULT_LOGGER} by default. */
  logger?: Logger;
}

/**
 * Checkpoints of agent runs in a checkpointd server. A store is the writer of the runs it
 * saves: the first save of a run it has not resumed calls `resume` first, which takes the run
 * over (a new fencing epoch; writers holding an older one are refused).
 */
export class CheckpointStore {
  readonly backend: StoreBackend;
  readonly logger: Logger;
  readonly stats: SaveStats = { latenciesMs: [], sizes: [], withClientChecksum: 0 };
  private readonly runs = new Map<string, Run>();

  /** A store over the server at `baseUrl` (e.g. `http://127.0.0.1:50051`), or over `backend`. */
  constructor(options: CheckpointStoreOptions) {
    if ((options.baseUrl === undefined) === (options.backend === undefined)) {
      throw new TypeError("CheckpointStore takes a server baseUrl or a backend, one of the two");
    }
    this.backend = options.backend ?? createCheckpointClient(options as CheckpointdClientOptions);
    this.logger = options.logger ?? DEFAULT_LOGGER;
  }

  /**
   * A store whose runs live in this process's memory (a new MemoryBackend unless one is given
   * to share): for tests and throwaway runs; nothing survives the process.
   */
  static inMemory(backend: MemoryBackend = new MemoryBackend(), logger?: Logger): CheckpointStore {
    return new CheckpointStore({ backend, ...(logger === undefined ? {} : { logger }) });
  }

  /**
   * Takes the run over: a new epoch, the latest valid checkpoint (corrupt ones skipped, loudly),
   * the message log truncated to it, and the whole tool journal to replay from. With
   * `requireExisting`, a run never seen is NOT_FOUND (RUN_NOT_FOUND) instead of a new run.
   */
  async resume(runId: string, options: { requireExisting?: boolean } = {}): Promise<Resumed> {
    const reply = await resumeWhole(this.backend, { runId, requireExisting: options.requireExisting ?? false });
    const run: Run = {
      epoch: reply.epoch,
      messages: MessageChain.EMPTY,
      tools: journalChain(reply.toolResults, reply.toolIntents),
      journal: new Map(reply.toolResults.map((r) => [r.callId, r])),
      intents: new Map(reply.toolIntents.map((i) => [i.callId, i])),
      inDoubt: new Map(
        reply.inDoubt.map((c) => [
          c.callId,
          { callId: c.callId, toolName: c.toolName, step: Number(c.step), idempotencyKey: c.idempotencyKey, corrupt: c.corrupt },
        ]),
      ),
    };
    let checkpoint: AgentCheckpoint | undefined;
    if (reply.checkpoint !== undefined && !reply.restartedFromScratch) {
      checkpoint = toCheckpoint(reply.checkpoint, reply.toolResults, reply.toolIntents);
      if (!checkpoint.isValid) {
        throw refused(
          Code.DataLoss,
          "CHECKPOINT_CORRUPT",
          `run ${runId}: the checkpoint at step ${checkpoint.stepNumber} that Resume restored fails the client's checksum check`,
        );
      }
      run.messages = MessageChain.over(reply.checkpoint.messages);
    }
    this.runs.set(runId, run);
    const skippedSteps = reply.skippedSteps.map(Number);
    const passedOver = passedOverOf(reply);
    // Every Resume that restores below quarantined checkpoints says so, not only the first.
    const steps = passedOver.map((p) => p.step).join(", ");
    if (reply.restartedFromScratch && passedOver.length > 0) {
      this.logger.error(
        `checkpointd: every checkpoint of run ${runId} is corrupt (steps ${steps} quarantined); the run RESTARTS FROM STEP 0`,
      );
    } else if (passedOver.length > 0) {
      this.logger.warn(
        `checkpointd: corrupt checkpoint(s) of run ${runId} at step(s) ${steps} quarantined and skipped; ` +
          `falling back to step ${reply.recoveredFromStep}`,
      );
    }
    if (run.tools === undefined || reply.corruptCallIds.length > 0) {
      this.logger.warn(`checkpointd: the tool journal of run ${runId} has corrupt entries (calls ${reply.corruptCallIds.join(", ")})`);
    }
    return {
      runId,
      epoch: reply.epoch,
      checkpoint,
      recoveredFromStep: Number(reply.recoveredFromStep),
      restartedFromScratch: reply.restartedFromScratch,
      skippedSteps,
      passedOver,
      inDoubt: [...run.inDoubt.values()],
      corruptCallIds: [...reply.corruptCallIds],
    };
  }

  /** The run's head without its payload and without fencing anyone; undefined when unknown. */
  async runHead(runId: string): Promise<pb.RunHead | undefined> {
    try {
      return (await this.backend.getRun({ runId })).run;
    } catch (error) {
      if (error instanceof CheckpointdError && error.code === Code.NotFound) return undefined;
      throw error;
    }
  }

  private async run(runId: string): Promise<Run> {
    if (!this.runs.has(runId)) await this.resume(runId);
    const run = this.runs.get(runId);
    if (run === undefined) throw new Error(`run ${runId} was not resumed`);
    return run;
  }

  /** The epoch this store writes `runId` under; undefined before it resumed the run. */
  epoch(runId: string): bigint | undefined {
    return this.runs.get(runId)?.epoch;
  }

  journalled(runId: string, callId: string): pb.ToolResult | undefined {
    return this.runs.get(runId)?.journal.get(callId);
  }

  /** The intent journalled for `callId` that this store knows of (its arguments digest, key). */
  journalledIntent(runId: string, callId: string): pb.ToolIntent | undefined {
    return this.runs.get(runId)?.intents.get(callId);
  }

  inDoubt(runId: string, callId: string): InDoubt | undefined {
    return this.runs.get(runId)?.inDoubt.get(callId);
  }

  /**
   * Saves a checkpoint durably: the state, the messages past what the run's log holds
   * (`messages` is the whole history, append-only), and the metadata, with the client's
   * checksum v1 and the run's epoch. Returns it with its id, checksum and timestamp.
   */
  async save(input: CheckpointInput): Promise<AgentCheckpoint> {
    const run = await this.run(input.runId);
    const messages = input.messages ?? [];
    if (messages.length < run.messages.length) {
      throw new RangeError(
        `run ${input.runId} holds ${run.messages.length} messages and the checkpoint has ${messages.length}: ` +
          "the message log is append-only",
      );
    }
    const fresh = messages.slice(run.messages.length).map(encodeMessage);
    const chain = run.messages.extend(fresh);
    const state = dumps(input.state ?? {});
    const metadata = input.metadata ?? {};
    const checksum =
      run.tools === undefined
        ? undefined
        : checkpointChecksum(
            { runId: input.runId, step: input.stepNumber, contentType: CONTENT_TYPE, state, metadata },
            chain,
            run.tools,
          );
    // One client span per save (a no-op unless the application registered an OpenTelemetry SDK).
    const attributes = { "checkpoint.run_id": input.runId, "checkpoint.step": input.stepNumber, "checkpoint.bytes": state.length };
    const started = performance.now();
    const reply = await tracer.startActiveSpan("checkpoint.save", { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        return await this.backend.save({
          runId: input.runId,
          step: BigInt(input.stepNumber),
          contentType: CONTENT_TYPE,
          state,
          messages: fresh,
          messageOffset: BigInt(run.messages.length),
          metadata,
          epoch: run.epoch,
          ...(checksum === undefined ? {} : { checksum }),
        });
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
        throw error;
      } finally {
        span.setAttribute("checkpoint.save.latency_ms", performance.now() - started);
        span.end();
      }
    });
    this.stats.latenciesMs.push(performance.now() - started);
    this.stats.sizes.push(state.length);
    if (checksum !== undefined) this.stats.withClientChecksum++;
    run.messages = chain;
    return {
      checkpointId: reply.checkpointId,
      runId: input.runId,
      stepNumber: input.stepNumber,
      state: input.state ?? {},
      messages: [...messages],
      toolResults: [...run.journal.values()].sort((a, b) => (a.seq < b.seq ? -1 : 1)).map(resultOf),
      timestamp: date(reply.createdAt),
      checksum: reply.checksum,
      isValid: true,
      metadata: { ...metadata },
      epoch: run.epoch,
    };
  }

  /**
   * The latest valid checkpoint, its whole history fetched page by page. Corrupt ones are
   * quarantined by the server and skipped, loudly; undefined when the run has none, or (said
   * loudly) when every checkpoint is corrupt. A checkpoint that fails the client's own checksum
   * check is skipped too, falling back to the steps below it.
   */
  async loadLatest(runId: string): Promise<AgentCheckpoint | undefined> {
    let reply: pb.LoadLatestResponse;
    try {
      reply = await loadLatestWhole(this.backend, { runId });
    } catch (error) {
      if (error instanceof CheckpointdError && error.code === Code.NotFound) return undefined;
      if (error instanceof CheckpointdError && error.code === Code.DataLoss) {
        this.logger.error(`checkpointd: every checkpoint of run ${runId} is corrupt (${error.rawMessage}); restart at step 0`);
        return undefined;
      }
      throw error;
    }
    const passedOver = passedOverOf(reply);
    // Every load that lands below quarantined checkpoints says so, not only the first.
    if (passedOver.length > 0) {
      this.logger.warn(
        `checkpointd: corrupt checkpoint(s) of run ${runId} at step(s) ${passedOver.map((p) => p.step).join(", ")} ` +
          `quarantined and skipped; falling back to step ${reply.checkpoint?.step}`,
      );
    }
    if (reply.checkpoint === undefined) return undefined;
    const checkpoint = toCheckpoint(reply.checkpoint, reply.toolResults, reply.toolIntents);
    checkpoint.passedOver = passedOver;
    if (!checkpoint.isValid) {
      this.logger.error(`checkpointd: the checkpoint of run ${runId} at step ${checkpoint.stepNumber} fails the client's checksum check`);
    }
    return checkpoint;
  }

  /** The checkpoint at `step`; undefined when there is none. DATA_LOSS when it is corrupt. */
  async loadAtStep(runId: string, step: number): Promise<AgentCheckpoint | undefined> {
    let reply: pb.LoadAtStepResponse;
    try {
      reply = await loadAtStepWhole(this.backend, { runId, step: BigInt(step) });
    } catch (error) {
      if (error instanceof CheckpointdError && error.code === Code.NotFound) return undefined;
      throw error;
    }
    return reply.checkpoint === undefined ? undefined : toCheckpoint(reply.checkpoint, reply.toolResults, reply.toolIntents);
  }

  /**
   * Whether a checkpoint is intact: given a Checkpoint, its checksum verified here and the
   * stored one verified by the server, and both equal; given a run id, the server's verdict on
   * `step`, or on every checkpoint of the run.
   */
  async validate(checkpoint: AgentCheckpoint | string, step?: number): Promise<boolean> {
    const runId = typeof checkpoint === "string" ? checkpoint : checkpoint.runId;
    const at = typeof checkpoint === "string" ? step : checkpoint.stepNumber;
    let reply: pb.ValidateResponse;
    try {
      reply = await this.backend.validate({ runId, ...(at === undefined ? {} : { step: BigInt(at) }) });
    } catch (error) {
      if (error instanceof CheckpointdError && error.code === Code.NotFound) return false;
      throw error;
    }
    if (reply.verdicts.length === 0 || !reply.verdicts.every((v) => v.valid)) return false;
    return typeof checkpoint === "string" || (checkpoint.isValid && reply.verdicts[0]?.storedChecksum === checkpoint.checksum);
  }

  /**
   * Journals a tool's result (the stored one when the call id was journalled already).
   * `argumentsDigest` (src/digest.ts; "" for none) is journalled with it: the server refuses
   * another digest under the same call id with {@link ReplayMismatch}.
   */
  async recordToolResult(
    runId: string,
    callId: string,
    toolName: string,
    step: number,
    output: Uint8Array,
    isError = false,
    argumentsDigest = "",
  ): Promise<pb.ToolResult> {
    const run = await this.run(runId);
    const reply = await this.backend.recordToolResult({
      runId,
      callId,
      toolName,
      step: BigInt(step),
      output,
      isError,
      epoch: run.epoch,
      argumentsDigest,
    });
    if (reply.result === undefined) throw new Error(`checkpointd: RecordToolResult for ${callId} answered no result`);
    journal(run, { kind: "result", entry: reply.result });
    run.inDoubt.delete(callId);
    return reply.result;
  }

  /** Journals that a side-effecting call is about to run; the reply has its key. */
  async recordToolIntent(runId: string, callId: string, toolName: string, step: number, argumentsDigest = ""): Promise<pb.RecordToolIntentResponse> {
    const run = await this.run(runId);
    const reply = await this.backend.recordToolIntent({ runId, callId, toolName, step: BigInt(step), epoch: run.epoch, argumentsDigest });
    if (reply.result !== undefined) journal(run, { kind: "result", entry: reply.result });
    else if (!reply.alreadyRecorded && reply.intent !== undefined) journal(run, { kind: "intent", entry: reply.intent });
    return reply;
  }
}

/** Adds a new journal entry; the chain extends only when it is the next one. */
function journal(run: Run, entry: JournalEntry): void {
  const known: Map<string, unknown> = entry.kind === "result" ? run.journal : run.intents;
  if (known.has(entry.entry.callId)) return;
  if (run.tools !== undefined) {
    run.tools = entry.entry.seq === BigInt(run.tools.length + 1) ? push(run.tools, entry) : undefined;
  }
  if (entry.kind === "result") run.journal.set(entry.entry.callId, entry.entry);
  else run.intents.set(entry.entry.callId, entry.entry);
}
