/**
 * One life of a run: what Resume restored and the live state since, saved by strategy. Below
 * both the recovery loop and the step context, which each use it, so neither imports the other.
 */

import type { Decision } from "./classify.js";
import type { ChatMessage, CheckpointStore, Resumed, State } from "./store.js";
import type { Strategy } from "./strategy.js";

/**
 * Checkpoint metadata key of a finished run's result (JSON): a run restored from its final
 * checkpoint is finished, and no step past the end runs again (nor any tool of one).
 */
export const RESULT_KEY = "checkpointd.result";

/** What a drive of a run did, across its resurrections. */
export interface RunStats {
  stepsExecuted: number;
  toolsExecuted: number;
  toolsReplayed: number;
}

export class Session {
  readonly runId: string;
  state: State;
  messages: ChatMessage[];
  completedStep: number;
  lastSavedStep: number | undefined;
  /** The result of a run restored from its final checkpoint, wrapped so `null` is a result. */
  readonly finished: { result: unknown } | undefined;

  constructor(
    readonly store: CheckpointStore,
    resumed: Resumed,
    readonly task: unknown,
    readonly strategy: Strategy,
    readonly decision: Decision | undefined,
    initialState: State,
    readonly stats: RunStats,
  ) {
    const restored = resumed.checkpoint;
    this.runId = resumed.runId;
    this.state = restored?.state ?? initialState;
    this.messages = restored?.messages ?? [];
    this.completedStep = restored?.stepNumber ?? 0;
    this.lastSavedStep = restored?.stepNumber;
    const result = restored?.metadata[RESULT_KEY];
    this.finished = result === undefined ? undefined : { result: JSON.parse(result) as unknown };
  }

  async save(step: number, state: State, messageCount: number, metadata: Record<string, string> = {}): Promise<void> {
    if (this.lastSavedStep === step) return;
    await this.store.save({ runId: this.runId, stepNumber: step, state, messages: this.messages.slice(0, messageCount), metadata });
    this.lastSavedStep = step;
  }

  /** Checkpoints the last completed step, unless it already is. */
  async saveCompleted(metadata?: Record<string, string>): Promise<void> {
    if (this.completedStep > 0) await this.save(this.completedStep, this.state, this.messages.length, metadata);
  }
}
