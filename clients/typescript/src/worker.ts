/**
 * The queue worker: claims tasks from checkpointd's queue, keeps their leases alive with
 * heartbeats (a fenced heartbeat means another worker owns the task: the step is abandoned and
 * nothing more is written), drives each run through the recovery loop ({@link drive}: Resume,
 * strategy, in-process resurrection with budget and cooldown, fatal versus transient), parks a
 * task in `input_required` when a step asks for approval, and on shutdown stops claiming, lets
 * running steps finish within the drain deadline, checkpoints and releases their tasks with no
 * attempt charged. The semantics are the bundled runner's (crates/runner) and the Python
 * worker's (clients/python/src/checkpointd/worker.py); `checkpointd-worker` runs it as a process.
 */

import { hostname } from "node:os";

import type { TaskClient } from "./client.js";
import { Code, CheckpointdError } from "./errors.js";
import { ErrorClass as WireErrorClass, type Task } from "./gen/checkpoint/v1/task_pb.js";
import type { Decision } from "./classify.js";
import { drive, recoveryPolicy, type AgentFn, type Outcome, type RecoveryPolicy } from "./recovery.js";
import type { CheckpointStore, State } from "./store.js";
import { protoDuration } from "./worker/duration.js";
import { event } from "./worker/events.js";
import { keepLease } from "./worker/lease.js";

export interface WorkerOptions {
  /** Names this worker in the queue; `host-pid` by default. */
  workerId?: string;
  /** Tasks run at once (4). */
  concurrency?: number;
  /** Lease asked for on each claim, in ms (30 s); heartbeats renew it every third of it. */
  leaseMs?: number;
  /** Pause between claims when the queue is empty, in ms (500). */
  pollIntervalMs?: number;
  /** Stop after this many tasks ended here (undefined: until shut down). A task parked for approval has not ended. */
  exitAfter?: number;
  /** The recovery loop's policy: strategy, resurrections, cooldown, classifier, drain deadline. */
  recovery?: Partial<RecoveryPolicy>;
  /** The optional `initialState(task)` of the agent: the state a run starts from. */
  initialState?: (task: unknown) => State;
  /** Where warnings go (stderr by default). */
  warn?: (line: string) => void;
}

/** How a task ended in this worker, as the `event finished ... end=` line names it. */
export type TaskEnd =
  | "completed"
  | "awaiting_approval"
  | "released"
  | "failed_fatal"
  | "failed_transient"
  | "lease_lost"
  | "report_failed"
  // An operator moved the task meanwhile: the refusal's reason in lower case, e.g. `task_state`.
  | (string & {});

export interface WorkerReport {
  ends: Array<{ taskId: string; end: TaskEnd }>;
}

/** The task's input, decoded as JSON when it is JSON, else its bytes; null when empty. */
export function decodeInput(raw: Uint8Array): unknown {
  if (raw.length === 0) return null;
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    return raw;
  }
}

/** The human decision a re-claimed task carries, or undefined while none was made. */
export function taskDecision(task: Task): Decision | undefined {
  const approval = task.approval;
  if (approval === undefined || !approval.decided) return undefined;
  return { action: approval.action, approved: approval.approved, decidedBy: approval.decidedBy, comment: approval.comment };
}

const encoder = new TextEncoder();

export class Worker {
  /** Aborted to drain: stop claiming, finish or abandon the running steps, release their tasks. */
  readonly shutdown = new AbortController();
  readonly report: WorkerReport = { ends: [] };
  private readonly workerId: string;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly warn: (line: string) => void;
  private readonly policy: RecoveryPolicy;

  constructor(
    private readonly agent: AgentFn,
    private readonly tasks: TaskClient,
    private readonly store: CheckpointStore,
    private readonly options: WorkerOptions = {},
  ) {
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}`;
    this.concurrency = options.concurrency ?? 4;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.policy = recoveryPolicy(options.recovery);
    this.warn = options.warn ?? ((line) => process.stderr.write(`checkpointd-worker: ${line}\n`));
    if (!(this.concurrency >= 1)) throw new Error(`concurrency must be at least 1, not ${this.concurrency}`);
    if (!(this.leaseMs > 0)) throw new Error(`the lease must be positive, not ${this.leaseMs} ms`);
  }

  get id(): string {
    return this.workerId;
  }

  private done(): boolean {
    const limit = this.options.exitAfter;
    return limit !== undefined && this.report.ends.filter((e) => e.end !== "awaiting_approval").length >= limit;
  }

  /** Claims and drives tasks until shutdown (or `exitAfter` tasks ended); waits for running ones. */
  async run(): Promise<WorkerReport> {
    const running = new Set<Promise<void>>();
    while (!this.shutdown.signal.aborted && !this.done()) {
      const free = this.concurrency - running.size;
      const claimed = free > 0 ? await this.claim(free) : [];
      for (const task of claimed) {
        // runOne settles every outcome with the queue; anything it throws is a bug to report,
        // not a reason to stop the other tasks: the lease of this one simply expires.
        const one: Promise<void> = this.runOne(task)
          .catch((error: unknown) => this.warn(`task ${task.taskId} crashed the worker's loop: ${String(error)}`))
          .finally(() => running.delete(one));
        running.add(one);
      }
      if (claimed.length === 0) await this.pause(running);
    }
    await Promise.all(running);
    return this.report;
  }

  /** Waits a poll interval, or less when shutdown begins or a running task ends. */
  private async pause(running: Set<Promise<void>>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const signal = this.shutdown.signal;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.pollIntervalMs))),
      new Promise<void>((resolve) => {
        onAbort = resolve;
        signal.addEventListener("abort", onAbort, { once: true });
      }),
      ...running,
    ]);
    clearTimeout(timer);
    if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
  }

  private async claim(free: number): Promise<Task[]> {
    try {
      const reply = await this.tasks.claim({
        workerId: this.workerId,
        leaseDuration: protoDuration(this.leaseMs),
        batchSize: Math.min(free, 100),
      });
      return reply.tasks;
    } catch (error) {
      this.warn(`claim failed; retrying: ${String(error)}`);
      return [];
    }
  }

  private async runOne(task: Task): Promise<void> {
    event("claimed", { run: task.runId, task: task.taskId, attempt: task.attempt });
    const lease = keepLease(this.tasks, task, this.leaseMs, this.warn);
    let outcome: Outcome;
    try {
      outcome = await drive(this.agent, this.store, task.runId, decodeInput(task.input), this.policy, {
        signals: { shutdown: this.shutdown.signal, leaseLost: lease.lost },
        decision: taskDecision(task),
        initialState: this.options.initialState,
      });
    } finally {
      await lease.stop();
    }
    if (outcome.resumed !== undefined) {
      event("resumed", {
        run: task.runId,
        recovered_from_step: outcome.resumed.recoveredFromStep,
        restarted_from_scratch: outcome.resumed.restartedFromScratch,
      });
    }
    const end = await this.settle(task, outcome);
    this.report.ends.push({ taskId: task.taskId, end });
    event("finished", { run: task.runId, task: task.taskId, end });
  }

  /** Moves the task through the queue by how the drive ended; returns the end's name. */
  private async settle(task: Task, outcome: Outcome): Promise<TaskEnd> {
    const fenced = { taskId: task.taskId, attempt: task.attempt };
    try {
      switch (outcome.kind) {
        case "finished":
          await this.tasks.complete({ ...fenced, result: encoder.encode(JSON.stringify(outcome.result ?? null)) });
          return "completed";
        case "approval": {
          const details = outcome.details instanceof Uint8Array
            ? outcome.details
            : encoder.encode(JSON.stringify(outcome.details ?? null));
          await this.tasks.requestApproval({ ...fenced, action: outcome.action ?? "", details });
          return "awaiting_approval";
        }
        case "stopped":
          await this.tasks.release(fenced);
          return "released";
        case "failed": {
          const fatal = outcome.errorClass === "fatal";
          await this.tasks.fail({
            ...fenced,
            error: describeError(outcome.error).slice(0, 4000),
            errorClass: fatal ? WireErrorClass.FATAL : WireErrorClass.TRANSIENT,
          });
          return fatal ? "failed_fatal" : "failed_transient";
        }
        case "lease_lost":
          // Another worker owns the run now: nothing is reported, the new owner settles the task.
          return "lease_lost";
      }
    } catch (error) {
      if (error instanceof CheckpointdError && error.code === Code.FailedPrecondition) {
        // Another worker owns the task (LEASE_LOST), or an operator moved it (TASK_STATE).
        return error.reason === undefined || error.reason === "LEASE_LOST" ? "lease_lost" : error.reason.toLowerCase();
      }
      this.warn(`reporting the task outcome failed; the lease will expire: ${String(error)}`);
      return "report_failed";
    }
  }
}

/** `Name: message` of a thrown value, as the task's `last_error`. */
function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
