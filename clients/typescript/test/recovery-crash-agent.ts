/**
 * An agent process for the SIGKILL test: `node recovery-crash-agent.js BASE_URL RUN_ID DIR`.
 *
 * Eight steps, checkpoints every 3. Each step journals a lookup; step 5 also sends an email
 * through an intent and its idempotency key. Every real tool execution is appended to
 * DIR/tools.log and every email actually sent (once per key) to DIR/effects.log. With
 * `--hang-after-email`, the process writes DIR/hanging once step 5's email went out, before its
 * result is journalled, and hangs there until it is killed. On success it prints the result.
 */

import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { CheckpointStore, Done, RecoverableAgent, type StepContext } from "../src/index.js";

const [baseUrl, runId, dir, flag] = process.argv.slice(2);
if (baseUrl === undefined || runId === undefined || dir === undefined) {
  throw new Error("usage: recovery-crash-agent BASE_URL RUN_ID DIR [--hang-after-email]");
}
const toolsLog = join(dir, "tools.log");
const effects = join(dir, "effects.log");

/** Sends at most one email per idempotency key, as a tool that honours the key does. */
function sendEmail(key: string, to: string): { key: string; to: string } {
  const sent = existsSync(effects) ? readFileSync(effects, "utf8").split("\n").filter(Boolean) : [];
  if (!sent.some((line) => (JSON.parse(line) as { key: string }).key === key)) {
    appendFileSync(effects, `${JSON.stringify({ key, to })}\n`);
  }
  return { key, to };
}

async function agent(ctx: StepContext): Promise<Done | undefined> {
  // Arguments passed as Python's crash_agent.py passes them: a run crossing languages compares
  // the same arguments digests on every replay.
  const fact = await ctx.callTool("lookup", (step: number) => {
    appendFileSync(toolsLog, `lookup@${step}\n`);
    return step * 10;
  }, ctx.step);
  ctx.state["total"] = ((ctx.state["total"] as number | undefined) ?? 0) + fact;
  ctx.addMessage("assistant", `step ${ctx.step}`);
  if (ctx.step === 5) {
    await ctx.callSideEffect("send_email", async (key, to: string) => {
      appendFileSync(toolsLog, `send_email@${key}\n`);
      const sent = sendEmail(key, to);
      if (flag === "--hang-after-email") {
        writeFileSync(join(dir!, "hanging"), "step 5 email sent, result not journalled\n");
        await new Promise(() => setInterval(() => undefined, 1_000));
      }
      return sent;
    }, { args: ["ops@example.com"] });
  }
  return ctx.step === 8 ? new Done({ total: ctx.state["total"] }) : undefined;
}

const store = new CheckpointStore({ baseUrl });
const result = await new RecoverableAgent(agent, store, { checkpointEveryN: 3 }).runWithRecovery({ goal: "report" }, runId);
console.log(JSON.stringify(result));
