/**
 * The vitest file `run.ts` hands to vitest: every spec of LangGraph.js's checkpointer validation
 * suite, and its opt-in `getDeltaChannelHistory` conformance tests, against CheckpointdSaver on
 * the backend `run.ts` provides.
 */

import { deltaChannelHistoryTests, specTest } from "@langchain/langgraph-checkpoint-validation";
import { inject } from "vitest";

import type { Backend } from "../server.js";
import { checkpointdInitializer } from "./initializer.js";

declare module "vitest" {
  interface ProvidedContext {
    CHECKPOINTD_BACKEND: Backend;
  }
}

const initializer = checkpointdInitializer(inject("CHECKPOINTD_BACKEND"));
specTest(initializer);
deltaChannelHistoryTests(initializer);
