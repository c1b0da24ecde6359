"""What a step sees: its state and messages, journalled tools, the LLM hook and approvals.

A step must be deterministic given the state, the messages and the journalled tool results, so
that re-executing it after a rewind makes the same tool calls and reuses their results.
"""

from __future__ import annotations

import enum
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from . import _codec
from .classify import ApprovalRequired, Decision, FatalError
from .digest import arguments_digest, check_replay
from .store import InDoubt

if TYPE_CHECKING:
    from ._session import Session

log = logging.getLogger("checkpointd")


class InDoubtPolicy(enum.Enum):
    """What to do with a side-effecting call whose intent was journalled but no result (the
    process died between). Never a silent re-run."""

    #: Run it again with the same idempotency key: safe because the tool honours the key.
    RETRY_WITH_KEY = "retry_with_key"
    #: Park the run for a human (approval action `in_doubt CALL_ID`); approved, it re-runs.
    ASK = "ask"
    #: Fail the run fatally, naming the call.
    FAIL = "fail"


def in_doubt_action(call_id: str) -> str:
    """The approval action that asks a human about an in-doubt call."""
    return f"in_doubt {call_id}"


def settle_in_doubt(call: InDoubt, policy: InDoubtPolicy, approved: bool | None) -> None:
    """Returns when the call may re-run with its key; raises otherwise. A corrupt entry always
    goes to a human: only an operator's repair can settle its journal."""
    if call.corrupt:
        policy = InDoubtPolicy.ASK
    if policy is InDoubtPolicy.RETRY_WITH_KEY or (policy is InDoubtPolicy.ASK and approved):
        return
    if policy is InDoubtPolicy.ASK and approved is None:
        raise ApprovalRequired(
            in_doubt_action(call.call_id),
            {
                "call_id": call.call_id,
                "tool_name": call.tool_name,
                "step": call.step,
                "idempotency_key": call.idempotency_key,
                "corrupt": call.corrupt,
            },
        )
    if policy is InDoubtPolicy.ASK:
        raise FatalError(f"tool call {call.call_id} is in doubt and a human rejected running it again")
    raise FatalError(
        f"tool call {call.call_id} ({call.tool_name}) is in doubt: its intent was journalled "
        "but no result; the tool's policy is fail"
    )


async def _invoke(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    value = fn(*args, **kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


def _digest(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The arguments digest of a recovery-loop call: of the list of positional arguments, as
    the TypeScript and Go packages digest theirs (so a run may cross languages), or of
    `{"args": [...], "kwargs": {...}}` when there are keyword arguments. A call given no
    arguments (a closure over what it uses) has none: there is nothing to compare."""
    if kwargs:
        return arguments_digest({"args": list(args), "kwargs": kwargs})
    return arguments_digest(list(args)) if args else ""


class StepContext:
    """The context of one step of one run. `state` and `messages` are the live values: change
    them in place (or assign `ctx.state`); a step that fails leaves no trace in them."""

    def __init__(self, session: Session, step: int) -> None:
        self._session = session
        self.step = step
        self._start = (
            (json.loads(json.dumps(session.state)), len(session.messages))
            if session.strategy.before_llm
            else None
        )
        self._call_indexes: dict[str, int] = {}
        self.executed_tools = False

    @property
    def run_id(self) -> str:
        return self._session.run_id

    @property
    def task(self) -> Any:
        """The task's input: what `run_with_recovery` was given, or the queued task's input
        (decoded as JSON when it is JSON)."""
        return self._session.task

    @property
    def state(self) -> dict[str, Any]:
        return self._session.state

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        self._session.state = value

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The whole message history, restored messages included; append only."""
        return self._session.messages

    def add_message(self, role: str, content: Any, **fields: Any) -> None:
        self._session.messages.append({"role": role, "content": content, **fields})

    async def call_tool(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Calls a tool and journals its result: a result journalled by this or an earlier
        life of the run is returned without calling `fn`; otherwise `fn(*args, **kwargs)`
        (sync or async) runs and its JSON-serialisable result is journalled before it is
        returned. The call id is `step-{step}/{name}/{n}` for the n-th call of `name` in the
        step. No intent is journalled, so a crash after `fn` ran and before its result was
        journalled runs it once more on recovery: side effects belong in `call_side_effect`.

        A journalled result is replayed only for the same arguments: the call's arguments
        digest (see `_digest`) is journalled with it, and a call whose arguments differ raises
        `ReplayMismatch` without calling `fn`."""
        call_id = self._next_call_id(name)
        digest = _digest(args, kwargs)
        replayed = self._replay(call_id, digest)
        if replayed is not None:
            return replayed[0]
        output = await _invoke(fn, *args, **kwargs)
        return await self._record(name, call_id, output, digest)

    async def call_side_effect(
        self,
        name: str,
        fn: Callable[..., Any],
        *args: Any,
        policy: InDoubtPolicy = InDoubtPolicy.RETRY_WITH_KEY,
        **kwargs: Any,
    ) -> Any:
        """Calls a side-effecting tool at most once, even across a crash between its effect and
        its journalled result: an intent is journalled first and `fn(key, *args, **kwargs)`
        receives the call's idempotency key, which it must honour (a key seen before repeats no
        effect). A call left in doubt by a crash is settled by `policy`. As with `call_tool`,
        a journalled result or intent is reused only for the same arguments (the key is not
        one of them): other arguments raise `ReplayMismatch` without calling `fn`."""
        call_id = self._next_call_id(name)
        digest = _digest(args, kwargs)
        replayed = self._replay(call_id, digest)
        if replayed is not None:
            return replayed[0]
        session = self._session
        store = session.store
        in_doubt = store.in_doubt(session.run_id, call_id)
        if in_doubt is not None:
            intent_seen = store.journalled_intent(session.run_id, call_id)
            if intent_seen is not None:
                check_replay(call_id, intent_seen.arguments_digest, digest)
            key = self._settle(in_doubt, policy)
        else:
            reply = await store.record_tool_intent(
                session.run_id, call_id, name, self.step, arguments_digest=digest
            )
            if reply.HasField("result"):
                # Completed by another life of the run since this one resumed.
                check_replay(call_id, reply.result.arguments_digest, digest)
                return _codec.decode_output(reply.result.output)
            intent = reply.intent
            if reply.already_recorded:
                check_replay(call_id, intent.arguments_digest, digest)
                key = self._settle(
                    InDoubt(intent.call_id, intent.tool_name, intent.step, intent.idempotency_key, False),
                    policy,
                )
            else:
                key = intent.idempotency_key
        output = await _invoke(fn, key, *args, **kwargs)
        return await self._record(name, call_id, output, digest)

    def _settle(self, call: InDoubt, policy: InDoubtPolicy) -> str:
        decision = self._session.decision
        approved = (
            decision.approved
            if decision is not None and decision.action == in_doubt_action(call.call_id)
            else None
        )
        settle_in_doubt(call, policy, approved)
        log.warning(
            "re-running an in-doubt tool call with its idempotency key run_id=%s call_id=%s policy=%s",
            self.run_id,
            call.call_id,
            policy.value,
        )
        return call.idempotency_key

    def _next_call_id(self, name: str) -> str:
        index = self._call_indexes.get(name, 0)
        self._call_indexes[name] = index + 1
        return f"step-{self.step}/{name}/{index}"

    def _replay(self, call_id: str, digest: str) -> tuple[Any] | None:
        recorded = self._session.store.journalled(self._session.run_id, call_id)
        if recorded is None:
            return None
        check_replay(call_id, recorded.arguments_digest, digest)
        self._session.stats.tools_replayed += 1
        log.info("tool result replayed from the journal run_id=%s call_id=%s", self.run_id, call_id)
        return (_codec.decode_output(recorded.output),)

    async def _record(self, name: str, call_id: str, output: Any, digest: str) -> Any:
        recorded = await self._session.store.record_tool_result(
            self._session.run_id,
            call_id,
            name,
            self.step,
            _codec.encode_output(output),
            arguments_digest=digest,
        )
        self._session.stats.tools_executed += 1
        self.executed_tools = True
        return _codec.decode_output(recorded.output)

    async def llm(self, fn: Callable[..., Awaitable[Any] | Any], *args: Any, **kwargs: Any) -> Any:
        """Wraps an LLM call. With the `before_llm` strategy the state this step started from
        is checkpointed first, so a crash during a long model call loses nothing before it."""
        if self._start is not None:
            state, message_count = self._start
            self._start = None
            if self.step > 1:
                await self._session.save(self.step - 1, state, message_count)
        return await _invoke(fn, *args, **kwargs)

    def request_approval(self, action: str, details: Any = None) -> Decision:
        """Asks a human. Returns the decision once one was made for `action`; until then the
        step stops, the run is checkpointed and (under the worker) its task is parked in
        `input_required`; the step re-runs with the decision."""
        decision = self._session.decision
        if decision is not None and decision.action == action:
            return decision
        raise ApprovalRequired(action, details)
