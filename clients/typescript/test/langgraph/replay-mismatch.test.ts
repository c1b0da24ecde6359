/**
 * A replay must match its call (issue 30, DESIGN contract 14) in a real LangGraph.js graph on
 * SQLite and Postgres: a scripted model reuses its tool call id with other arguments. The
 * exactly-once tool is not called again and the first call's result is not replayed as the
 * second's: the call fails with ReplayMismatch naming the call id and both arguments digests
 * (stopping the graph with `handleToolErrors: false`, or as an error ToolMessage the model sees
 * under ToolNode's default). The same id with the same arguments still replays.
 */

import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

import { argumentsDigest } from "../../src/index.js";
import { CheckpointdSaver, exactlyOnce, ReplayMismatch, toolCallId } from "../../src/langgraph/index.js";
import { BACKENDS, startServer, type TestServer } from "../server.js";
import { lines } from "./fixtures/email.js";

const ADA = { to: "ada@example.com", body: "your invoice" };

/** Emails `recipients[0]`, then each next one under the SAME tool call id, then closes. */
function reusingModel(recipients: Array<typeof ADA>) {
  return (state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } => {
    // Counted by the model's own calls: a replayed ToolMessage keeps its message id, so the
    // messages reducer puts it in place of the first one instead of appending it.
    const asked = state.messages.filter((m) => m instanceof AIMessage && (m.tool_calls?.length ?? 0) > 0).length;
    const args = recipients[asked];
    const last = state.messages.filter((m) => m instanceof ToolMessage).at(-1);
    if (args === undefined) return { messages: [new AIMessage(`done: ${String(last?.content)}`)] };
    return { messages: [new AIMessage({ content: "", tool_calls: [{ name: "send_email", args, id: "call-1", type: "tool_call" }] })] };
  };
}

function graphOf(saver: CheckpointdSaver, root: string, recipients: Array<typeof ADA>, handleToolErrors: boolean) {
  const sendEmail = exactlyOnce(tool(({ to }: { to: string; body: string }) => {
    appendFileSync(join(root, "outbox.log"), `${to}\n`); // every real send is a line
    return `sent to ${to}`;
  }, { name: "send_email", description: "Send an email.", schema: z.object({ to: z.string(), body: z.string() }) }));
  return new StateGraph(MessagesAnnotation)
    .addNode("model", reusingModel(recipients))
    .addNode("tools", new ToolNode([sendEmail], { handleToolErrors }))
    .addEdge(START, "model")
    .addConditionalEdges("model", toolsCondition, ["tools", END])
    .addEdge("tools", "model")
    .compile({ checkpointer: saver });
}

for (const backend of BACKENDS) {
  describe(`a model reusing a tool call id (${backend})`, () => {
    let server: TestServer;
    const saverOf = () => new CheckpointdSaver({ baseUrl: server.baseUrl });
    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });

    test("other arguments under a journalled tool call id throw ReplayMismatch and the tool is not called", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-mismatch-"));
      const bob = { ...ADA, to: "bob@example.com" };
      const graph = graphOf(saverOf(), root, [ADA, bob], false);
      await assert.rejects(graph.invoke({ messages: [new HumanMessage("mail ada, then bob")] }, { configurable: { thread_id: "mismatch" } }),
        (error: unknown) => {
          assert.ok(error instanceof ReplayMismatch, String(error));
          assert.equal(error.callId, toolCallId("c", ["tools", "send_email", "call-1"]));
          assert.equal(error.storedDigest, argumentsDigest(ADA));
          assert.equal(error.requestDigest, argumentsDigest(bob));
          return true;
        });
      assert.deepEqual(lines(join(root, "outbox.log")), ["ada@example.com"]);
    });

    test("under ToolNode's default the model gets an error ToolMessage, not the first call's result", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-mismatch-"));
      const graph = graphOf(saverOf(), root, [ADA, { ...ADA, to: "bob@example.com" }], true);
      const final = await graph.invoke({ messages: [new HumanMessage("mail ada, then bob")] }, { configurable: { thread_id: "mismatch-default" } });
      const results = final.messages.filter((m): m is ToolMessage => m instanceof ToolMessage);
      assert.equal(results.length, 2);
      assert.equal(results[0]?.content, "sent to ada@example.com");
      assert.equal(results[1]?.status, "error");
      assert.match(String(results[1]?.content), /ARGUMENTS_MISMATCH/);
      assert.deepEqual(lines(join(root, "outbox.log")), ["ada@example.com"]);
    });

    test("the same arguments under the same tool call id replay the journalled result", async () => {
      const root = mkdtempSync(join(tmpdir(), "cpd-mismatch-"));
      const final = await graphOf(saverOf(), root, [ADA, { body: ADA.body, to: ADA.to }], false)
        .invoke({ messages: [new HumanMessage("mail ada twice")] }, { configurable: { thread_id: "same-args" } });
      assert.equal(final.messages.at(-1)?.content, "done: sent to ada@example.com");
      assert.deepEqual(lines(join(root, "outbox.log")), ["ada@example.com"]);
    });
  });
}
