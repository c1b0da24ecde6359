"""Deterministic test agents: N steps, a message and a journalled lookup per step, optional
side effects written to a file that honour their idempotency key, and fault injection."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from checkpointd import Done, FatalError, StepContext


class CountingAgent:
    """Counts every real tool execution, so a test can prove none ran twice."""

    def __init__(self, steps: int = 8, crash_at: int | None = None, fatal_at: int | None = None) -> None:
        self.steps = steps
        self.crash_at = crash_at
        self.fatal_at = fatal_at
        self.executions: Counter[str] = Counter()

    def lookup(self, step: int) -> dict[str, Any]:
        self.executions[f"lookup@{step}"] += 1
        return {"fact": step * 10}

    async def __call__(self, ctx: StepContext) -> Done | None:
        fact = await ctx.call_tool("lookup", self.lookup, ctx.step)
        ctx.state["total"] = ctx.state.get("total", 0) + fact["fact"]
        ctx.state["last_step"] = ctx.step
        ctx.add_message("assistant", f"step {ctx.step}: fact {fact['fact']}")
        if ctx.step == self.crash_at:
            self.crash_at = None  # crashes once; the resurrected run gets past it
            raise RuntimeError(f"simulated crash at step {ctx.step}")
        if ctx.step == self.fatal_at:
            raise FatalError(f"stopped at step {ctx.step}")
        if ctx.step >= self.steps:
            return Done({"total": ctx.state["total"], "messages": len(ctx.messages)})
        return None


def send_email(effects: Path, key: str, to: str) -> dict[str, Any]:
    """A side effect that honours its idempotency key: a key already in the file sends nothing."""
    seen = (
        {json.loads(line)["key"] for line in effects.read_text().splitlines()} if effects.exists() else set()
    )
    if key not in seen:
        with effects.open("a") as out:
            out.write(json.dumps({"key": key, "to": to}) + "\n")
    return {"sent_to": to}
