"""The agent the worker tests run (`python -m checkpointd.worker worker_agent:agent`).

Six steps, each journalling a lookup appended to $AGENT_DIR/tools.log. Fault injection from the
environment: AGENT_HANG_AT=K writes $AGENT_DIR/hanging at step K and hangs until killed or
drained; AGENT_APPROVAL_AT=K asks a human at step K; AGENT_FATAL_AT=K raises a fatal error;
AGENT_TRANSIENT_AT=K raises a transient one at step K, every time; AGENT_EMAIL_AT=K sends an
email at step K through an intent (policy AGENT_EMAIL_POLICY, default retry_with_key) into
$AGENT_DIR/effects.log, honouring its key (to AGENT_EMAIL_TO, default ops@example.com), and with
AGENT_HANG_AFTER_EMAIL=1 hangs right after it, before its result is journalled.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agents import send_email

from checkpointd import Done, FatalError, InDoubtPolicy, StepContext

STEPS = 6


def _at(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value else None


async def agent(ctx: StepContext) -> Done | None:
    directory = Path(os.environ["AGENT_DIR"])

    def lookup(step: int) -> int:
        with (directory / "tools.log").open("a") as out:
            out.write(f"lookup@{step}\n")
        return step

    ctx.state["sum"] = ctx.state.get("sum", 0) + await ctx.call_tool("lookup", lookup, ctx.step)
    ctx.add_message("assistant", f"step {ctx.step} for {ctx.task}")
    if ctx.step == _at("AGENT_HANG_AT"):
        (directory / "hanging").write_text(f"{os.getpid()}\n")
        await asyncio.Event().wait()
    if ctx.step == _at("AGENT_FATAL_AT"):
        raise FatalError("the agent's configuration is wrong")
    if ctx.step == _at("AGENT_EMAIL_AT"):

        async def email(key: str, to: str) -> dict[str, str]:
            sent = send_email(directory / "effects.log", key, to)
            if os.environ.get("AGENT_HANG_AFTER_EMAIL"):
                (directory / "hanging").write_text(f"{os.getpid()}\n")
                await asyncio.Event().wait()
            return sent

        policy = InDoubtPolicy(os.environ.get("AGENT_EMAIL_POLICY", "retry_with_key"))
        to = os.environ.get("AGENT_EMAIL_TO", "ops@example.com")
        await ctx.call_side_effect("send_email", email, to, policy=policy)
    if ctx.step == _at("AGENT_TRANSIENT_AT"):
        with (directory / "attempts.log").open("a") as out:
            out.write(f"step {ctx.step}\n")
        raise ConnectionResetError("connection reset by peer")
    if ctx.step == _at("AGENT_APPROVAL_AT"):
        decision = ctx.request_approval("deploy", {"target": "prod"})
        ctx.state["approved_by"] = decision.decided_by if decision.approved else None
    if ctx.step == STEPS:
        return Done({"sum": ctx.state["sum"], "approved_by": ctx.state.get("approved_by")})
    return None
