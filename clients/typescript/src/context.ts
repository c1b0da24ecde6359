/**
 * What a step sees: its state and messages, journalled tools, the LLM hook and approvals.
 *
 * A step must be deterministic given the state, the messages and the journalled tool results,
 * so that re-executing it after a rewind makes the same tool calls and reuses their results.
 */

import { ApprovalRequired, FatalError, type Decision } from "./classify.js";
import { argumentsDigest } from "./digest.js";
import { checkReplay } from "./errors.js";
import type { Session } from "./session.js";
import { decodeOutput, encodeOutput, type ChatMessage, type InDoubt, type State } from "./store.js";

/**
 * What to do with a side-effecting call whose intent was journalled but no result (the process
 * died between). Never a silent re-run.
 * - `retry_with_key`: run it again with the same idempotency key (safe: the tool honours it);
 * - `ask`: park the run for a human (approval action `in_doubt CALL_ID`); approved, it re-runs;
 * - `fail`: fail the run fatally, naming the call.
 */
export type InDoubtPolicy = "retry_with_key" | "ask" | "fail";

/** `callSideEffect`'s options: the in-doubt policy and the arguments `fn` gets after the key. */
export interface SideEffectOptions<A extends unknown[]> {
  policy?: InDoubtPolicy;
  args?: A;
}

/**
 * The arguments digest a journalled call sends and compares (src/digest.ts): of the arguments
 * array as given. A call given no arguments (a closure over what it uses) sends none, so its
 * journal entry replays for any call of that id, as before digests: there is nothing to compare.
 */
function digestOf(args: readonly unknown[]): string {
  return args.length === 0 ? "" : argumentsDigest(args);
}

/** The approval action that asks a human about an in-doubt call. */
export function inDoubtAction(callId: string): string {
  return `in_doubt ${callId}`;
}

/**
 * Returns when the call may re-run with its key; throws otherwise. A corrupt entry always goes
 * to a human: only an operator's repair can settle its journal.
 */
export function settleInDoubt(call: InDoubt, policy: InDoubtPolicy, approved: boolean | undefined): void {
  const effective = call.corrupt ? "ask" : policy;
  if (effective === "retry_with_key" || (effective === "ask" && approved === true)) return;
  if (effective === "ask" && approved === undefined) {
    throw new ApprovalRequired(inDoubtAction(call.callId), { ...call });
  }
  if (effective === "ask") throw new FatalError(`tool call ${call.callId} is in doubt and a human rejected running it again`);
  throw new FatalError(
    `tool call ${call.callId} (${call.toolName}) is in doubt: its intent was journalled but no result; the tool's policy is fail`,
  );
}

/**
 * The context of one step of one run. `state` and `messages` are the live values: change them
 * in place (or assign `ctx.state`); a step that fails leaves no trace in them.
 */
export class StepContext {
  /** Whether this step ran a tool (not one replayed from the journal). */
  executedTools = false;
  private start: { state: State; messageCount: number } | undefined;
  private readonly callIndexes = new Map<string, number>();

  /**
   * `signal` aborts when the step is abandoned (drain deadline passed, lease lost): a promise
   * cannot be cancelled, so a long step should pass it on; the step's journal writes stop there.
   */
  constructor(
    private readonly session: Session,
    readonly step: number,
    readonly signal: AbortSignal = new AbortController().signal,
  ) {
    this.start = session.strategy.beforeLlm
      ? { state: structuredClone(session.state), messageCount: session.messages.length }
      : undefined;
  }

  get runId(): string {
    return this.session.runId;
  }

  /** The task's input: what `runWithRecovery` was given, or the queued task's input. */
  get task(): unknown {
    return this.session.task;
  }

  get state(): State {
    return this.session.state;
  }

  set state(value: State) {
    this.session.state = value;
  }

  /** The whole message history, restored messages included; append only. */
  get messages(): ChatMessage[] {
    return this.session.messages;
  }

  addMessage(role: string, content: unknown, fields: Record<string, unknown> = {}): void {
    this.session.messages.push({ role, content, ...fields });
  }

  /**
   * Calls a tool at most once per call: a result journalled by this or an earlier life of the
   * run is returned without calling `fn`; otherwise `fn(...args)` runs and its JSON-serialisable
   * result is journalled before it is returned. The call id is `step-{step}/{name}/{n}` for the
   * n-th call of `name` in the step. A journalled result is replayed only for the same `args`
   * (their digest is journalled with it): other arguments under the same call id throw
   * {@link ReplayMismatch} and `fn` is not called. A closure without `args` is not compared.
   */
  async callTool<T, A extends unknown[] = []>(name: string, fn: (...args: A) => T | Promise<T>, ...args: A): Promise<T> {
    this.signal.throwIfAborted();
    const callId = this.nextCallId(name);
    const digest = digestOf(args);
    const replayed = this.replay(callId, digest);
    if (replayed !== undefined) return replayed.value as T;
    return (await this.record(name, callId, await fn(...args), digest)) as T;
  }

  /**
   * Calls a side-effecting tool at most once, even across a crash between its effect and its
   * journalled result: an intent is journalled first and `fn(key)` receives the call's
   * idempotency key, which it must honour (a key seen before repeats no effect). A call left in
   * doubt by a crash is settled by `policy` (`retry_with_key` unless given). The third argument
   * is the policy, or `{ policy, args }`: `fn(key, ...args)` is called, and the journalled
   * intent and result are reused only for the same `args` (else {@link ReplayMismatch}).
   */
  async callSideEffect<T, A extends unknown[] = []>(
    name: string,
    fn: (idempotencyKey: string, ...args: A) => T | Promise<T>,
    options: InDoubtPolicy | SideEffectOptions<A> = "retry_with_key",
  ): Promise<T> {
    const { policy = "retry_with_key", args = [] as unknown as A } = typeof options === "string" ? { policy: options } : options;
    this.signal.throwIfAborted();
    const callId = this.nextCallId(name);
    const digest = digestOf(args);
    const replayed = this.replay(callId, digest);
    if (replayed !== undefined) return replayed.value as T;
    const { store, runId } = this.session;
    const inDoubt = store.inDoubt(runId, callId);
    let key: string;
    if (inDoubt !== undefined) {
      // An intent for other arguments: its effect (if any) was not this call's.
      checkReplay(callId, store.journalledIntent(runId, callId)?.argumentsDigest, digest);
      key = this.settle(inDoubt, policy);
    } else {
      this.signal.throwIfAborted();
      const reply = await store.recordToolIntent(runId, callId, name, this.step, digest);
      // Completed by another life of the run since this one resumed.
      if (reply.result !== undefined) {
        checkReplay(callId, reply.result.argumentsDigest, digest);
        return decodeOutput(reply.result.output) as T;
      }
      const intent = reply.intent;
      if (intent === undefined) throw new Error(`checkpointd: RecordToolIntent for ${callId} answered no intent`);
      if (reply.alreadyRecorded) checkReplay(callId, intent.argumentsDigest, digest);
      key = reply.alreadyRecorded
        ? this.settle(
            { callId: intent.callId, toolName: intent.toolName, step: Number(intent.step), idempotencyKey: intent.idempotencyKey, corrupt: false },
            policy,
          )
        : intent.idempotencyKey;
    }
    return (await this.record(name, callId, await fn(key, ...args), digest)) as T;
  }

  /**
   * Wraps an LLM call. With the `beforeLlm` strategy the state this step started from is
   * checkpointed first, so a crash during a long model call loses nothing before it.
   */
  async llm<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.start !== undefined) {
      const { state, messageCount } = this.start;
      this.start = undefined;
      if (this.step > 1) await this.session.save(this.step - 1, state, messageCount);
    }
    return fn();
  }

  /**
   * Asks a human. Returns the decision once one was made for `action`; until then the step
   * stops (ApprovalRequired), the run is checkpointed and (under the worker) its task is parked
   * in `input_required`; the step re-runs with the decision.
   */
  requestApproval(action: string, details?: unknown): Decision {
    const decision = this.session.decision;
    if (decision !== undefined && decision.action === action) return decision;
    throw new ApprovalRequired(action, details);
  }

  private settle(call: InDoubt, policy: InDoubtPolicy): string {
    const decision = this.session.decision;
    const approved = decision !== undefined && decision.action === inDoubtAction(call.callId) ? decision.approved : undefined;
    settleInDoubt(call, policy, approved);
    this.session.store.logger.warn(
      `checkpointd: re-running an in-doubt tool call with its idempotency key run_id=${this.runId} call_id=${call.callId} policy=${policy}`,
    );
    return call.idempotencyKey;
  }

  private nextCallId(name: string): string {
    const index = this.callIndexes.get(name) ?? 0;
    this.callIndexes.set(name, index + 1);
    return `step-${this.step}/${name}/${index}`;
  }

  private replay(callId: string, digest: string): { value: unknown } | undefined {
    const recorded = this.session.store.journalled(this.session.runId, callId);
    if (recorded === undefined) return undefined;
    checkReplay(callId, recorded.argumentsDigest, digest);
    this.session.stats.toolsReplayed++;
    this.session.store.logger.info(`checkpointd: tool result replayed from the journal run_id=${this.runId} call_id=${callId}`);
    return { value: decodeOutput(recorded.output) };
  }

  private async record(name: string, callId: string, output: unknown, digest: string): Promise<unknown> {
    this.signal.throwIfAborted();
    const recorded = await this.session.store.recordToolResult(this.session.runId, callId, name, this.step, encodeOutput(output), false, digest);
    this.session.stats.toolsExecuted++;
    this.executedTools = true;
    return decodeOutput(recorded.output);
  }
}
