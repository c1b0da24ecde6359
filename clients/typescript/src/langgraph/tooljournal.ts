/**
 * The journal of exactly-once tool calls in a LangGraph thread's checkpointd run
 * (docs/langgraph-mapping.md, "exactly-once tool call" and behaviour rule 6): the two writes
 * (intent, result) made through the saver's per-run state, which learns them so that the
 * thread's later checkpoints cover the calls in their checksum.
 *
 * Call ids start with `lg.tool/`, which no checkpoint id does, so the saver's pending-write
 * loader (which reads only entries named `<checkpoint id>/...`) never mistakes them for writes.
 */

import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

import { checkReplay } from "../errors.js";
import { encodeToolResult } from "./codec.js";
import type { Core } from "./core.js";
import { runId } from "./naming.js";
import { fenced } from "./ownership.js";
import { ofIntent, ofResult, type RunState } from "./runs.js";

/**
 * A call whose intent is journalled: completed already (`replayed` holds its result), in doubt
 * (an intent from an earlier attempt and no result), or fresh.
 */
export interface Begun {
  runId: string;
  callId: string;
  toolName: string;
  step: number;
  idempotencyKey: string;
  /** The call's arguments digest (src/digest.ts), journalled with its intent and result. */
  argumentsDigest: string;
  replayed?: { value: unknown };
  inDoubt: boolean;
}

/** A journalled result: the `encodeToolResult` frame back to the value it holds. */
async function decodeValue(serde: SerializerProtocol, output: Uint8Array): Promise<unknown> {
  if (output.length < 4) throw new Error("a tool result too short for its frame");
  const end = 4 + new DataView(output.buffer, output.byteOffset, output.byteLength).getUint32(0);
  const header = JSON.parse(Buffer.from(output.subarray(4, end)).toString("utf8")) as { type?: unknown };
  if (typeof header.type !== "string") throw new Error("a tool result frame without a type");
  return serde.loadsTyped(header.type, output.slice(end));
}

/** The journal of one thread: its root namespace's run (subgraph runs are named by task ids). */
export class ToolJournal {
  readonly runId: string;
  private readonly state: RunState;

  constructor(private readonly core: Core, threadId: string) {
    this.runId = runId(threadId, "");
    this.state = core.runs.get(this.runId);
  }

  /**
   * Journals the intent of a call, or finds the one journalled before (and its result). A call
   * journalled with other arguments throws ReplayMismatch (the server's refusal, or this
   * client's own check against an older server's answer): nothing is replayed or called.
   */
  async begin(callId: string, toolName: string, step: number, argumentsDigest: string): Promise<Begun> {
    const reply = await this.write((epoch) =>
      this.core.client.recordToolIntent({ runId: this.runId, callId, toolName, step: BigInt(step), epoch, argumentsDigest }));
    if (reply.result !== undefined) checkReplay(callId, reply.result.argumentsDigest, argumentsDigest);
    if (reply.alreadyRecorded && reply.intent !== undefined) checkReplay(callId, reply.intent.argumentsDigest, argumentsDigest);
    if (!reply.alreadyRecorded && reply.intent !== undefined) this.state.learn(ofIntent(reply.intent));
    const begun: Begun = {
      runId: this.runId,
      callId,
      toolName,
      step,
      idempotencyKey: reply.intent?.idempotencyKey ?? "",
      argumentsDigest,
      inDoubt: false,
    };
    if (reply.result !== undefined) begun.replayed = { value: await decodeValue(this.core.serde, reply.result.output) };
    else begun.inDoubt = reply.alreadyRecorded;
    return begun;
  }

  /**
   * Journals the call's result; returns the stored one (another life of the thread may have
   * recorded the call first, and the first result stands).
   */
  async finish(call: Begun, value: unknown, isError: boolean): Promise<unknown> {
    const [type, bytes] = await this.core.serde.dumpsTyped(value);
    const reply = await this.write((epoch) => this.core.client.recordToolResult({
      runId: this.runId,
      callId: call.callId,
      toolName: call.toolName,
      step: BigInt(call.step),
      output: encodeToolResult(type, bytes),
      isError,
      epoch,
      argumentsDigest: call.argumentsDigest,
    }));
    if (reply.result !== undefined) this.state.learn(ofResult(reply.result));
    if (reply.alreadyRecorded && reply.result !== undefined) return decodeValue(this.core.serde, reply.result.output);
    return value;
  }

  /**
   * One journal write, fenced as the saver's own pending writes are; on a server without
   * `SaveRequest.tool_count` it waits for the run's saves (which checksum the whole journal).
   */
  private write<T>(call: (epoch: bigint) => Promise<T>): Promise<T> {
    const op = () => fenced(this.core.client, this.state, call);
    return this.core.legacyJournal ? this.state.gate.hold(op) : op();
  }
}
