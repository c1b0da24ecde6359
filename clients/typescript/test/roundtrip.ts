/**
 * The round trip several tests make: a Save request carrying its client-computed checksum, and a
 * LoadLatest whose checkpoint must come back with that checksum and verify on the client.
 */

import assert from "node:assert/strict";

import {
  MessageChain,
  ToolChain,
  checkpointChecksum,
  verifyCheckpoint,
  type CheckpointClient,
  type CheckpointContent,
} from "../src/index.js";

type Message = { role: string; content: Uint8Array };

/** `content` and `messages` as a Save request with checksum v1 computed here, no tool results. */
export function withChecksum<C extends CheckpointContent>(content: C, messages: Message[]) {
  const checksum = checkpointChecksum(content, MessageChain.over(messages), ToolChain.EMPTY);
  return { ...content, messages, checksum };
}

/** LoadLatest of `runId`, asserted to carry `checksum` and to verify on the client. */
export async function loadVerified(client: CheckpointClient, runId: string, checksum: string) {
  const loaded = await client.loadLatest({ runId });
  const checkpoint = loaded.checkpoint;
  assert.ok(checkpoint, "LoadLatest returned no checkpoint");
  assert.equal(checkpoint.checksum, checksum);
  const verified = verifyCheckpoint(checkpoint, loaded.toolResults, loaded.toolIntents);
  assert.ok(verified.valid, verified.problem);
  return { ...loaded, checkpoint };
}
