"""The seed example: an agent checkpointed every 3 steps crashes at step 5 and resumes from 3.

    python clients/python/examples/crash_and_resume.py --server 127.0.0.1:50051

Needs a running `checkpointd serve`. The agent's lookup tool is journalled, so the steps
re-run after the crash (4 and 5) reuse their recorded results instead of calling it again.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid

from checkpointd import CheckpointStore, Done, RecoverableAgent, StepContext


def lookup(step: int) -> dict:
    """Stands in for a real tool (a search, an API call): counted to show it runs once."""
    lookup.calls += 1  # type: ignore[attr-defined]
    return {"fact": f"fact #{step}"}


lookup.calls = 0  # type: ignore[attr-defined]
crashed = False


async def agent(ctx: StepContext) -> Done | None:
    global crashed
    found = await ctx.call_tool("lookup", lookup, ctx.step)
    ctx.add_message("assistant", f"step {ctx.step}: {found['fact']}")
    ctx.state["facts"] = ctx.state.get("facts", 0) + 1
    print(f"step {ctx.step} done")
    if ctx.step == 5 and not crashed:
        crashed = True
        print("step 5: simulated crash")
        raise ConnectionError("simulated crash at step 5")
    if ctx.step == 8:
        return Done({"facts": ctx.state["facts"], "messages": len(ctx.messages)})
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--run-id", default=f"py-quickstart-{uuid.uuid4().hex[:8]}")
    args = parser.parse_args()
    store = CheckpointStore(args.server)
    try:
        outcome = await RecoverableAgent(agent, store, checkpoint_every_n=3).run_with_recovery(
            {"goal": "collect 8 facts"}, args.run_id
        )
    finally:
        await store.close()
    print(f"run {args.run_id}: result {outcome['result']}")
    print(f"recovered_from_step={outcome['recovered_from_step']}")
    print(f"lookup calls: {lookup.calls} for 8 steps ({outcome['tools_replayed']} replayed from the journal)")


if __name__ == "__main__":
    asyncio.run(main())
