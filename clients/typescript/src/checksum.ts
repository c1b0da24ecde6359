/**
 * Checksum v1 and idempotency key v1: SHA-256 over the length-prefixed byte framing that
 * proto/checkpoint/v1/checkpoint.proto documents, so this client computes exactly what the
 * server (crates/protocol/src/checksum.rs) verifies. Checked against tests/vectors/checksum_v1.json.
 */

import { createHash, type Hash } from "node:crypto";

/** The domain tag that opens every checkpoint's framing. */
const DOMAIN_TAG = "checkpointd.checksum.v1";
/** The domain tag that opens every idempotency key's framing. */
const IDEMPOTENCY_TAG = "checkpointd.idempotency.v1";
/**
 * The byte that opens an intent leaf's preimage. A result leaf opens with the high byte of its
 * call id's big-endian length, which is 0 for any real length, so the two never collide.
 */
const INTENT_LEAF_TAG = 0x01;
const U64_MAX = (1n << 64n) - 1n;
const ZERO_DIGEST: Uint8Array = new Uint8Array(32);

/** Text is framed as its UTF-8 bytes; bytes as they are. */
export type BytesLike = Uint8Array | string;
/** A step or count: a non-negative integer below 2^64 (bigint for steps past 2^53). */
export type U64Like = bigint | number;

function utf8(value: BytesLike): Uint8Array {
  return typeof value === "string" ? Buffer.from(value, "utf8") : value;
}

function toU64(value: U64Like, what: string): bigint {
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    throw new RangeError(`${what} must be a safe integer or a bigint, got ${value}`);
  }
  const big = BigInt(value);
  if (big < 0n || big > U64_MAX) {
    throw new RangeError(`${what} must be in [0, 2^64), got ${big}`);
  }
  return big;
}

/** Writes the v1 framing into a SHA-256 hash. */
class Framer {
  private readonly hash: Hash = createHash("sha256");

  /** `u64(x)`: x as 8 bytes big-endian. */
  u64(value: U64Like, what = "value"): this {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64BE(toU64(value, what));
    this.hash.update(bytes);
    return this;
  }

  /** `lp(b)`: the length as a big-endian u64, then the bytes. */
  lp(value: BytesLike): this {
    const bytes = utf8(value);
    this.u64(bytes.length);
    this.hash.update(bytes);
    return this;
  }

  raw(bytes: Uint8Array): this {
    this.hash.update(bytes);
    return this;
  }

  finish(): Uint8Array {
    return new Uint8Array(this.hash.digest());
  }
}

function chain(previous: Uint8Array, leaf: Uint8Array): Uint8Array {
  return new Framer().raw(previous).raw(leaf).finish();
}

/** Lower-case hex, the form checksums and keys take on the wire. */
export function toHex(digest: Uint8Array): string {
  return Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString("hex");
}

/**
 * The running digest of a run's message log: `d_i = H(d_(i-1) || H(lp(role) || lp(content)))`.
 * Immutable: `push` returns a new chain, so a caller can keep the chain of its last save.
 */
export class MessageChain {
  static readonly EMPTY = new MessageChain(0, ZERO_DIGEST);

  private constructor(
    /** How many messages the chain covers. */
    readonly length: number,
    /** `d_length`, 32 raw bytes. */
    readonly head: Uint8Array,
  ) {}

  /** The chain over a whole log of messages, recomputed from content. */
  static over(messages: Iterable<{ role: string; content: BytesLike }>): MessageChain {
    return MessageChain.EMPTY.extend(messages);
  }

  /** This chain with one more message. */
  push(role: string, content: BytesLike): MessageChain {
    const leaf = new Framer().lp(role).lp(content).finish();
    return new MessageChain(this.length + 1, chain(this.head, leaf));
  }

  /** This chain with every message of `messages` appended in order. */
  extend(messages: Iterable<{ role: string; content: BytesLike }>): MessageChain {
    let current: MessageChain = this;
    for (const message of messages) {
      current = current.push(message.role, message.content);
    }
    return current;
  }

  get hex(): string {
    return toHex(this.head);
  }
}

/** One journalled tool result, as the tool chain frames it. */
export interface ToolResultEntry {
  callId: string;
  toolName: string;
  step: U64Like;
  output: BytesLike;
  isError: boolean;
}

/** One journalled tool intent, as the tool chain frames it. */
export interface ToolIntentEntry {
  callId: string;
  toolName: string;
  step: U64Like;
}

/**
 * The running digest of a run's tool journal in journal order (`seq`), over results and
 * intents alike. Immutable, like {@link MessageChain}.
 */
export class ToolChain {
  static readonly EMPTY = new ToolChain(0, ZERO_DIGEST);

  private constructor(
    /** How many journal entries the chain covers. */
    readonly length: number,
    /** `t_length`, 32 raw bytes. */
    readonly head: Uint8Array,
  ) {}

  /** This chain with one more tool result. */
  pushResult(entry: ToolResultEntry): ToolChain {
    const leaf = new Framer()
      .lp(entry.callId)
      .lp(entry.toolName)
      .u64(entry.step, "step")
      .lp(entry.output)
      .raw(Uint8Array.of(entry.isError ? 1 : 0))
      .finish();
    return new ToolChain(this.length + 1, chain(this.head, leaf));
  }

  /** This chain with one more tool intent. */
  pushIntent(entry: ToolIntentEntry): ToolChain {
    const leaf = new Framer()
      .raw(Uint8Array.of(INTENT_LEAF_TAG))
      .lp(entry.callId)
      .lp(entry.toolName)
      .u64(entry.step, "step")
      .finish();
    return new ToolChain(this.length + 1, chain(this.head, leaf));
  }

  get hex(): string {
    return toHex(this.head);
  }
}

/** What checksum v1 covers besides the two chains. */
export interface CheckpointContent {
  runId: string;
  step: U64Like;
  contentType: string;
  state: BytesLike;
  /** A plain object or a Map; its order does not matter. */
  metadata?: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
}

/**
 * Metadata entries in ascending order of their keys' UTF-8 bytes, compared as unsigned bytes.
 * Not JavaScript's string order, which compares UTF-16 code units and differs for keys beyond
 * U+FFFF (U+FF61 sorts before U+1F600 in UTF-8, after it in UTF-16).
 */
export function sortedMetadata(
  metadata: Readonly<Record<string, string>> | ReadonlyMap<string, string> = {},
): Array<[Buffer, Buffer]> {
  const entries = metadata instanceof Map ? [...metadata.entries()] : Object.entries(metadata);
  return entries
    .map(([key, value]): [Buffer, Buffer] => [Buffer.from(key, "utf8"), Buffer.from(value, "utf8")])
    .sort(([a], [b]) => Buffer.compare(a, b));
}

/**
 * Checksum v1 of a checkpoint, as lower-case hex.
 *
 * `messages` and `tools` are the chains as they stand once the checkpoint is saved: the whole
 * message log including the checkpoint's new messages, and the journal entries the checkpoint
 * covers (every one journalled, or the first `SaveRequest.tool_count`).
 */
export function checkpointChecksum(
  content: CheckpointContent,
  messages: MessageChain = MessageChain.EMPTY,
  tools: ToolChain = ToolChain.EMPTY,
): string {
  const metadata = sortedMetadata(content.metadata);
  const framer = new Framer()
    .lp(DOMAIN_TAG)
    .lp(content.runId)
    .u64(content.step, "step")
    .lp(content.contentType)
    .lp(content.state)
    .u64(metadata.length);
  for (const [key, value] of metadata) {
    framer.lp(key).lp(value);
  }
  framer.u64(messages.length).raw(messages.head).u64(tools.length).raw(tools.head);
  return toHex(framer.finish());
}

/**
 * Idempotency key v1 of a tool call, lower-case hex: what a side-effecting tool receives so that
 * a retry of the same call never repeats its effect.
 */
export function idempotencyKey(tenant: string, runId: string, callId: string): string {
  return toHex(new Framer().lp(IDEMPOTENCY_TAG).lp(tenant).lp(runId).lp(callId).finish());
}
