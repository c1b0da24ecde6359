/**
 * Real LangGraph.js graphs on CheckpointdSaver show what they show on LangGraph.js's MemorySaver,
 * on SQLite and Postgres, under LangGraph.js's default durability (no test passes one): a tool
 * loop on MessagesAnnotation, interrupt() and resume, a subgraph with its own namespace, Send
 * fan-out, state history with an updateState fork and a replay from an old checkpoint. A short
 * fan-out-then-approval graph runs REPEATS times on fresh threads, since a put/putWrites ordering
 * race under the default durability shows up in some runs only.
 */

import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { after, before, describe, test } from "node:test";

import { Command, MemorySaver } from "@langchain/langgraph";

import { createCheckpointClient } from "../../src/index.js";
import { CheckpointdSaver, parseRunId, threadPrefix } from "../../src/langgraph/index.js";
import { BACKENDS, startServer, type TestServer } from "../server.js";
import { Calls, fanOutApprovalRound, SCENARIOS, subgraphWithInterrupt, thread } from "./fixtures/graphs.js";

const REPEATS = 20;

for (const backend of BACKENDS) {
  describe(`LangGraph.js graphs on CheckpointdSaver versus MemorySaver (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ backend });
    });
    after(async () => {
      await server?.stop();
    });

    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      test(name, async () => {
        const expected = await scenario(new MemorySaver());
        const got = await scenario(new CheckpointdSaver({ baseUrl: server.baseUrl }));
        for (const key of Object.keys(expected)) assert.deepEqual(got[key], expected[key], `${name}: ${key} differs from MemorySaver`);
        assert.deepEqual(Object.keys(got), Object.keys(expected));
      });
    }

    test("a subgraph's checkpoints live in the run of its own namespace", async () => {
      const graph = subgraphWithInterrupt(new CheckpointdSaver({ baseUrl: server.baseUrl }), new Calls());
      const config = thread();
      await graph.invoke({ request: "refund" }, config);
      await graph.invoke(new Command({ resume: "approved" }), config);
      const threadId = String(config.configurable["thread_id"]);
      const { runs } = await createCheckpointClient({ baseUrl: server.baseUrl }).listRuns({ runIdPrefix: threadPrefix(threadId) });
      const namespaces = runs.map((run) => parseRunId(run.runId)?.ns ?? "?").sort();
      assert.equal(namespaces.length, 2, namespaces.join(", "));
      assert.equal(namespaces[0], "");
      assert.match(namespaces[1]!, /^review:[0-9a-f-]+$/);
    });

    test(`fan-out then approval holds over ${REPEATS} runs on fresh threads`, async () => {
      const expected = await fanOutApprovalRound(new MemorySaver());
      const saver = new CheckpointdSaver({ baseUrl: server.baseUrl });
      const failures: string[] = [];
      for (let attempt = 0; attempt < REPEATS; attempt++) {
        try {
          const got = await fanOutApprovalRound(saver);
          const wrong = Object.keys(expected).filter((key) => !isDeepStrictEqual(got[key], expected[key]));
          if (wrong.length > 0) failures.push(`run ${attempt}: ${wrong.join(", ")} differ from MemorySaver`);
        } catch (error) {
          failures.push(`run ${attempt}: ${String(error)}`);
        }
      }
      assert.deepEqual(failures, [], `${failures.length}/${REPEATS} runs failed`);
    });
  });
}
