/**
 * What the saver remembers about each checkpointd run between calls.
 *
 * A run's message log is append-only, so the saver keeps the prefix it has seen (the messages,
 * their serialized form and the chain after each) to send only new messages on a save and to
 * ask loads for the rest only (`message_offset`). To send a client checksum it also keeps the
 * run's journal chain, the next step and the fencing epoch, learnt by a sync and advanced by its
 * own writes. Anything that proves this knowledge stale (a conflict on save, a checksum the
 * server computes differently, a log digest that does not match) drops it; the next put syncs.
 */

import { MessageChain, ToolChain } from "../checksum.js";
import { JournalEntryKind, type JournalEntry as PbJournalEntry, type ToolIntent, type ToolResult } from "../gen/checkpoint/v1/checkpoint_pb.js";

/** Checkpoint id -> step entries kept per run. */
const MAX_LABELS = 4096;
/** Checkpoints per run whose pending writes may wait for their checkpoint to land. */
const MAX_HELD = 256;
/** Journal entries learnt past a gap before the chain is given up and learnt again by a sync. */
const MAX_EARLY = 1024;

/** What one journal entry contributes to the tool chain. */
export interface JournalEntry {
  seq: bigint;
  intent: boolean;
  callId: string;
  toolName: string;
  step: bigint;
  output: Uint8Array;
  isError: boolean;
}

export function ofResult(r: ToolResult): JournalEntry {
  return { seq: r.seq, intent: false, callId: r.callId, toolName: r.toolName, step: r.step, output: r.output, isError: r.isError };
}

export function ofIntent(i: ToolIntent): JournalEntry {
  return { seq: i.seq, intent: true, callId: i.callId, toolName: i.toolName, step: i.step, output: new Uint8Array(), isError: false };
}

export function ofJournal(e: PbJournalEntry): JournalEntry {
  return {
    seq: e.seq,
    intent: e.kind === JournalEntryKind.INTENT,
    callId: e.callId,
    toolName: e.toolName,
    step: e.step,
    output: e.output,
    isError: e.isError,
  };
}

function pushed(chain: ToolChain, e: JournalEntry): ToolChain {
  return e.intent
    ? chain.pushIntent({ callId: e.callId, toolName: e.toolName, step: e.step })
    : chain.pushResult({ callId: e.callId, toolName: e.toolName, step: e.step, output: e.output, isError: e.isError });
}

/**
 * A pending write that arrived before its checkpoint landed (LangGraph's default durability
 * sends both at once); the checkpoint's put journals it beside its save.
 */
export interface HeldWrite {
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  type: string;
  value: Uint8Array;
  /** The step a save attempt of its put journalled it at, beside that save. */
  journalledAt?: bigint;
  /**
   * Its plain call id may be taken at a step its checkpoint did not land at (a save refused, or
   * a journal call whose answer was lost): journalled again, it gets a fresh one.
   */
  idTaken?: boolean;
}

/** A checkpoint whose save is on its way: writes for it that come meanwhile go out at its step. */
export interface Saving {
  checkpointId: string;
  step: bigint;
  /** The journal calls made beside the save; each gives back its writes as they then stand. */
  journalled: Array<Promise<HeldWrite[]>>;
}

/** One serialized message: the log's `Message(role=<type tag>, content=<bytes>)`. */
export interface SerializedMessage {
  role: string;
  content: Uint8Array;
}

/** A FIFO mutex: a run's puts (and deletes) go one at a time. */
export class Gate {
  private tail: Promise<void> = Promise.resolve();

  async hold<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise((resolve) => (release = resolve));
    await previous;
    try {
      return await work();
    } finally {
      release();
    }
  }
}

export class RunState {
  readonly gate = new Gate();
  // The message log prefix held: messages[i] is log position i; chains[k] covers k messages.
  messages: unknown[] = [];
  serialized: SerializedMessage[] = [];
  chains: MessageChain[] = [MessageChain.EMPTY];
  // Save-side knowledge, valid only while `synced`.
  synced = false;
  nextStep = 0n;
  epoch = 0n;
  tools: ToolChain = ToolChain.EMPTY;
  private readonly early = new Map<bigint, JournalEntry>();
  readonly labels = new Map<string, bigint>();
  readonly held = new Map<string, HeldWrite[]>();
  /** The put whose save is on its way (the run's gate held), if any. */
  saving: Saving | undefined;
  newestLabel: string | undefined;
  /** A load of the latest checkpoint found none: every id this process meets next is new. */
  seenEmpty = false;
  /** Exclusive writing: the epoch this saver took the run with, undefined until it takes it. */
  ownedEpoch: bigint | undefined;

  constructor(readonly runId: string) {}

  // -- message log --------------------------------------------------------------------------

  get logLength(): number {
    return this.messages.length;
  }

  chainAt(length: number): MessageChain {
    const chain = this.chains[length];
    if (chain === undefined) throw new Error(`no message chain at ${length} (${this.logLength} held)`);
    return chain;
  }

  extendLog(objects: unknown[], serialized: SerializedMessage[]): void {
    let chain = this.chainAt(this.logLength);
    serialized.forEach((message, i) => {
      chain = chain.push(message.role, message.content);
      this.messages.push(objects[i]);
      this.serialized.push(message);
      this.chains.push(chain);
    });
  }

  /** Keeps only the first `length` messages of the held log. */
  truncateLog(length: number): void {
    this.messages.length = Math.min(length, this.messages.length);
    this.serialized.length = this.messages.length;
    this.chains.length = this.messages.length + 1;
  }

  dropLog(): void {
    this.truncateLog(0);
  }

  // -- journal chain ------------------------------------------------------------------------

  /** Advances the tool chain by an entry the server confirmed, in `seq` order; entries that
   * arrive ahead of a gap wait in `early`. */
  learn(entry: JournalEntry): void {
    if (!this.synced || entry.seq <= BigInt(this.tools.length)) return;
    this.early.set(entry.seq, entry);
    for (;;) {
      const next = this.early.get(BigInt(this.tools.length) + 1n);
      if (next === undefined) break;
      this.early.delete(next.seq);
      this.tools = pushed(this.tools, next);
    }
    // A gap that does not fill (an answer lost, another process's entries): the chain stays a
    // valid prefix, but stale; the next save learns it again.
    if (this.early.size > MAX_EARLY) this.forget();
  }

  /** Rebuilds the tool chain from the whole journal; false when it has a gap. */
  resetJournal(entries: JournalEntry[]): boolean {
    let chain = ToolChain.EMPTY;
    for (const entry of [...entries].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))) {
      if (entry.seq !== BigInt(chain.length) + 1n) return false;
      chain = pushed(chain, entry);
    }
    const early = [...this.early.values()].filter((e) => e.seq > BigInt(chain.length));
    this.tools = chain;
    this.early.clear();
    for (const entry of early) this.learn(entry);
    return true;
  }

  // -- labels -------------------------------------------------------------------------------

  remember(checkpointId: string, step: bigint): void {
    if (this.newestLabel === undefined || checkpointId > this.newestLabel) this.newestLabel = checkpointId;
    this.labels.delete(checkpointId);
    this.labels.set(checkpointId, step);
    while (this.labels.size > MAX_LABELS) this.labels.delete(this.labels.keys().next().value as string);
  }

  /** True when this process knows the run's checkpoints (or found it had none) and
   * `checkpointId` sorts after every one it knows (LangGraph's ids are time-ordered UUIDv6). */
  newerThanKnown(checkpointId: string): boolean {
    if (this.newestLabel === undefined) return this.seenEmpty;
    return checkpointId > this.newestLabel;
  }

  /** Keeps writes for a checkpoint not saved yet; the oldest checkpoints' go first. */
  hold(checkpointId: string, writes: HeldWrite[]): void {
    const list = this.held.get(checkpointId) ?? [];
    this.held.delete(checkpointId);
    this.held.set(checkpointId, [...list, ...writes]);
    while (this.held.size > MAX_HELD) {
      const dropped = this.held.keys().next().value as string;
      this.held.delete(dropped);
      console.warn(`checkpointd: run ${this.runId}: dropped pending writes of checkpoint ${dropped}, never saved`);
    }
  }

  takeHeld(checkpointId: string): HeldWrite[] {
    const writes = this.held.get(checkpointId) ?? [];
    this.held.delete(checkpointId);
    return writes;
  }

  /** Drops the ids learnt (some checkpoints were deleted). */
  forgetLabels(): void {
    this.labels.clear();
    this.newestLabel = undefined;
    this.seenEmpty = false;
  }

  /** Drops the save-side knowledge: the next save syncs from the server. */
  forget(): void {
    this.synced = false;
    this.early.clear();
  }
}

/**
 * A bounded map of run id -> RunState (least recently used runs go first, never one holding
 * writes for a checkpoint not yet saved). One run never has two states in a process: two gates
 * would let two saves race, so a state evicted while an operation still holds it is found again
 * through `alive`.
 */
export class RunCache {
  private readonly runs = new Map<string, RunState>();
  private readonly alive = new Map<string, WeakRef<RunState>>();

  constructor(private readonly capacity = 256) {}

  get(runId: string): RunState {
    let state = this.runs.get(runId) ?? this.alive.get(runId)?.deref();
    if (state === undefined) {
      state = new RunState(runId);
      this.alive.set(runId, new WeakRef(state));
    }
    this.runs.delete(runId);
    this.runs.set(runId, state);
    for (const [old, oldState] of this.runs) {
      if (this.runs.size <= this.capacity) break;
      if (oldState.held.size === 0 && old !== runId) this.runs.delete(old);
    }
    if (this.alive.size > 4 * this.capacity) {
      for (const [id, ref] of this.alive) if (ref.deref() === undefined) this.alive.delete(id);
    }
    return state;
  }

  drop(runId: string): void {
    this.runs.delete(runId);
    this.alive.delete(runId);
  }
}
