"""Exactly-once side-effecting tools for LangGraph graphs checkpointed by `CheckpointdSaver`.

    @exactly_once(policy="retry_with_key")
    @tool
    def send_email(to: str, body: str) -> str:
        return mailer.send(to, body, idempotency_key=idempotency_key())

    graph = builder.add_node("tools", ToolNode([send_email]))...

A wrapped call journals an intent in the thread's checkpointd run before it runs, hands the
tool the call's idempotency key (protocol-derived from tenant, run and call id; read it with
`idempotency_key()`), and journals its result after. A call whose result is journalled is
never made again: a re-run (after a crash, an interrupt, a node retry or a fallback past a
corrupt checkpoint) returns the journalled result. A call whose intent is journalled but not
its result is *in doubt* (the process died between the effect and the record) and is settled
by the tool's policy:

- `retry_with_key`: called again with the same key (safe: the tool honours the key);
- `fail`: `ToolCallInDoubt` is raised, naming the call;
- `ask`: LangGraph's `interrupt()` is raised with a payload naming the call (see
  `IN_DOUBT_INTERRUPT`); resume the graph with `Command(resume=...)`: `"retry"` calls again
  with the key, `{"action": "skip", "result": value}` journals `value` as the call's result
  without calling, `"fail"` raises `ToolCallInDoubt`.

Call ids are deterministic across a crash and across a fallback to an older checkpoint (they
never contain LangGraph's checkpoint or task ids, which a replay renews):

- a model's tool call (a `ToolNode`): (node path, tool, the tool call's id). Providers make
  tool call ids unique; a scripted model must too, or its later calls replay earlier results.
- without one (a plain node): (node path, LangGraph step, task path, tool, n) for the n-th
  call of the tool in the task attempt. Steps replay unchanged after a crash or a fallback, but
  time travel (invoking from a past checkpoint) forks at a new step, so these calls run again
  there; the node must make its calls in the same order each time it runs.
- with `key=`: (graph path, tool, your key), one call per key in the thread.

The journal is the run of the thread's root namespace, so subgraph tools are covered too (a
subgraph's own runs are named by task ids, which a fallback in the parent renews).
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.types import interrupt

from ..classify import FatalError
from ..context import InDoubtPolicy, in_doubt_action
from ..digest import arguments_digest
from . import _naming, _tooljournal
from ._tooljournal import Begun, ToolJournal
from .saver import CheckpointdSaver

log = logging.getLogger("checkpointd")

#: The `type` of the interrupt value an `ask` tool raises for an in-doubt call.
IN_DOUBT_INTERRUPT = "checkpointd.in_doubt"

_CHECKPOINTER = "__pregel_checkpointer"  # langgraph's CONFIG_KEY_CHECKPOINTER
_SCRATCHPAD = "__pregel_scratchpad"  # one per task attempt; a retry gets a new one
_NS_SEP, _NS_END = "|", ":"

Policy = InDoubtPolicy | Literal["retry_with_key", "fail", "ask"]
KeyFunction = Callable[[dict[str, Any]], str]
_F = TypeVar("_F", bound=Callable[..., Any])

_current: ContextVar[Begun | None] = ContextVar("checkpointd_tool_call", default=None)


class ToolCallInDoubt(FatalError):
    """An in-doubt call (intent journalled, no result) that its policy, or a human, failed.

    Settle it for good with `RepairJournal` (mark it done with an output, so a re-run replays
    that output) or by resuming an `ask` with `{"action": "skip", "result": ...}`."""

    def __init__(self, call: Begun, why: str) -> None:
        super().__init__(
            f"tool call {call.call_id} ({call.tool_name}) in run {call.run_id} is in doubt: its "
            f"intent was journalled but no result, so its effect may have happened; {why}"
        )
        self.call_id = call.call_id
        self.tool_name = call.tool_name
        self.run_id = call.run_id
        self.idempotency_key = call.idempotency_key


def idempotency_key() -> str:
    """The idempotency key of the exactly-once call running now. A tool passes it to the
    system it acts on (a mail API's idempotency key, a unique request id) and must not
    repeat its effect for a key it has seen: an in-doubt call is retried with the same key."""
    call = _current.get()
    if call is None:
        raise RuntimeError("idempotency_key() is available only inside an @exactly_once tool call")
    return call.idempotency_key


def exactly_once(
    target: Any = None,
    *,
    policy: Policy = InDoubtPolicy.RETRY_WITH_KEY,
    key: KeyFunction | None = None,
    saver: CheckpointdSaver | None = None,
) -> Any:
    """Makes a side-effecting tool run at most once per call id (see the module docstring).

    `target` is a LangChain tool (put `@exactly_once` above `@tool`; the result is a tool for
    `ToolNode` or `bind_tools`) or a plain function called from a node. `key` maps the call's
    arguments to a string naming the effect (an order id): calls with the same key in one
    thread share one journal entry. `saver` defaults to the graph's checkpointer."""
    chosen = InDoubtPolicy(policy)

    def wrap(fn: Any) -> Any:
        if isinstance(fn, BaseTool):
            return ExactlyOnceTool.wrapping(fn, policy=chosen, key=key, saver=saver)
        if callable(fn):
            return _wrap_function(fn, chosen, key, saver)
        raise TypeError(f"@exactly_once wraps a LangChain tool or a function, not {fn!r}")

    return wrap(target) if target is not None else wrap


# -- where a call happens ------------------------------------------------------------------


@dataclass
class _Site:
    journal: ToolJournal
    task_ns: str  # the task's namespace without task ids: "tools", "outer|tools"
    graph_ns: str
    step: int
    path: str
    scratchpad: Any


def _recast(ns: str) -> str:
    """A namespace without LangGraph's task ids (which change when a graph replays from an
    older checkpoint)."""
    return _NS_SEP.join(part.split(_NS_END)[0] for part in ns.split(_NS_SEP) if part)


def _site(config: RunnableConfig, saver: CheckpointdSaver | None) -> _Site:
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    chosen = saver if saver is not None else configurable.get(_CHECKPOINTER)
    if chosen is None:
        raise RuntimeError(
            "an @exactly_once tool runs inside a LangGraph graph compiled with "
            "checkpointer=CheckpointdSaver(...) (or is given saver=...)"
        )
    if not isinstance(chosen, CheckpointdSaver):
        raise TypeError(
            f"an @exactly_once tool journals through CheckpointdSaver, but the graph's "
            f"checkpointer is {type(chosen).__name__}; pass saver=CheckpointdSaver(...)"
        )
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise RuntimeError("an @exactly_once tool needs the graph's thread_id in its config")
    task_ns = _recast(str(configurable.get("checkpoint_ns") or ""))
    scratchpad = configurable.get(_SCRATCHPAD)
    step = metadata.get("langgraph_step", getattr(scratchpad, "step", 0))
    path = metadata.get("langgraph_path", ())
    return _Site(
        journal=ToolJournal(chosen, _naming.run_id(str(thread_id), "")),
        task_ns=task_ns,
        graph_ns=task_ns.rpartition(_NS_SEP)[0],
        step=max(int(step), 0),
        path="/".join(str(p) for p in path) if isinstance(path, (tuple, list)) else str(path),
        scratchpad=scratchpad,
    )


class _Counters:
    """Per task attempt: how many calls of each tool it made (for the n in call ids). Keyed
    by the attempt's scratchpad, held so its id is not reused while counted."""

    def __init__(self, capacity: int = 1024) -> None:
        self._lock = threading.Lock()
        self._by_attempt: OrderedDict[int, tuple[Any, dict[str, int]]] = OrderedDict()
        self._capacity = capacity

    def next(self, scratchpad: Any, tool: str) -> int:
        with self._lock:
            entry = self._by_attempt.get(id(scratchpad))
            if entry is None or entry[0] is not scratchpad:
                entry = (scratchpad, {})
                self._by_attempt[id(scratchpad)] = entry
            self._by_attempt.move_to_end(id(scratchpad))
            while len(self._by_attempt) > self._capacity:
                self._by_attempt.popitem(last=False)
            index = entry[1].get(tool, 0)
            entry[1][tool] = index + 1
            return index


_counters = _Counters()


def _call_id(
    site: _Site, tool: str, args: dict[str, Any], tool_call_id: str | None, key: KeyFunction | None
) -> str:
    if key is not None:
        return _tooljournal.for_key(site.graph_ns, tool, str(key(args)))
    if tool_call_id:
        return _tooljournal.for_tool_call(site.task_ns, tool, tool_call_id)
    if site.scratchpad is None:
        raise RuntimeError(f"@exactly_once tool {tool} is called outside a LangGraph task")
    return _tooljournal.for_index(
        site.task_ns, site.step, site.path, tool, _counters.next(site.scratchpad, tool)
    )


def _digest(args: dict[str, Any], key: KeyFunction | None) -> str:
    """The arguments digest of a call (see `checkpointd.digest`): of its arguments by name.
    A call named by the user's `key` has none: the key says which effect it is, and calls that
    share it share one journal entry whatever their other arguments (documented on `key`)."""
    return "" if key is not None else arguments_digest(args)


def _model_arguments(tool: BaseTool, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments the model chose: `ToolNode` adds injected ones (state, store, the tool
    call id, runtime) to a call's args, and they differ from one run of the node to the next."""
    try:
        schema: Any = tool.tool_call_schema
        names = set(schema.model_fields) if hasattr(schema, "model_fields") else set(schema["properties"])
    except Exception:  # noqa: BLE001 - a tool without a readable schema: all its arguments
        return args
    return {k: v for k, v in args.items() if k in names}


# -- settling an in-doubt call -------------------------------------------------------------


@dataclass
class _Skip:
    result: Any


def _settle(call: Begun, policy: InDoubtPolicy) -> _Skip | None:
    """None when the call may run again with its key; a `_Skip` when a human gave its result;
    raises otherwise."""
    if policy is InDoubtPolicy.FAIL:
        raise ToolCallInDoubt(call, "the tool's policy is fail")
    if policy is InDoubtPolicy.ASK:
        answer = interrupt(
            {
                "type": IN_DOUBT_INTERRUPT,
                "action": in_doubt_action(call.call_id),
                "call_id": call.call_id,
                "tool_name": call.tool_name,
                "run_id": call.run_id,
                "idempotency_key": call.idempotency_key,
                "message": (
                    f"tool call {call.call_id} ({call.tool_name}) is in doubt: it may or may not "
                    "have taken effect. Resume with 'retry', 'fail' or "
                    "{'action': 'skip', 'result': ...}."
                ),
            }
        )
        decision = _decision(answer)
        if decision == "fail":
            raise ToolCallInDoubt(call, "a human chose to fail it")
        if decision == "skip":
            return _Skip(answer.get("result"))
    log.warning(
        "re-running an in-doubt tool call with its idempotency key run_id=%s call_id=%s policy=%s",
        call.run_id,
        call.call_id,
        policy.value,
    )
    return None


def _decision(answer: Any) -> str:
    action = answer.get("action") if isinstance(answer, dict) else answer
    if action is True:
        action = "retry"
    if action is False:
        action = "fail"
    if action not in ("retry", "skip", "fail"):
        raise ValueError(
            f"resume value {answer!r} for an in-doubt tool call: expected 'retry', 'fail' or "
            "{'action': 'skip', 'result': ...}"
        )
    return cast(str, action)


def _replayed(call: Begun) -> Any:
    assert call.replayed is not None
    log.info("tool result replayed from the journal run_id=%s call_id=%s", call.run_id, call.call_id)
    return call.replayed[0]


def _is_error(value: Any) -> bool:
    return isinstance(value, ToolMessage) and value.status == "error"


def _as_is(value: Any) -> Any:
    return value


def _run_once(
    site: _Site,
    call_id: str,
    tool: str,
    policy: InDoubtPolicy,
    run: Callable[[], Any],
    skipped: Callable[[Any], Any] = _as_is,
    digest: str = "",
) -> Any:
    """Runs `run` at most once for `call_id`; `skipped` turns a human's `skip` result into
    what the call returns. `digest` is the call's arguments digest: a journalled call with
    another one raises `ReplayMismatch` and `run` is not called."""
    journal = site.journal
    call = journal.saver._sync(journal.begin(call_id, tool, site.step, digest))
    if call.replayed is not None:
        return _replayed(call)
    if call.in_doubt and (skip := _settle(call, policy)) is not None:
        return journal.saver._sync(journal.finish(call, skipped(skip.result), False))
    token = _current.set(call)
    try:
        value = run()
    finally:
        _current.reset(token)
    return journal.saver._sync(journal.finish(call, value, _is_error(value)))


async def _arun_once(
    site: _Site,
    call_id: str,
    tool: str,
    policy: InDoubtPolicy,
    run: Callable[[], Any],
    skipped: Callable[[Any], Any] = _as_is,
    digest: str = "",
) -> Any:
    journal = site.journal
    call = await journal.saver._async(journal.begin(call_id, tool, site.step, digest))
    if call.replayed is not None:
        return _replayed(call)
    if call.in_doubt and (skip := _settle(call, policy)) is not None:
        return await journal.saver._async(journal.finish(call, skipped(skip.result), False))
    token = _current.set(call)
    try:
        value = await run()
    finally:
        _current.reset(token)
    return await journal.saver._async(journal.finish(call, value, _is_error(value)))


# -- plain functions -----------------------------------------------------------------------


def _wrap_function(
    fn: _F, policy: InDoubtPolicy, key: KeyFunction | None, saver: CheckpointdSaver | None
) -> _F:
    name = getattr(fn, "__name__", "tool")
    signature = inspect.signature(fn)

    def prepare(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[_Site, str, str]:
        site = _site(get_config(), saver)
        bound = dict(signature.bind(*args, **kwargs).arguments)
        return site, _call_id(site, name, bound, None, key), _digest(bound, key)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            site, call_id, digest = prepare(args, kwargs)
            return await _arun_once(site, call_id, name, policy, lambda: fn(*args, **kwargs), digest=digest)

        return cast(_F, awrapper)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        site, call_id, digest = prepare(args, kwargs)
        return _run_once(site, call_id, name, policy, lambda: fn(*args, **kwargs), digest=digest)

    return cast(_F, wrapper)


# -- LangChain tools -----------------------------------------------------------------------


class ExactlyOnceTool(BaseTool):
    """A LangChain tool that runs `tool` exactly once per call id: what `@exactly_once`
    returns for a tool. It has the wrapped tool's name, description and schema, so `ToolNode`
    injects state, store and runtime into it as it would into the tool itself."""

    tool: BaseTool
    policy: InDoubtPolicy = InDoubtPolicy.RETRY_WITH_KEY
    key: KeyFunction | None = None
    saver: Any = None

    @classmethod
    def wrapping(
        cls,
        tool: BaseTool,
        *,
        policy: InDoubtPolicy,
        key: KeyFunction | None,
        saver: CheckpointdSaver | None,
    ) -> ExactlyOnceTool:
        return cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            return_direct=tool.return_direct,
            response_format=tool.response_format,
            tool=tool,
            policy=policy,
            key=key,
            saver=saver,
        )

    @property
    def func(self) -> Any:
        """The wrapped tool's function, where `ToolNode` looks for injected arguments."""
        return getattr(self.tool, "func", None)

    @property
    def coroutine(self) -> Any:
        return getattr(self.tool, "coroutine", None)

    def _call(
        self, input: Any, config: RunnableConfig | None
    ) -> tuple[RunnableConfig, _Site, str, Callable[[Any], Any], str]:
        config = ensure_config(config)
        site = _site(config, self.saver)
        is_call = isinstance(input, dict) and input.get("type") == "tool_call"
        args = input.get("args", {}) if is_call else input if isinstance(input, dict) else {"input": input}
        tool_call_id = input.get("id") if is_call else None

        def skipped(result: Any) -> Any:
            # A tool call returns a ToolMessage; so does a call a human settled by `skip`.
            if not tool_call_id or isinstance(result, ToolMessage):
                return result
            content = result if isinstance(result, (str, list)) else json.dumps(result)
            return ToolMessage(content=content, name=self.name, tool_call_id=tool_call_id)

        call_id = _call_id(site, self.name, args, tool_call_id, self.key)
        return config, site, call_id, skipped, _digest(_model_arguments(self.tool, args), self.key)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        config, site, call_id, skipped, digest = self._call(input, config)
        run = lambda: self.tool.invoke(input, config, **kwargs)  # noqa: E731
        return _run_once(site, call_id, self.name, self.policy, run, skipped, digest)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        config, site, call_id, skipped, digest = self._call(input, config)
        run = lambda: self.tool.ainvoke(input, config, **kwargs)  # noqa: E731
        return await _arun_once(site, call_id, self.name, self.policy, run, skipped, digest)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ExactlyOnceTool runs through invoke/ainvoke")


__all__ = [
    "IN_DOUBT_INTERRUPT",
    "ExactlyOnceTool",
    "ToolCallInDoubt",
    "exactly_once",
    "idempotency_key",
]
