/**
 * Paged answers: LoadLatest, LoadAtStep and Resume declare CLIENT_CAPABILITY_PAGED_MESSAGES, and
 * a history too long for one answer is fetched page by page and handed back whole, as if the
 * server had sent it in one piece (proto/checkpoint/v1/checkpoint.proto; Python's _pages.py).
 *
 * Each page is checked to belong to the checkpoint and to start where the messages held so far
 * end; the whole answer is then verified by the store's checksum check. If the checkpoint changes
 * between pages (FAILED_PRECONDITION `CHECKPOINT_CHANGED`, or DATA_LOSS when a later page fails
 * the server's verification), the pages fetched belong to an answer that no longer holds: the
 * call starts again from its first request, at most {@link RESTARTS} times.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";

import { Code, CheckpointdError } from "./errors.js";
import {
  ClientCapability,
  type Checkpoint,
  type LoadAtStepRequestSchema,
  type LoadAtStepResponse,
  type LoadLatestRequestSchema,
  type LoadLatestResponse,
  type ResumeRequestSchema,
  type ResumeResponse,
} from "./gen/checkpoint/v1/checkpoint_pb.js";

/** How often a call starts again after its checkpoint changed between pages. */
export const RESTARTS = 3;
/** The reason a continuation gets when its checkpoint changed since the first page. */
export const CHECKPOINT_CHANGED = "CHECKPOINT_CHANGED";

type LoadLatestInit = MessageInitShape<typeof LoadLatestRequestSchema>;
type LoadAtStepInit = MessageInitShape<typeof LoadAtStepRequestSchema>;
type ResumeInit = MessageInitShape<typeof ResumeRequestSchema>;

/** The calls paging needs: what a CheckpointClient and the in-memory backend both answer. */
export interface PagedCalls {
  loadLatest(request: LoadLatestInit): Promise<LoadLatestResponse>;
  loadAtStep(request: LoadAtStepInit): Promise<LoadAtStepResponse>;
  resume(request: ResumeInit): Promise<ResumeResponse>;
}

type Answer = { checkpoint?: Checkpoint | undefined; continuation: Uint8Array };

/** `capabilities` with the paging capability declared. */
export function declaring(capabilities: readonly ClientCapability[] = [], ...more: ClientCapability[]): ClientCapability[] {
  const all = [...capabilities];
  for (const capability of [ClientCapability.PAGED_MESSAGES, ...more]) {
    if (!all.includes(capability)) all.push(capability);
  }
  return all;
}

/** Whether a continuation's failure means the answer begun no longer holds. */
export function changedBetweenPages(error: unknown): boolean {
  return (
    error instanceof CheckpointdError &&
    (error.code === Code.DataLoss || (error.code === Code.FailedPrecondition && error.reason === CHECKPOINT_CHANGED))
  );
}

/** `first()` (the call's first request), then every further page of its checkpoint's messages. */
async function whole<A extends Answer>(calls: PagedCalls, runId: string, first: () => Promise<A>): Promise<A> {
  for (let restarts = 0; ; restarts++) {
    const answer = await first();
    try {
      return await follow(calls, runId, answer);
    } catch (error) {
      if (restarts >= RESTARTS || !changedBetweenPages(error)) throw error;
    }
  }
}

async function follow<A extends Answer>(calls: PagedCalls, runId: string, answer: A): Promise<A> {
  let token = answer.continuation;
  if (token.length === 0) return answer;
  answer.continuation = new Uint8Array();
  const checkpoint = answer.checkpoint;
  if (checkpoint === undefined) throw new Error("checkpointd: the server sent a continuation without a checkpoint");
  while (token.length > 0) {
    const page = await calls.loadAtStep({
      runId,
      continuation: token,
      capabilities: [ClientCapability.PAGED_MESSAGES],
    });
    token = page.continuation;
    if (page.checkpoint === undefined) throw new Error(`checkpointd: a page of step ${checkpoint.step} came back empty`);
    append(checkpoint, page.checkpoint);
  }
  const held = checkpoint.messagesOffset + BigInt(checkpoint.messages.length);
  if (held !== checkpoint.messageCount) {
    throw new Error(`checkpointd: the pages of step ${checkpoint.step} ended at message ${held} of ${checkpoint.messageCount}`);
  }
  return answer;
}

function append(checkpoint: Checkpoint, page: Checkpoint): void {
  if (page.checkpointId !== checkpoint.checkpointId || page.step !== checkpoint.step) {
    throw new Error(`checkpointd: a page of step ${checkpoint.step} came back for step ${page.step}`);
  }
  const following = checkpoint.messagesOffset + BigInt(checkpoint.messages.length);
  if (page.messagesOffset !== following) {
    throw new Error(`checkpointd: a page of step ${checkpoint.step} starts at message ${page.messagesOffset}, not ${following}`);
  }
  checkpoint.messages.push(...page.messages);
}

/** LoadLatest with every page of its history. */
export function loadLatestWhole(calls: PagedCalls, request: LoadLatestInit & { runId: string }): Promise<LoadLatestResponse> {
  const init = { ...request, capabilities: declaring(request.capabilities) };
  return whole(calls, request.runId, () => calls.loadLatest(init));
}

/** LoadAtStep with every page of its history. */
export function loadAtStepWhole(calls: PagedCalls, request: LoadAtStepInit & { runId: string }): Promise<LoadAtStepResponse> {
  const init = { ...request, capabilities: declaring(request.capabilities) };
  return whole(calls, request.runId, () => calls.loadAtStep(init));
}

/** Resume with every page of its restored history (and declaring that calls in doubt are read). */
export function resumeWhole(calls: PagedCalls, request: ResumeInit & { runId: string }): Promise<ResumeResponse> {
  const init = { ...request, capabilities: declaring(request.capabilities, ClientCapability.IN_DOUBT_CALLS) };
  return whole(calls, request.runId, () => calls.resume(init));
}
