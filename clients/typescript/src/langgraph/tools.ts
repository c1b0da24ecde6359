/**
 * Exactly-once side-effecting tools for LangGraph.js graphs checkpointed by `CheckpointdSaver`,
 * the counterpart of Python's `checkpointd.langgraph.tools`:
 *
 *     const sendEmail = exactlyOnce(tool(async ({ to, body }) =>
 *       mailer.send(to, body, { idempotencyKey: idempotencyKey() }), { name: "send_email", ... }));
 *     builder.addNode("tools", new ToolNode([sendEmail]));
 *
 * A wrapped call journals an intent in the thread's checkpointd run before it runs, hands the
 * tool the call's idempotency key (protocol-derived from tenant, run and call id; read it with
 * `idempotencyKey()`), and journals its result after. A call whose result is journalled is never
 * made again: a re-run (after a crash, an interrupt, a node retry or a fallback past a corrupt
 * checkpoint) returns the journalled result. A call whose intent is journalled but not its result
 * is *in doubt* (the process died between the effect and the record) and is settled by the
 * tool's policy:
 *
 * - `retry_with_key`: called again with the same key (safe: the tool honours the key);
 * - `fail`: `ToolCallInDoubt` is thrown, naming the call;
 * - `ask`: LangGraph's `interrupt()` is raised with a payload naming the call (its `type` is
 *   `IN_DOUBT_INTERRUPT`); resume with `new Command({ resume })`: `"retry"` calls again with the
 *   key, `{ action: "skip", result }` journals `result` as the call's result without calling,
 *   `"fail"` throws `ToolCallInDoubt`.
 *
 * Call ids are deterministic across a crash and across a fallback to an older checkpoint (they
 * never contain LangGraph's checkpoint or task ids, which a replay renews):
 *
 * - a model's tool call (a `ToolNode`): (node path, tool, the tool call's id). A scripted model
 *   must make its tool call ids unique, or its later calls replay earlier results.
 * - without one (a plain node): (node path, step, task path, tool, n) for the n-th call of the
 *   tool in the task attempt; the node must make its calls in the same order each time it runs.
 *   Time travel forks at a new step, so these calls run again there.
 * - with `key`: (graph path, tool, your key), one call per key in the thread.
 *
 * A replay must match its call (DESIGN contract 14): each call journals the digest of its
 * arguments (src/digest.ts: a model's tool call's `args`, a function's arguments array), and a
 * call id journalled with other arguments (a model that reuses a tool call id) throws
 * `ReplayMismatch` naming the call and both digests; the tool is not called. A call named by
 * `key` has no digest, as in Python's package: the key says which effect it is, and calls that
 * share it share one journal entry whatever their other arguments.
 */

import { AsyncLocalStorage } from "node:async_hooks";

import { ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { StructuredTool, type StructuredToolInterface } from "@langchain/core/tools";
import { getConfig, interrupt } from "@langchain/langgraph";

import { FatalError } from "../classify.js";
import { argumentsDigest } from "../digest.js";
import { inDoubtAction, type InDoubtPolicy } from "../context.js";
import { toolCallId } from "./naming.js";
import { CheckpointdSaver, coreOf } from "./saver.js";
import { ToolJournal, type Begun } from "./tooljournal.js";

/** The `type` of the interrupt value an `ask` tool raises for an in-doubt call. */
export const IN_DOUBT_INTERRUPT = "checkpointd.in_doubt";

const CHECKPOINTER = "__pregel_checkpointer"; // LangGraph's CONFIG_KEY_CHECKPOINTER
const SCRATCHPAD = "__pregel_scratchpad"; // one per task attempt; a retry gets a new one
const POLICIES: readonly InDoubtPolicy[] = ["retry_with_key", "fail", "ask"];

/** What an `ask` interrupt carries. */
export interface InDoubtQuestion {
  type: typeof IN_DOUBT_INTERRUPT;
  action: string;
  call_id: string;
  tool_name: string;
  run_id: string;
  idempotency_key: string;
  message: string;
}

/**
 * An in-doubt call (intent journalled, no result) that its policy, or a human, failed. Settle it
 * for good by resuming an `ask` with `{ action: "skip", result }`, or with an operator's repair
 * of the journal.
 */
export class ToolCallInDoubt extends FatalError {
  override readonly name = "ToolCallInDoubt";
  readonly callId: string;
  readonly toolName: string;
  readonly runId: string;
  readonly idempotencyKey: string;

  constructor(call: Begun, why: string) {
    super(`tool call ${call.callId} (${call.toolName}) in run ${call.runId} is in doubt: its intent was ` +
      `journalled but no result, so its effect may have happened; ${why}`);
    this.callId = call.callId;
    this.toolName = call.toolName;
    this.runId = call.runId;
    this.idempotencyKey = call.idempotencyKey;
  }
}

const current = new AsyncLocalStorage<Begun>();

/**
 * The idempotency key of the exactly-once call running now. A tool passes it to the system it
 * acts on (a mail API's idempotency key, a unique request id) and must not repeat its effect for
 * a key it has seen: an in-doubt call is retried with the same key.
 */
export function idempotencyKey(): string {
  const call = current.getStore();
  if (call === undefined) throw new Error("idempotencyKey() is available only inside an exactlyOnce tool call");
  return call.idempotencyKey;
}

interface CommonOptions {
  /** What settles an in-doubt call; `retry_with_key` by default. */
  policy?: InDoubtPolicy;
  /** The saver that journals the calls; the graph's checkpointer by default. */
  saver?: CheckpointdSaver;
}

export interface ExactlyOnceToolOptions extends CommonOptions {
  /** Names the effect from the call's arguments (an order id): one call per key in the thread, whatever its other arguments (no digest is compared). */
  key?: (args: Record<string, unknown>) => string;
}

export interface ExactlyOnceFunctionOptions<A extends unknown[]> extends CommonOptions {
  /** The tool name in call ids and the journal; the function's own name by default. */
  name?: string;
  /** Names the effect from the call's arguments: one call per key in the thread, whatever its other arguments (no digest is compared). */
  key?: (...args: A) => string;
}

// -- where a call happens -------------------------------------------------------------------

interface Site {
  journal: ToolJournal;
  taskNs: string; // the task's namespace without task ids: "tools", "outer|tools"
  graphNs: string;
  step: number;
  path: string;
  scratchpad: object | undefined;
}

/** A namespace without LangGraph's task ids (which change when a graph replays an older checkpoint). */
function recast(ns: string): string {
  return ns.split("|").filter((part) => part !== "").map((part) => part.split(":")[0]).join("|");
}

function site(config: RunnableConfig, saver: CheckpointdSaver | undefined): Site {
  const configurable = (config.configurable ?? {}) as Record<string, unknown>;
  const metadata = (config.metadata ?? {}) as Record<string, unknown>;
  const chosen = saver ?? configurable[CHECKPOINTER];
  if (chosen === undefined || chosen === null) {
    throw new Error("an exactlyOnce tool runs inside a LangGraph graph compiled with " +
      "{ checkpointer: new CheckpointdSaver(...) } (or is given { saver })");
  }
  if (!(chosen instanceof CheckpointdSaver)) {
    const kind = (chosen as object).constructor?.name ?? typeof chosen;
    throw new TypeError(`an exactlyOnce tool journals through CheckpointdSaver, but the graph's checkpointer is ${kind}; ` +
      "pass { saver: new CheckpointdSaver(...) }");
  }
  const threadId = configurable["thread_id"];
  if (threadId === undefined || threadId === null || threadId === "") {
    throw new Error("an exactlyOnce tool needs the graph's thread_id in its config");
  }
  const taskNs = recast(String(configurable["checkpoint_ns"] ?? ""));
  const scratchpad = configurable[SCRATCHPAD];
  const step = Number(metadata["langgraph_step"] ?? 0);
  const path = metadata["langgraph_path"];
  return {
    journal: new ToolJournal(coreOf(chosen), String(threadId)),
    taskNs,
    graphNs: taskNs.includes("|") ? taskNs.slice(0, taskNs.lastIndexOf("|")) : "",
    step: Number.isFinite(step) && step > 0 ? Math.floor(step) : 0,
    path: Array.isArray(path) ? path.map((p) => (typeof p === "object" ? JSON.stringify(p) : String(p))).join("/") : String(path ?? ""),
    scratchpad: typeof scratchpad === "object" && scratchpad !== null ? scratchpad : undefined,
  };
}

/** Per task attempt (its scratchpad): how many calls of each tool it made, for the n in call ids. */
const counters = new WeakMap<object, Map<string, number>>();

function nextIndex(scratchpad: object, tool: string): number {
  let counts = counters.get(scratchpad);
  if (counts === undefined) counters.set(scratchpad, (counts = new Map()));
  const index = counts.get(tool) ?? 0;
  counts.set(tool, index + 1);
  return index;
}

function callId(where: Site, tool: string, key: string | undefined, modelCallId: string | undefined): string {
  if (key !== undefined) return toolCallId("k", [where.graphNs, tool, key]);
  if (modelCallId) return toolCallId("c", [where.taskNs, tool, modelCallId]);
  if (where.scratchpad === undefined) throw new Error(`exactlyOnce tool ${tool} is called outside a LangGraph task`);
  return toolCallId("n", [where.taskNs, String(where.step), where.path, tool, String(nextIndex(where.scratchpad, tool))]);
}

// -- settling an in-doubt call --------------------------------------------------------------

type Decision = { action: "retry" } | { action: "skip"; result: unknown };

function decision(answer: unknown): "retry" | "skip" | "fail" {
  let action = typeof answer === "object" && answer !== null ? (answer as Record<string, unknown>)["action"] : answer;
  if (action === true) action = "retry";
  if (action === false) action = "fail";
  if (action !== "retry" && action !== "skip" && action !== "fail") {
    throw new Error(`resume value ${JSON.stringify(answer)} for an in-doubt tool call: expected "retry", "fail" or ` +
      '{ action: "skip", result: ... }');
  }
  return action;
}

/** How an in-doubt call goes on: again with its key, or with a human's result; throws otherwise. */
function settle(call: Begun, policy: InDoubtPolicy): Decision {
  if (policy === "fail") throw new ToolCallInDoubt(call, "the tool's policy is fail");
  if (policy === "ask") {
    const question: InDoubtQuestion = {
      type: IN_DOUBT_INTERRUPT,
      action: inDoubtAction(call.callId),
      call_id: call.callId,
      tool_name: call.toolName,
      run_id: call.runId,
      idempotency_key: call.idempotencyKey,
      message: `tool call ${call.callId} (${call.toolName}) is in doubt: it may or may not have taken effect. ` +
        'Resume with "retry", "fail" or { action: "skip", result: ... }.',
    };
    const answer: unknown = interrupt(question);
    const chosen = decision(answer);
    if (chosen === "fail") throw new ToolCallInDoubt(call, "a human chose to fail it");
    if (chosen === "skip") return { action: "skip", result: (answer as Record<string, unknown>)["result"] };
  }
  console.warn(`checkpointd: re-running an in-doubt tool call with its idempotency key run_id=${call.runId} ` +
    `call_id=${call.callId} policy=${policy}`);
  return { action: "retry" };
}

const isError = (value: unknown): boolean => value instanceof ToolMessage && value.status === "error";

/**
 * Runs `run` at most once for `id`; `skipped` turns a human's `skip` result into what the call
 * returns.
 */
async function runOnce(where: Site, id: string, tool: string, policy: InDoubtPolicy, digest: string, run: () => Promise<unknown>,
  skipped: (result: unknown) => unknown = (result) => result): Promise<unknown> {
  const call = await where.journal.begin(id, tool, where.step, digest);
  if (call.replayed !== undefined) return call.replayed.value;
  if (call.inDoubt) {
    const settled = settle(call, policy);
    if (settled.action === "skip") return where.journal.finish(call, skipped(settled.result), false);
  }
  const value = await current.run(call, run);
  return where.journal.finish(call, value, isError(value));
}

function checkPolicy(policy: string | undefined): InDoubtPolicy {
  const chosen = policy ?? "retry_with_key";
  if (!POLICIES.includes(chosen as InDoubtPolicy)) {
    throw new Error(`unknown in-doubt policy ${JSON.stringify(policy)}: expected one of ${POLICIES.join(", ")}`);
  }
  return chosen as InDoubtPolicy;
}

// -- LangChain tools ------------------------------------------------------------------------

interface ToolCallInput {
  type: "tool_call";
  id?: string;
  args: Record<string, unknown>;
}

function isToolCall(input: unknown): input is ToolCallInput {
  return typeof input === "object" && input !== null && (input as Record<string, unknown>)["type"] === "tool_call";
}

/**
 * A LangChain tool that runs `tool` exactly once per call id: what `exactlyOnce` returns for a
 * tool. It has the wrapped tool's name, description and schema, so a model binds it and a
 * `ToolNode` calls it as it would the tool itself.
 */
export class ExactlyOnceTool extends StructuredTool {
  name: string;
  description: string;
  schema: StructuredTool["schema"];
  readonly tool: StructuredToolInterface;
  readonly policy: InDoubtPolicy;
  private readonly key: ((args: Record<string, unknown>) => string) | undefined;
  private readonly saver: CheckpointdSaver | undefined;

  constructor(tool: StructuredToolInterface, options: ExactlyOnceToolOptions = {}) {
    super({ responseFormat: (tool as StructuredTool).responseFormat });
    this.tool = tool;
    this.name = tool.name;
    this.description = tool.description;
    this.schema = tool.schema as StructuredTool["schema"];
    this.returnDirect = tool.returnDirect;
    this.policy = checkPolicy(options.policy);
    this.key = options.key;
    this.saver = options.saver;
  }

  // Every way of calling a LangChain tool comes through invoke, which StructuredTool declares
  // with generics this wrapper passes through unchanged.
  override async invoke(input: any, config?: any): Promise<any> {
    const where = site((config ?? {}) as RunnableConfig, this.saver);
    const modelCallId = isToolCall(input) ? input.id : undefined;
    const args = isToolCall(input) ? input.args : typeof input === "object" && input !== null ? input as Record<string, unknown> : { input };
    const id = callId(where, this.name, this.key === undefined ? undefined : String(this.key(args)), modelCallId);
    // A tool call returns a ToolMessage; so does a call a human settled by `skip`.
    const skipped = (result: unknown): unknown => {
      if (!modelCallId || result instanceof ToolMessage) return result;
      const content = typeof result === "string" ? result : JSON.stringify(result);
      return new ToolMessage({ content, name: this.name, tool_call_id: modelCallId });
    };
    const digest = this.key === undefined ? argumentsDigest(args) : "";
    return runOnce(where, id, this.name, this.policy, digest, () => this.tool.invoke(input, config), skipped);
  }

  protected override _call(): Promise<never> {
    return Promise.reject(new Error("ExactlyOnceTool runs through invoke"));
  }
}

// -- plain functions and tools --------------------------------------------------------------

/**
 * Makes a side-effecting tool run at most once per call id (see the module comment).
 *
 * `target` is a LangChain tool (from `tool()` or a `StructuredTool`; the result is a tool for
 * `ToolNode` or `bindTools`) or a plain function called from a node (the result is its async
 * twin). `key` maps the call's arguments to a string naming the effect (an order id): calls with
 * the same key in one thread share one journal entry. `saver` defaults to the graph's checkpointer.
 */
export function exactlyOnce(target: StructuredToolInterface, options?: ExactlyOnceToolOptions): ExactlyOnceTool;
export function exactlyOnce<A extends unknown[], R>(target: (...args: A) => R | Promise<R>,
  options?: ExactlyOnceFunctionOptions<A>): (...args: A) => Promise<Awaited<R>>;
export function exactlyOnce<A extends unknown[], R>(
  target: StructuredToolInterface | ((...args: A) => R | Promise<R>),
  options: ExactlyOnceToolOptions | ExactlyOnceFunctionOptions<A> = {},
): ExactlyOnceTool | ((...args: A) => Promise<Awaited<R>>) {
  if (typeof target === "function") return wrapFunction(target, options as ExactlyOnceFunctionOptions<A>);
  if (typeof target === "object" && target !== null && typeof target.invoke === "function" && typeof target.name === "string") {
    return new ExactlyOnceTool(target, options as ExactlyOnceToolOptions);
  }
  throw new TypeError(`exactlyOnce wraps a LangChain tool or a function, not ${String(target)}`);
}

function wrapFunction<A extends unknown[], R>(fn: (...args: A) => R | Promise<R>,
  options: ExactlyOnceFunctionOptions<A>): (...args: A) => Promise<Awaited<R>> {
  const name = options.name ?? fn.name;
  if (!name) throw new Error("exactlyOnce needs a name for an anonymous function: pass { name }");
  const policy = checkPolicy(options.policy);
  const { key, saver } = options;
  const wrapped = async (...args: A): Promise<Awaited<R>> => {
    const where = site(getConfig(), saver);
    const id = callId(where, name, key === undefined ? undefined : String(key(...args)), undefined);
    const digest = key === undefined ? argumentsDigest(args) : "";
    return await runOnce(where, id, name, policy, digest, async () => fn(...args)) as Awaited<R>;
  };
  Object.defineProperty(wrapped, "name", { value: name });
  return wrapped;
}
