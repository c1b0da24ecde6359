// The reference example: an agent checkpointed every 3 steps crashes at step 5 and resumes from 3.
//
//     node crash-and-resume.mjs --server 127.0.0.1:50051 [--run-id ID]
//
// Needs a running `checkpointd serve` and `@checkpointd/client` installed. The agent's lookup
// tool is journalled, so the steps re-run after the crash (4 and 5) reuse their recorded
// results instead of calling it again.

import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";

import { CheckpointStore, Done, RecoverableAgent } from "@checkpointd/client";

let lookupCalls = 0;
let crashed = false;

/** Stands in for a real tool (a search, an API call): counted to show it runs once. */
function lookup(step) {
  lookupCalls += 1;
  return { fact: `fact #${step}` };
}

/** One step of the agent; `ctx.step` starts at 1. */
async function agent(ctx) {
  // The arguments after the function are journalled as a digest: a replay must match them.
  const found = await ctx.callTool("lookup", lookup, ctx.step);
  ctx.addMessage("assistant", `step ${ctx.step}: ${found.fact}`);
  ctx.state.facts = (ctx.state.facts ?? 0) + 1;
  console.log(`step ${ctx.step} done`);
  if (ctx.step === 5 && !crashed) {
    crashed = true;
    console.log("step 5: simulated crash");
    throw new Error("simulated crash at step 5 (connection reset)");
  }
  if (ctx.step === 8) return new Done({ facts: ctx.state.facts, messages: ctx.messages.length });
  return undefined;
}

const { values } = parseArgs({
  options: {
    server: { type: "string", default: "127.0.0.1:50051" },
    "run-id": { type: "string", default: `ts-quickstart-${randomBytes(4).toString("hex")}` },
  },
});
const runId = values["run-id"];
// `host:port` as the other clients take it, or a URL (`https://` for a TLS port).
const baseUrl = values.server.includes("://") ? values.server : `http://${values.server}`;

const store = new CheckpointStore({ baseUrl });
const outcome = await new RecoverableAgent(agent, store, { checkpointEveryN: 3 }).runWithRecovery(
  { goal: "collect 8 facts" },
  runId,
);
console.log(`run ${runId}: result ${JSON.stringify(outcome.result)}`);
console.log(`recoveredFromStep=${outcome.recoveredFromStep}`);
console.log(`lookup calls: ${lookupCalls} for 8 steps (${outcome.toolsReplayed} replayed from the journal)`);
