/**
 * Deletes never wedge a thread: after every deletion CheckpointdSaver offers (`deleteForRuns` on
 * the thread's newest checkpoints, `prune` keep_latest and delete, `deleteThread`), a real
 * LangGraph.js graph compiled with the saver reads the thread back as what is left and invokes
 * it again, on SQLite and Postgres. The messages channel lives in the run's message log, which a
 * delete leaves longer than the newest checkpoint left: the case that wedged Python's saver
 * ("conflicting writers in a row"). A delete that matches nothing says so.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { ChannelVersions, Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";

import { CheckpointdSaver, type SaverLogger } from "../../src/langgraph/index.js";
import { BACKENDS, startServer, type TestServer } from "../server.js";

class Recorder implements SaverLogger {
  readonly lines: string[] = [];
  info(message: string): void { this.lines.push(`info ${message}`); }
  warn(message: string): void { this.lines.push(`warn ${message}`); }
  error(message: string): void { this.lines.push(`error ${message}`); }
}

/**
 * LangGraph.js 1.7 writes no `run_id` into checkpoint metadata (Python's LangGraph does, and
 * `deleteForRuns` deletes by it): this saver tags each put with the run it is told, as such a
 * writer would.
 */
class RunTagging extends CheckpointdSaver {
  run: string | undefined;

  override put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const tagged = this.run === undefined ? metadata : { ...metadata, run_id: this.run } as CheckpointMetadata;
    return super.put(config, checkpoint, tagged, newVersions);
  }
}

/** A chat graph: one node answering `echo: <last message>`. */
function chat(saver: CheckpointdSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", (state: typeof MessagesAnnotation.State) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)?.content)}`)] }))
    .addEdge(START, "reply")
    .compile({ checkpointer: saver });
}

const texts = (messages: BaseMessage[] | undefined) => (messages ?? []).map((m) => String(m.content));

for (const backend of BACKENDS) {
  describe(`deletes on a real graph (${backend})`, () => {
    let server: TestServer;
    const saverOf = (logger: SaverLogger = new Recorder()) => new CheckpointdSaver({ baseUrl: server.baseUrl, logger });

    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });

    test("deleteForRuns on the thread's newest checkpoints leaves it readable and writable", async () => {
      const config = { configurable: { thread_id: "delete-newest" } };
      const tagging = new RunTagging({ baseUrl: server.baseUrl, logger: new Recorder() });
      const graph = chat(tagging);
      tagging.run = "run-1";
      await graph.invoke({ messages: [new HumanMessage("one")] }, config);
      tagging.run = "run-2";
      await graph.invoke({ messages: [new HumanMessage("two")] }, config);
      assert.deepEqual(texts((await graph.getState(config)).values.messages), ["one", "echo: one", "two", "echo: two"]);

      // The newest run goes; the message log keeps its four messages, past what is left.
      const logger = new Recorder();
      await saverOf(logger).deleteForRuns(["run-2"]);
      assert.deepEqual(logger.lines, []);

      // A new process reads what is left, and writes on from it.
      const fresh = chat(saverOf());
      assert.deepEqual(texts((await fresh.getState(config)).values.messages), ["one", "echo: one"]);
      const next = await fresh.invoke({ messages: [new HumanMessage("three")] }, config);
      assert.deepEqual(texts(next.messages), ["one", "echo: one", "three", "echo: three"]);
      // ...and so does the saver that made the deleted checkpoints.
      tagging.run = "run-3";
      const again = await graph.invoke({ messages: [new HumanMessage("four")] }, config);
      assert.deepEqual(texts(again.messages), ["one", "echo: one", "three", "echo: three", "four", "echo: four"]);
      assert.deepEqual(texts((await chat(saverOf()).getState(config)).values.messages), texts(again.messages));
    });

    test("prune keep_latest and delete, and deleteThread, leave a thread that is written again", async () => {
      const saver = saverOf();
      const graph = chat(saver);
      const config = { configurable: { thread_id: "pruned" } };
      await graph.invoke({ messages: [new HumanMessage("one")] }, config);
      await graph.invoke({ messages: [new HumanMessage("two")] }, config);

      await saver.prune(["pruned"], "keep_latest");
      const left = [];
      for await (const tuple of saverOf().list(config)) left.push(tuple);
      assert.equal(left.length, 1);
      const after = await chat(saverOf()).invoke({ messages: [new HumanMessage("three")] }, config);
      assert.deepEqual(texts(after.messages), ["one", "echo: one", "two", "echo: two", "three", "echo: three"]);

      await saver.prune(["pruned"], "delete");
      assert.equal(await saverOf().getTuple(config), undefined);
      const restarted = await graph.invoke({ messages: [new HumanMessage("fresh")] }, config);
      assert.deepEqual(texts(restarted.messages), ["fresh", "echo: fresh"]);

      await saverOf().deleteThread("pruned");
      assert.equal(await saverOf().getTuple(config), undefined);
      const reborn = await graph.invoke({ messages: [new HumanMessage("again")] }, config);
      assert.deepEqual(texts(reborn.messages), ["again", "echo: again"]);
      assert.deepEqual(texts((await chat(saverOf()).getState(config)).values.messages), ["again", "echo: again"]);
    });

    test("a delete that matches nothing says so instead of returning silently", async () => {
      const graph = chat(saverOf());
      const config = { configurable: { thread_id: "kept" } };
      await graph.invoke({ messages: [new HumanMessage("one")] }, config);
      const logger = new Recorder();
      // A thread id where a LangGraph run id belongs, and the reverse.
      await saverOf(logger).deleteForRuns(["kept"]);
      await saverOf(logger).deleteThread("run-that-is-no-thread");
      await saverOf(logger).prune(["no-such-thread"]);
      assert.equal(logger.lines.length, 3, JSON.stringify(logger.lines));
      assert.match(logger.lines[0] ?? "", /^warn .*deleteForRuns\(\["kept"\]\) deleted nothing/);
      assert.match(logger.lines[1] ?? "", /^warn .*deleteThread\("run-that-is-no-thread"\) deleted nothing/);
      assert.match(logger.lines[2] ?? "", /^warn .*no thread "no-such-thread"/);
      assert.deepEqual(texts((await graph.getState(config)).values.messages), ["one", "echo: one"]);
    });
  });
}
