/**
 * A replay must match its call (issue 30, DESIGN contract 14) in a real LangGraph.js graph on
 * SQLite and Postgres. A scripted model emails someone under tool call id `call-1`; the graph is
 * then run again from the checkpoint before the model's turn (a time-travel fork; a fallback
 * past corrupt checkpoints re-runs the same way), and this time the model asks for another
 * recipient under the SAME id, as models that number their tool calls do. (Within one message
 * history LangGraph.js's ToolNode skips a tool call id already answered, so the reuse reaches the
 * tool only across such a re-run.) The exactly-once tool is not called again and the first
 * call's result is not replayed as the second's: the call fails with ReplayMismatch naming the
 * call id and both arguments digests (stopping the graph with `handleToolErrors: false`, or as
 * an error ToolMessage the model sees under ToolNode's default). The same arguments replay.
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
const BOB = { to: "bob@example.com", body: "your invoice" };

/** Asks for one email to `chosen.args` under id `call-1`, then closes quoting the result. */
function model(chosen: { args: typeof ADA }) {
  return (state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } => {
    const last = state.messages.at(-1);
    if (last instanceof ToolMessage) return { messages: [new AIMessage(`done: ${String(last.content)}`)] };
    return { messages: [new AIMessage({ content: "", tool_calls: [{ name: "send_email", args: chosen.args, id: "call-1", type: "tool_call" }] })] };
  };
}

function graphOf(saver: CheckpointdSaver, root: string, chosen: { args: typeof ADA }, handleToolErrors: boolean) {
  const sendEmail = exactlyOnce(tool(({ to }: { to: string; body: string }) => {
    appendFileSync(join(root, "outbox.log"), `${to}\n`); // every real send is a line
    return `sent to ${to}`;
  }, { name: "send_email", description: "Send an email.", schema: z.object({ to: z.string(), body: z.string() }) }));
  return new StateGraph(MessagesAnnotation)
    .addNode("model", model(chosen))
    .addNode("tools", new ToolNode([sendEmail], { handleToolErrors }))
    .addEdge(START, "model")
    .addConditionalEdges("model", toolsCondition, ["tools", END])
    .addEdge("tools", "model")
    .compile({ checkpointer: saver });
}

type Graph = ReturnType<typeof graphOf>;

/** The config of the thread's checkpoint whose next node is the model's first turn. */
async function beforeTheModel(graph: Graph, config: { configurable: { thread_id: string } }) {
  let found;
  for await (const snapshot of graph.getStateHistory(config)) {
    if (snapshot.next.length === 1 && snapshot.next[0] === "model" && !snapshot.values.messages?.some((m: BaseMessage) => m instanceof AIMessage)) found = snapshot;
  }
  assert.ok(found, "a checkpoint before the model's first turn");
  return found.config;
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

    /** Emails ada under call-1, then re-runs the thread from before the model with `second`. */
    async function rerun(thread: string, second: typeof ADA, handleToolErrors: boolean) {
      const root = mkdtempSync(join(tmpdir(), "cpd-mismatch-"));
      const chosen = { args: ADA };
      const graph = graphOf(saverOf(), root, chosen, handleToolErrors);
      const config = { configurable: { thread_id: thread } };
      const first = await graph.invoke({ messages: [new HumanMessage("mail someone")] }, config);
      assert.equal(first.messages.at(-1)?.content, "done: sent to ada@example.com");
      const fork = await beforeTheModel(graph, config);
      chosen.args = second;
      const outcome = await graph.invoke(null, fork).then((state) => ({ state }), (error: unknown) => ({ error }));
      return { root, ...outcome } as { root: string; state?: typeof first; error?: unknown };
    }

    test("other arguments under a journalled tool call id throw ReplayMismatch and the tool is not called", async () => {
      const { root, error } = await rerun("mismatch", BOB, false);
      assert.ok(error instanceof ReplayMismatch, String(error));
      assert.equal(error.callId, toolCallId("c", ["tools", "send_email", "call-1"]));
      assert.equal(error.storedDigest, argumentsDigest(ADA));
      assert.equal(error.requestDigest, argumentsDigest(BOB));
      assert.equal(error.reason, "ARGUMENTS_MISMATCH");
      assert.deepEqual(lines(join(root, "outbox.log")), ["ada@example.com"]);
    });

    test("under ToolNode's default the model gets an error ToolMessage, not the first call's result", async () => {
      const { root, state, error } = await rerun("mismatch-default", BOB, true);
      assert.equal(error, undefined);
      const result = state?.messages.filter((m): m is ToolMessage => m instanceof ToolMessage).at(-1);
      assert.equal(result?.status, "error");
      assert.match(String(result?.content), /ARGUMENTS_MISMATCH/);
      assert.doesNotMatch(String(state?.messages.at(-1)?.content), /sent to ada/);
      assert.deepEqual(lines(join(root, "outbox.log")), ["ada@example.com"]);
    });

    test("the same arguments under the same tool call id replay the journalled result", async () => {
      const { root, state, error } = await rerun("same-args", { body: ADA.body, to: ADA.to }, false);
      assert.equal(error, undefined);
      assert.equal(state?.messages.at(-1)?.content, "done: sent to ada@example.com");
      assert.deepEqual(lines(join(root, "outbox.log")), ["ada@example.com"]);
    });
  });
}
