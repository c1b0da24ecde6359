/**
 * Exactly-once tools in real LangGraph.js graphs on a real server (SQLite and Postgres), under
 * LangGraph.js's default durability: a completed call is replayed from the journal instead of
 * being made again (also when the graph replays its tool node from an older checkpoint, with new
 * checkpoint and task ids); an in-doubt call in a plain node is retried with its key, failed by
 * policy, or failed by a human answering `ask`; calls named by a key function take effect once
 * per key; a checkpointer other than checkpointd is refused.
 */

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

import { createCheckpointClient, type InDoubtPolicy } from "../../src/index.js";
import {
  CheckpointdSaver,
  exactlyOnce,
  idempotencyKey,
  IN_DOUBT_INTERRUPT,
  pct,
  runId,
  ToolCallInDoubt,
  type InDoubtQuestion,
} from "../../src/langgraph/index.js";
import { BACKENDS, startServer, type TestServer } from "../server.js";
import { buildEmailGraph, CALL_ID, lines } from "./fixtures/email.js";

const Ledger = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/**
 * One node that charges two cards through an exactly-once function; the attempt after charge
 * number n in `crashOn` throws, as a crash between effect and record would.
 */
function chargingGraph(saver: BaseCheckpointSaver, charges: string[], crashOn: Set<number>, policy: InDoubtPolicy) {
  const charge = exactlyOnce(function charge(card: string): string {
    charges.push(`${card} ${idempotencyKey()}`);
    if (crashOn.has(charges.length)) throw new Error("crashed after the charge");
    return `charged ${card}`;
  }, { policy });
  return new StateGraph(Ledger)
    .addNode("pay", async () => ({ log: [await charge("visa"), await charge("amex")] }))
    .addEdge(START, "pay")
    .compile({ checkpointer: saver });
}

test("idempotencyKey() outside an exactly-once call and an unknown policy are refused clearly", () => {
  assert.throws(() => idempotencyKey(), /only inside an exactlyOnce tool call/);
  assert.throws(() => exactlyOnce(() => 1, { policy: "sometimes" as InDoubtPolicy, name: "x" }), /unknown in-doubt policy "sometimes"/);
  assert.throws(() => exactlyOnce(() => 1), /needs a name for an anonymous function/);
});

test("a graph not checkpointed by checkpointd is refused with a clear error", async () => {
  const graph = chargingGraph(new MemorySaver(), [], new Set(), "retry_with_key");
  await assert.rejects(graph.invoke({ log: [] }, { configurable: { thread_id: "t" } }), (error: unknown) =>
    error instanceof TypeError && /CheckpointdSaver.*MemorySaver/.test(error.message));
});

for (const backend of BACKENDS) {
  describe(`exactly-once tools (${backend})`, () => {
    let server: TestServer;
    const saverOf = () => new CheckpointdSaver({ baseUrl: server.baseUrl });

    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });

    test("a completed ToolNode call is replayed when the graph reruns the node from an older checkpoint", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-email-"));
      const config = { configurable: { thread_id: "email/replay" } };
      const graph = buildEmailGraph(saverOf(), root, "fail", undefined);
      const first = await graph.invoke({ messages: [new HumanMessage("mail ada")] }, config);
      assert.equal(first.messages.at(-1)?.content, "done: sent to ada@example.com");
      assert.equal(lines(join(root, "attempts.log")).length, 1);

      // The tool node again from the checkpoint before it: new checkpoint and task ids, the same
      // call. The journalled result comes back; the provider is not called.
      let beforeTools;
      for await (const snapshot of graph.getStateHistory(config)) {
        if (snapshot.next.length === 1 && snapshot.next[0] === "tools") beforeTools = snapshot;
      }
      assert.ok(beforeTools, "a checkpoint before the tool node");
      const again = await graph.invoke(null, beforeTools.config);
      assert.equal(again.messages.at(-1)?.content, "done: sent to ada@example.com");
      const replayed = again.messages.at(-2);
      assert.ok(replayed instanceof ToolMessage);
      assert.equal(replayed.tool_call_id, CALL_ID);
      assert.equal(lines(join(root, "attempts.log")).length, 1);
    });

    test("a plain node replays its completed call and retries the in-doubt one with its key", async () => {
      const config = { configurable: { thread_id: "charge/retry" } };
      const charges: string[] = [];
      const graph = chargingGraph(saverOf(), charges, new Set([2]), "retry_with_key");
      await assert.rejects(graph.invoke({ log: [] }, config), /crashed after the charge/);
      const final = await graph.invoke(null, config);

      assert.deepEqual(final.log, ["charged visa", "charged amex"]);
      const [visa, amex, amexAgain] = charges as [string, string, string];
      assert.equal(charges.length, 3);
      assert.ok(visa.startsWith("visa ") && amex.startsWith("amex "));
      assert.equal(amexAgain, amex); // the in-doubt call, retried under the same key; visa replayed
      assert.notEqual(visa.split(" ")[1], amex.split(" ")[1]);
    });

    test("the fail policy throws an error naming the in-doubt call, never calling again", async () => {
      const thread = "charge/fail";
      const config = { configurable: { thread_id: thread } };
      const charges: string[] = [];
      const graph = chargingGraph(saverOf(), charges, new Set([1]), "fail");
      await assert.rejects(graph.invoke({ log: [] }, config), /crashed after the charge/);
      let raised: unknown;
      await graph.invoke(null, config).catch((error: unknown) => (raised = error));

      assert.ok(raised instanceof ToolCallInDoubt, String(raised));
      assert.equal(charges.length, 1); // never silently re-run
      const journal = await createCheckpointClient({ baseUrl: server.baseUrl }).getJournal({ runId: runId(thread, "") });
      assert.equal(journal.inDoubt.length, 1);
      const inDoubt = journal.inDoubt[0]!;
      assert.equal(raised.callId, inDoubt.callId);
      assert.ok(raised.message.includes(inDoubt.callId) && raised.message.includes("charge"));
      assert.equal(raised.idempotencyKey, charges[0]!.split(" ")[1]);
    });

    test("ask stops at an interrupt naming the call; answered fail, it throws without calling again", async () => {
      const config = { configurable: { thread_id: "charge/ask-fail" } };
      const charges: string[] = [];
      const graph = chargingGraph(saverOf(), charges, new Set([1]), "ask");
      await assert.rejects(graph.invoke({ log: [] }, config), /crashed after the charge/);
      const stopped = await graph.invoke(null, config) as { __interrupt__?: { value: InDoubtQuestion }[] };
      assert.equal(stopped.__interrupt__?.length, 1);
      const question = stopped.__interrupt__![0]!.value;
      assert.equal(question.type, IN_DOUBT_INTERRUPT);
      assert.equal(question.tool_name, "charge");
      assert.equal(question.idempotency_key, charges[0]!.split(" ")[1]);

      await assert.rejects(graph.invoke(new Command({ resume: "fail" }), config), (error: unknown) =>
        error instanceof ToolCallInDoubt && /a human chose to fail it/.test(error.message) && error.callId === question.call_id);
      assert.equal(charges.length, 1);
    });

    test("ask answered skip journals the human's result as the call's, without calling again", async () => {
      const config = { configurable: { thread_id: "charge/ask-skip" } };
      const charges: string[] = [];
      const graph = chargingGraph(saverOf(), charges, new Set([1]), "ask");
      await assert.rejects(graph.invoke({ log: [] }, config), /crashed after the charge/);
      await graph.invoke(null, config);
      const final = await graph.invoke(new Command({ resume: { action: "skip", result: "charged visa (checked)" } }), config);

      assert.deepEqual(final.log, ["charged visa (checked)", "charged amex"]);
      assert.deepEqual(charges.map((c) => c.split(" ")[0]), ["visa", "amex"]);
    });

    test("calls named by a key function take effect once per key across steps", async () => {
      const refunds: string[] = [];
      const refund = exactlyOnce(function refund(order: string): string {
        refunds.push(`${order} ${idempotencyKey()}`);
        return `refunded ${order}`;
      }, { key: (order) => order });
      const graph = new StateGraph(Ledger)
        .addNode("first", async () => ({ log: [await refund("order-7")] }))
        .addNode("second", async () => ({ log: [await refund("order-7"), await refund("order-8")] }))
        .addEdge(START, "first")
        .addEdge("first", "second")
        .compile({ checkpointer: saverOf() });
      const final = await graph.invoke({ log: [] }, { configurable: { thread_id: "refund/key" } });

      assert.deepEqual(final.log, ["refunded order-7", "refunded order-7", "refunded order-8"]);
      assert.deepEqual(refunds.map((r) => r.split(" ")[0]), ["order-7", "order-8"]);
    });
    test("a subgraph's calls are journalled in the thread's root run, named by the namespace without task ids", async () => {
      const thread = "charge/subgraph";
      const charges: string[] = [];
      const charge = exactlyOnce(function charge(card: string): string {
        charges.push(card);
        return `charged ${card}`;
      });
      const inner = new StateGraph(Ledger).addNode("pay", async () => ({ log: [await charge("visa")] }))
        .addEdge(START, "pay").compile();
      const graph = new StateGraph(Ledger).addNode("checkout", inner).addEdge(START, "checkout")
        .compile({ checkpointer: saverOf() });
      const final = await graph.invoke({ log: [] }, { configurable: { thread_id: thread } });

      assert.deepEqual(final.log, ["charged visa"]);
      const journal = await createCheckpointClient({ baseUrl: server.baseUrl }).getJournal({ runId: runId(thread, "") });
      const calls = journal.entries.filter((e) => e.toolName === "charge").map((e) => e.callId);
      assert.equal(calls.length, 2, calls.join(", ")); // its intent and its result
      assert.ok(calls.every((id) => id.startsWith(`lg.tool/n/${pct("checkout|pay")}/`)), calls.join(", "));
    });

    test("fail in a ToolNode with handleToolErrors: false stops the graph with ToolCallInDoubt", async () => {
      const config = { configurable: { thread_id: "email/toolnode-fail" } };
      let sends = 0;
      const send = exactlyOnce(tool(() => {
        sends += 1;
        if (sends === 1) throw new Error("crashed after the send");
        return "sent";
      }, { name: "send", description: "Send.", schema: z.object({}) }), { policy: "fail" });
      const ask = () => ({ messages: [new AIMessage({ content: "", tool_calls: [{ id: "call-1", name: "send", args: {}, type: "tool_call" }] })] });
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("model", ask)
        .addNode("tools", new ToolNode([send], { handleToolErrors: false }))
        .addEdge(START, "model")
        .addEdge("model", "tools")
        .addEdge("tools", END)
        .compile({ checkpointer: saverOf() });
      await assert.rejects(graph.invoke({ messages: [new HumanMessage("send")] }, config), /crashed after the send/);
      await assert.rejects(graph.invoke(null, config), (error: unknown) => error instanceof ToolCallInDoubt && error.toolName === "send");
      assert.equal(sends, 1);
    });
  });
}
