/**
 * A run's tool journal as the scenarios hold it: results and intents in one `seq` order, folded
 * into checksum v1's tool chain (every entry, or the first `toolCount`).
 */

import { ToolChain, type ToolIntent, type ToolResult } from "../src/index.js";

/** One journal entry, a result or an intent, by its position in the journal. */
export type JournalEntry = { kind: "result"; entry: ToolResult } | { kind: "intent"; entry: ToolIntent };

/** Results and intents in journal order. */
export function journalOf(results: readonly ToolResult[], intents: readonly ToolIntent[]): JournalEntry[] {
  return [
    ...results.map((entry): JournalEntry => ({ kind: "result", entry })),
    ...intents.map((entry): JournalEntry => ({ kind: "intent", entry })),
  ].sort(bySeq);
}

function bySeq(a: JournalEntry, b: JournalEntry): number {
  return a.entry.seq < b.entry.seq ? -1 : a.entry.seq > b.entry.seq ? 1 : 0;
}

/** The tool chain over the journal's entries, in `seq` order, up to `toolCount` (all when undefined). */
export function toolChainOf(journal: readonly JournalEntry[], toolCount?: bigint): ToolChain {
  let chain = ToolChain.EMPTY;
  for (const item of [...journal].sort(bySeq)) {
    if (toolCount !== undefined && item.entry.seq > toolCount) break;
    chain = item.kind === "result" ? chain.pushResult(item.entry) : chain.pushIntent(item.entry);
  }
  return chain;
}
