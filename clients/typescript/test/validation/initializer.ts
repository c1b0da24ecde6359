/**
 * The `CheckpointerTestInitializer` of LangGraph.js's validation suite for CheckpointdSaver: one
 * real `checkpointd serve` for the whole suite (SQLite or Postgres), and each checkpointer on a
 * tenant of its own, so instances never see each other's threads (the suite's isolation rule)
 * without restarting the server. `run.ts` drives it (the suite's own `validate-checkpointer` CLI
 * fails before running a test in the pinned 1.1.1, whatever the initializer: see the README).
 */

import { randomUUID } from "node:crypto";

import type { CheckpointSaverTestInitializer } from "@langchain/langgraph-checkpoint-validation";

import { CheckpointdSaver } from "../../src/langgraph/index.js";
import { startServer, type Backend, type TestServer } from "../server.js";

export function checkpointdInitializer(backend: Backend): CheckpointSaverTestInitializer<CheckpointdSaver> {
  let server: TestServer | undefined;
  return {
    checkpointerName: `CheckpointdSaver (${backend})`,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      server = await startServer({ backend });
    },
    async afterAll() {
      await server?.stop();
    },
    createCheckpointer() {
      if (server === undefined) throw new Error("the checkpointd server did not start (see beforeAll)");
      return new CheckpointdSaver({ baseUrl: server.baseUrl, tenant: `validation-${randomUUID()}` });
    },
  };
}

export default checkpointdInitializer(process.env["CHECKPOINTD_VALIDATION_BACKEND"] === "postgres" ? "postgres" : "sqlite");
