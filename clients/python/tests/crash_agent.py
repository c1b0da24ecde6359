"""A Python agent process for the SIGKILL tests: `python crash_agent.py TARGET RUN_ID DIR`.

Eight steps, checkpoints every 3. Each step journals a lookup; step 5 also sends an email
through an intent and its idempotency key. Every real tool execution is appended to
DIR/tools.log and every email actually sent to DIR/effects.log. With `--hang-after-email`,
the process writes DIR/hanging once step 5's email went out, before its result is journalled,
and hangs there until it is killed. On success it prints the run's result as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents import send_email  # noqa: E402

from checkpointd import CheckpointStore, Done, RecoverableAgent, StepContext  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("run_id")
    parser.add_argument("dir", type=Path)
    parser.add_argument("--hang-after-email", action="store_true")
    args = parser.parse_args()
    tools_log = args.dir / "tools.log"
    effects = args.dir / "effects.log"

    def lookup(step: int) -> int:
        with tools_log.open("a") as out:
            out.write(f"lookup@{step}\n")
        return step * 10

    async def email(key: str, to: str) -> dict:
        with tools_log.open("a") as out:
            out.write(f"send_email@{key}\n")
        sent = send_email(effects, key, to)
        if args.hang_after_email:
            (args.dir / "hanging").write_text("step 5 email sent, result not journalled\n")
            await asyncio.Event().wait()
        return sent

    async def agent(ctx: StepContext) -> Done | None:
        fact = await ctx.call_tool("lookup", lookup, ctx.step)
        ctx.state["total"] = ctx.state.get("total", 0) + fact
        ctx.add_message("assistant", f"step {ctx.step}")
        if ctx.step == 5:
            await ctx.call_side_effect("send_email", email, "ops@example.com")
        if ctx.step == 8:
            return Done({"total": ctx.state["total"]})
        return None

    async def run() -> dict:
        store = CheckpointStore(args.target)
        try:
            return await RecoverableAgent(agent, store, checkpoint_every_n=3).run_with_recovery(
                {"goal": "report"}, args.run_id
            )
        finally:
            await store.close()

    print(json.dumps(asyncio.run(run())))


if __name__ == "__main__":
    main()
