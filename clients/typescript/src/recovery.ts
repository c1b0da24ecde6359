/**
 * The recovery loop: resume, step, checkpoint by strategy, resurrect after transient errors.
 * `RecoverableAgent` runs it in-process; a queue worker runs the same loop (`drive`) for tasks
 * claimed from the queue, with `Signals` for shutdown and a lost lease. The semantics are the
 * Rust runner's (crates/runner) and the Python client's (checkpointd.recovery).
 */

import { setTimeout as sleep } from "node:timers/promises";

import { ApprovalRequired, ErrorClassifier, FatalError, isFenced, type Decision, type ErrorKind } from "./classify.js";
import { StepContext } from "./context.js";
import { RESULT_KEY, Session, type RunStats } from "./session.js";
import type { CheckpointStore, PassedOver, Resumed, State } from "./store.js";
import { Strategy } from "./strategy.js";

/**
 * Pause before each resurrection, in milliseconds: the Rust runner's and the worker's
 * `--cooldown`. Without one, a failure that lasts a moment (a server restarting, a provider's
 * brief outage) spends the whole resurrection budget at once.
 */
export const DEFAULT_COOLDOWN_MS = 2_000;

/** Returned by a step to finish the run; `result` (JSON-serialisable) is its result. */
export class Done {
  constructor(readonly result: unknown = null) {}
}

/** A step: reads and changes `ctx.state` and `ctx.messages`; returns `Done` to finish the run. */
export type AgentFn = (ctx: StepContext) => unknown;

export interface RecoveryPolicy {
  strategy: Strategy;
  /** In-process resurrections after transient errors before giving up. */
  maxResurrections: number;
  /** Pause before each resurrection, in milliseconds. */
  cooldownMs: number;
  classifier: ErrorClassifier;
  /** After shutdown begins, how long the current step may still run, in milliseconds. */
  drainDeadlineMs: number;
  /** A run past this many steps fails fatally (undefined: no limit). */
  maxSteps: number | undefined;
}

/** A policy with the defaults of the Python client for whatever `overrides` leaves out. */
export function recoveryPolicy(overrides: Partial<RecoveryPolicy> = {}): RecoveryPolicy {
  return {
    strategy: new Strategy(),
    maxResurrections: 3,
    cooldownMs: DEFAULT_COOLDOWN_MS,
    classifier: new ErrorClassifier(),
    drainDeadlineMs: 10_000,
    maxSteps: undefined,
    ...overrides,
  };
}

/** What a step run by a worker watches: shutdown (drain) and a lost lease; abort to signal. */
export interface Signals {
  shutdown: AbortSignal;
  leaseLost: AbortSignal;
}

/** Another worker owns the task now: this one stops without writing. */
export class LeaseLost extends Error {
  override readonly name = "LeaseLost";
}

export type OutcomeKind = "finished" | "approval" | "stopped" | "failed" | "lease_lost";

/** How a drive of a run ended. */
export interface Outcome {
  kind: OutcomeKind;
  result?: unknown;
  error?: unknown;
  errorClass?: ErrorKind;
  /** The approval action and details, when `kind` is `approval`. */
  action?: string;
  details?: unknown;
  /** What the last Resume restored; undefined when it failed. */
  resumed: Resumed | undefined;
  resurrections: number;
  stats: RunStats;
}

export interface DriveOptions {
  signals?: Signals;
  /** A human's decision, for the step (or the call in doubt) that asked for it. */
  decision?: Decision;
  /** The state a run starts from when nothing is restored; `{}` unless given. */
  initialState?: (task: unknown) => State;
}

/** Resolves when `signal` aborts (at once when it has). */
function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

const ABANDONED = Symbol("abandoned");

/**
 * The step's return value, ABANDONED when the drain deadline passed, LeaseLost when the lease
 * was lost. The step cannot be cancelled: `abandon` tells it, and its journal writes stop.
 */
async function runStep(agentFn: AgentFn, ctx: StepContext, abandon: AbortController, signals: Signals | undefined, drainMs: number): Promise<unknown> {
  const work = Promise.resolve().then(() => agentFn(ctx));
  if (signals === undefined) return work;
  const stopWaiting = new AbortController();
  const lease = aborted(signals.leaseLost).then(() => "lease" as const);
  const drain = aborted(signals.shutdown)
    .then(() => sleep(drainMs, undefined, { signal: stopWaiting.signal }))
    .then(() => "drain" as const, () => "drain" as const);
  try {
    const first = await Promise.race([work.then((value) => ({ value })), lease, drain]);
    if (typeof first === "object") return first.value;
    abandon.abort(new LeaseLost(`step ${ctx.step} of run ${ctx.runId} abandoned`));
    work.catch(() => undefined);
    if (first === "lease") throw new LeaseLost("the task's lease was lost");
    return ABANDONED;
  } finally {
    stopWaiting.abort();
  }
}

/** Steps a session until it finishes, asks for approval, or is stopped; throws on failure. */
export async function runSteps(agentFn: AgentFn, session: Session, policy: RecoveryPolicy, signals?: Signals): Promise<Omit<Outcome, "resumed" | "resurrections" | "stats">> {
  if (session.finished !== undefined) return { kind: "finished", result: session.finished.result };
  for (;;) {
    if (signals?.shutdown.aborted) {
      await session.saveCompleted();
      return { kind: "stopped" };
    }
    const step = session.completedStep + 1;
    if (policy.maxSteps !== undefined && step > policy.maxSteps) {
      throw new FatalError(`run ${session.runId} did not finish within ${policy.maxSteps} steps`);
    }
    // A failed or abandoned step must leave no trace in the state that gets checkpointed.
    const rollback = { state: structuredClone(session.state), messageCount: session.messages.length };
    const undo = (): void => {
      session.state = rollback.state;
      session.messages.length = rollback.messageCount;
    };
    const abandon = new AbortController();
    const ctx = new StepContext(session, step, abandon.signal);
    let returned: unknown;
    try {
      returned = await runStep(agentFn, ctx, abandon, signals, policy.drainDeadlineMs);
    } catch (error) {
      undo();
      if (error instanceof ApprovalRequired) {
        await session.saveCompleted();
        return { kind: "approval", action: error.action, details: error.details };
      }
      throw error;
    }
    if (returned === ABANDONED) {
      session.store.logger.warn(`checkpointd: drain deadline passed mid-step; the step is abandoned run_id=${session.runId} step=${step}`);
      undo();
      await session.saveCompleted();
      return { kind: "stopped" };
    }
    session.completedStep = step;
    session.stats.stepsExecuted++;
    if (returned instanceof Done) {
      await session.saveCompleted({ [RESULT_KEY]: JSON.stringify(returned.result ?? null) });
      return { kind: "finished", result: returned.result };
    }
    if (policy.strategy.savesAfter(step, ctx.executedTools)) await session.saveCompleted();
  }
}

/**
 * Runs a run to its end for this attempt: resumes it, and resurrects it in-process from its
 * latest valid checkpoint after transient errors, up to the policy's budget.
 */
export async function drive(agentFn: AgentFn, store: CheckpointStore, runId: string, task: unknown, policy: RecoveryPolicy, options: DriveOptions = {}): Promise<Outcome> {
  const { signals, decision, initialState } = options;
  const stats: RunStats = { stepsExecuted: 0, toolsExecuted: 0, toolsReplayed: 0 };
  let resurrections = 0;
  for (;;) {
    let resumed: Resumed | undefined;
    // Lost during the cooldown: a Resume now would take the run from its new owner.
    if (signals?.leaseLost.aborted) return { kind: "lease_lost", resumed, resurrections, stats };
    try {
      resumed = await store.resume(runId);
      store.logger.info(
        `checkpointd: resumed run_id=${runId} recovered_from_step=${resumed.recoveredFromStep} ` +
          `restarted_from_scratch=${resumed.restartedFromScratch} skipped=[${resumed.skippedSteps.join(", ")}] ` +
          `passed_over=[${resumed.passedOver.map((p) => p.step).join(", ")}]`,
      );
      const fresh = initialState?.(task) ?? {};
      const session = new Session(store, resumed, task, policy.strategy, decision, fresh, stats);
      const outcome = await runSteps(agentFn, session, policy, signals);
      return { ...outcome, resumed, resurrections, stats };
    } catch (error) {
      const ended = failure(error, policy, signals, resurrections);
      if (ended !== undefined) return { ...ended, resumed, resurrections, stats };
      resurrections++;
      store.logger.warn(
        `checkpointd: transient error; resurrecting from the latest valid checkpoint run_id=${runId} ` +
          `error=${String(error)} resurrection=${resurrections} budget=${policy.maxResurrections}`,
      );
      if (await cooldown(policy.cooldownMs, signals)) return { kind: "stopped", resumed, resurrections, stats };
    }
  }
}

/** The end a failure makes, or undefined when the run is resurrected. */
function failure(error: unknown, policy: RecoveryPolicy, signals: Signals | undefined, resurrections: number): Pick<Outcome, "kind" | "error" | "errorClass"> | undefined {
  if (error instanceof LeaseLost || isFenced(error) || signals?.leaseLost.aborted) return { kind: "lease_lost", error };
  const errorClass = policy.classifier.classify(error);
  if (errorClass === "fatal" || resurrections >= policy.maxResurrections) return { kind: "failed", error, errorClass };
  return undefined;
}

/** Waits out the cooldown; true when shutdown began meanwhile. */
async function cooldown(ms: number, signals: Signals | undefined): Promise<boolean> {
  if (signals === undefined) {
    await sleep(ms);
    return false;
  }
  const done = new AbortController();
  const stopped = await Promise.race([
    sleep(ms, false, { signal: done.signal }).catch(() => false),
    aborted(signals.shutdown).then(() => true),
  ]);
  done.abort();
  return stopped;
}

/** What `runWithRecovery` returns. */
export interface RecoveryResult {
  runId: string;
  result: unknown;
  /** The step the last recovery restored; 0 from scratch. */
  recoveredFromStep: number;
  restartedFromScratch: boolean;
  /** Corrupt checkpoints the last Resume found, newest first. */
  skippedSteps: number[];
  /** Every quarantined checkpoint above the one the last Resume restored, newest first. */
  passedOver: PassedOver[];
  resurrections: number;
  stepsExecuted: number;
  toolsExecuted: number;
  toolsReplayed: number;
}

export interface RecoverableAgentOptions {
  /** Save every N steps (3 unless given); ignored when `strategy` is given. */
  checkpointEveryN?: number;
  /** A Strategy, or its text form (`every_step`, `every_n:N`, `hybrid:N[,after_tools][,before_llm]`). */
  strategy?: Strategy | string;
  maxResurrections?: number;
  cooldownMs?: number;
  maxSteps?: number;
  classifier?: ErrorClassifier;
  initialState?: (task: unknown) => State;
}

/**
 * Runs `agentFn` step by step with checkpoints, and recovers it after crashes. `agentFn(ctx)`
 * (sync or async) executes step `ctx.step` (the first is 1), calls tools through
 * `ctx.callTool` / `ctx.callSideEffect`, and returns `new Done(result)` when the run is
 * finished (anything else continues). After a transient error the run is resurrected from its
 * latest valid checkpoint, up to `maxResurrections` times, each after `cooldownMs`.
 */
export class RecoverableAgent {
  readonly policy: RecoveryPolicy;
  private readonly initialState: ((task: unknown) => State) | undefined;

  constructor(
    readonly agentFn: AgentFn,
    readonly store: CheckpointStore,
    options: RecoverableAgentOptions = {},
  ) {
    const strategy =
      typeof options.strategy === "string"
        ? Strategy.parse(options.strategy)
        : (options.strategy ?? new Strategy({ everyN: options.checkpointEveryN ?? 3 }));
    this.policy = recoveryPolicy({
      strategy,
      maxResurrections: options.maxResurrections ?? 3,
      cooldownMs: options.cooldownMs ?? DEFAULT_COOLDOWN_MS,
      classifier: options.classifier ?? new ErrorClassifier(),
      maxSteps: options.maxSteps,
    });
    this.initialState = options.initialState;
  }

  /**
   * Runs (or resumes) `runId` to its end. Throws the agent's error when it is fatal or the
   * resurrection budget is spent, and `ApprovalRequired` when a step needs a human.
   */
  async runWithRecovery(task: unknown, runId: string, options: { decision?: Decision } = {}): Promise<RecoveryResult> {
    const outcome = await drive(this.agentFn, this.store, runId, task, this.policy, {
      ...(options.decision === undefined ? {} : { decision: options.decision }),
      ...(this.initialState === undefined ? {} : { initialState: this.initialState }),
    });
    if (outcome.kind === "approval") throw new ApprovalRequired(outcome.action ?? "", outcome.details);
    if (outcome.kind !== "finished") throw outcome.error;
    const resumed = outcome.resumed!;
    return {
      runId,
      result: outcome.result,
      recoveredFromStep: resumed.recoveredFromStep,
      restartedFromScratch: resumed.restartedFromScratch,
      skippedSteps: resumed.skippedSteps,
      passedOver: resumed.passedOver,
      resurrections: outcome.resurrections,
      stepsExecuted: outcome.stats.stepsExecuted,
      toolsExecuted: outcome.stats.toolsExecuted,
      toolsReplayed: outcome.stats.toolsReplayed,
    };
  }
}
