/**
 * Verifying a loaded checkpoint on the client: recompute checksum v1 from what a load returned
 * (the checkpoint, its messages and the run's journal), as checkpoint.proto's "Verifying a
 * loaded checkpoint" describes, before anything is restored from it.
 */

import type { Checkpoint, ToolIntent, ToolResult } from "./gen/checkpoint/v1/checkpoint_pb.js";
import { MessageChain, ToolChain, checkpointChecksum } from "./checksum.js";

/** What verification found: the checksum recomputed, and whether it is the stored one. */
export interface Verification {
  valid: boolean;
  /** The recomputed checksum; undefined when the answer lacks what it covers. */
  computed: string | undefined;
  /** Why it is not valid, for logs. */
  problem?: string;
}

/**
 * Verifies `checkpoint` against the journal a load returned with it (every entry, or at least
 * the first `tool_count` by `seq`). A load from a message offset returns only the messages from
 * `messages_offset` on: pass the chain over the messages before it as `previous`.
 */
export function verifyCheckpoint(
  checkpoint: Checkpoint,
  toolResults: readonly ToolResult[] = [],
  toolIntents: readonly ToolIntent[] = [],
  previous: MessageChain = MessageChain.EMPTY,
): Verification {
  if (BigInt(previous.length) !== checkpoint.messagesOffset) {
    return {
      valid: false,
      computed: undefined,
      problem: `the answer's messages start at ${checkpoint.messagesOffset}, the chain given covers ${previous.length}`,
    };
  }
  const messages = previous.extend(checkpoint.messages);
  if (BigInt(messages.length) !== checkpoint.messageCount) {
    return {
      valid: false,
      computed: undefined,
      problem: `the answer holds ${messages.length} messages, the checkpoint covers ${checkpoint.messageCount}`,
    };
  }
  const journal = [
    ...toolResults.map((result) => ({ seq: result.seq, push: (c: ToolChain) => c.pushResult(result) })),
    ...toolIntents.map((intent) => ({ seq: intent.seq, push: (c: ToolChain) => c.pushIntent(intent) })),
  ]
    .filter((entry) => entry.seq <= checkpoint.toolCount)
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  if (BigInt(journal.length) !== checkpoint.toolCount) {
    return {
      valid: false,
      computed: undefined,
      problem: `the answer holds ${journal.length} of the ${checkpoint.toolCount} journal entries the checkpoint covers`,
    };
  }
  const tools = journal.reduce((chain, entry) => entry.push(chain), ToolChain.EMPTY);
  const computed = checkpointChecksum(
    {
      runId: checkpoint.runId,
      step: checkpoint.step,
      contentType: checkpoint.contentType,
      state: checkpoint.state,
      metadata: checkpoint.metadata,
    },
    messages,
    tools,
  );
  return computed === checkpoint.checksum
    ? { valid: true, computed }
    : { valid: false, computed, problem: `checksum ${checkpoint.checksum} stored, ${computed} computed` };
}
