"""The queue worker for Python agents: `python -m checkpointd.worker my_module:agent`.

It claims tasks from checkpointd's queue, keeps their leases alive with heartbeats (a fenced
heartbeat means another worker owns the task: the step is cancelled and nothing more is
written), drives each run through the recovery loop (Resume, strategy, in-process resurrection
with budget and cooldown, fatal versus transient), parks a task in `input_required` when a step
asks for approval, and on SIGTERM or SIGINT stops claiming, lets running steps finish within
the drain deadline, checkpoints and releases their tasks with no attempt charged.

`my_module:agent` names a step function `agent(ctx)` (as for `RecoverableAgent`), or an object
with a `step(ctx)` method and, optionally, `initial_state(task) -> dict`. The task's input is
decoded as JSON when it is JSON; the `Done(result)` result is stored as the task's result (JSON).
Progress is printed on stdout as `event ...` lines, and a `summary ...` line on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import _codec
from ._proto import task_pb2 as tpb
from ._telemetry import configure_exporter, shutdown_exporter
from .aio import AsyncClient
from .classify import DEFAULT_FATAL_PATTERNS, Decision, ErrorClass, ErrorClassifier
from .errors import CheckpointdError, FailedPrecondition
from .recovery import AgentFn, Outcome, RecoveryPolicy, Signals, drive
from .store import CheckpointStore
from .strategy import Strategy

log = logging.getLogger("checkpointd")


@dataclass
class WorkerConfig:
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    #: Tasks run at once.
    concurrency: int = 4
    #: Lease asked for on each claim (seconds); heartbeats renew it every third of it.
    lease: float = 30.0
    #: Pause between claims when the queue is empty (seconds).
    poll_interval: float = 0.5
    #: Stop after this many tasks ended here (None: until shut down). A task parked for
    #: approval has not ended.
    exit_after: int | None = None
    recovery: RecoveryPolicy = field(default_factory=RecoveryPolicy)


@dataclass
class WorkerReport:
    ends: list[tuple[str, str]] = field(default_factory=list)


def event(kind: str, **fields: Any) -> None:
    """One `event KIND key=value ...` line on stdout, for operators and tests."""
    print("event", kind, *(f"{k}={v}" for k, v in fields.items()), flush=True)


def load_agent(spec: str) -> tuple[AgentFn, Callable[[Any], dict[str, Any]] | None]:
    """The step function and optional initial-state function that `module:attr` names."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"expected module:attribute, got {spec!r}")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    step = getattr(target, "step", None)
    if callable(step):
        initial = getattr(target, "initial_state", None)
        return step, initial if callable(initial) else None
    if not callable(target):
        raise TypeError(f"{spec} is neither a step function nor an object with a step method")
    return target, None


def _decode_input(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return raw


def _decision(task: tpb.Task) -> Decision | None:
    if not task.HasField("approval") or not task.approval.decided:
        return None
    approval = task.approval
    return Decision(approval.action, approval.approved, approval.decided_by, approval.comment)


class Worker:
    def __init__(
        self,
        agent: AgentFn,
        client: AsyncClient,
        store: CheckpointStore,
        config: WorkerConfig,
        initial_state: Callable[[Any], dict[str, Any]] | None = None,
    ) -> None:
        self.agent = agent
        self.client = client
        self.store = store
        self.config = config
        self.initial_state = initial_state
        self.shutdown = asyncio.Event()
        self.report = WorkerReport()

    def _done(self) -> bool:
        limit = self.config.exit_after
        ended = [end for _, end in self.report.ends if end != "awaiting_approval"]
        return limit is not None and len(ended) >= limit

    async def run(self) -> WorkerReport:
        """Claims and drives tasks until shutdown (or `exit_after` tasks ended)."""
        running: set[asyncio.Task[None]] = set()
        while not self.shutdown.is_set() and not self._done():
            free = self.config.concurrency - len(running)
            claimed = await self._claim(free) if free > 0 else []
            for task in claimed:
                running.add(asyncio.create_task(self._run_one(task)))
            if not claimed:
                stop = asyncio.ensure_future(self.shutdown.wait())
                waiting: set[asyncio.Future[Any]] = {stop, *running}
                await asyncio.wait(
                    waiting, timeout=self.config.poll_interval, return_when=asyncio.FIRST_COMPLETED
                )
                stop.cancel()
            running = {t for t in running if not t.done()}
        if running:
            await asyncio.gather(*running)
        return self.report

    async def _claim(self, free: int) -> list[tpb.Task]:
        try:
            reply = await self.client.claim(
                worker_id=self.config.worker_id,
                lease_duration=datetime.timedelta(seconds=self.config.lease),
                batch_size=min(free, 100),
            )
        except CheckpointdError as error:
            log.warning("claim failed; retrying: %s", error)
            return []
        return list(reply.tasks)

    async def _run_one(self, task: tpb.Task) -> None:
        event("claimed", run=task.run_id, task=task.task_id, attempt=task.attempt)
        signals = Signals(shutdown=self.shutdown, lease_lost=asyncio.Event())
        heartbeat = asyncio.create_task(self._keep_lease(task, signals.lease_lost))
        try:
            outcome = await drive(
                self.agent,
                self.store,
                task.run_id,
                _decode_input(task.input),
                self.config.recovery,
                signals=signals,
                decision=_decision(task),
                initial_state=self.initial_state,
            )
        finally:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
        if outcome.resumed is not None:
            event(
                "resumed",
                run=task.run_id,
                recovered_from_step=outcome.resumed.recovered_from_step,
                restarted_from_scratch=str(outcome.resumed.restarted_from_scratch).lower(),
            )
            if outcome.resumed.passed_over:
                # As the Rust runner's worker: quarantined checkpoints above the restored one.
                steps = ",".join(str(p.step) for p in outcome.resumed.passed_over)
                event("passed_over", run=task.run_id, steps=steps)
        end = await self._report(task, outcome)
        self.report.ends.append((task.task_id, end))
        event("finished", run=task.run_id, task=task.task_id, end=end)

    async def _keep_lease(self, task: tpb.Task, lease_lost: asyncio.Event) -> None:
        """Renews the lease every third of it; a fenced heartbeat stops the task."""
        while True:
            await asyncio.sleep(self.config.lease / 3)
            try:
                await self.client.heartbeat(
                    task_id=task.task_id,
                    attempt=task.attempt,
                    lease_duration=datetime.timedelta(seconds=self.config.lease),
                )
            except FailedPrecondition:
                log.warning("lease lost; stopping task_id=%s", task.task_id)
                lease_lost.set()
                return
            except CheckpointdError as error:
                log.warning("heartbeat failed; retrying task_id=%s: %s", task.task_id, error)

    async def _report(self, task: tpb.Task, outcome: Outcome) -> str:
        """Moves the task through the queue by how the drive ended; the end's name."""
        fenced: dict[str, Any] = {"task_id": task.task_id, "attempt": task.attempt}
        try:
            if outcome.kind == "finished":
                await self.client.complete(**fenced, result=_codec.dumps(outcome.result))
                return "completed"
            if outcome.kind == "approval":
                details = (
                    outcome.details if isinstance(outcome.details, bytes) else _codec.dumps(outcome.details)
                )
                await self.client.request_approval(**fenced, action=outcome.action, details=details)
                return "awaiting_approval"
            if outcome.kind == "stopped":
                await self.client.release(**fenced)
                return "released"
            if outcome.kind == "failed":
                fatal = outcome.error_class is ErrorClass.FATAL
                wire = tpb.ERROR_CLASS_FATAL if fatal else tpb.ERROR_CLASS_TRANSIENT
                await self.client.fail(
                    **fenced,
                    error=f"{type(outcome.error).__name__}: {outcome.error}"[:4000],
                    error_class=wire,
                )
                return "failed_fatal" if fatal else "failed_transient"
            return "lease_lost"
        except FailedPrecondition as refused:
            # Another worker owns the task (LEASE_LOST), or an operator moved it (TASK_STATE).
            return "lease_lost" if refused.reason in (None, "LEASE_LOST") else refused.reason.lower()
        except CheckpointdError as error:
            log.error("reporting the task outcome failed; the lease will expire: %s", error)
            return "report_failed"


def parse_duration(text: str) -> float:
    """Seconds from `500ms`, `30s`, `2m`, `1h` or a plain number of seconds."""
    for suffix, scale in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(suffix) and text[: -len(suffix)].replace(".", "", 1).isdigit():
            return float(text[: -len(suffix)]) * scale
    return float(text)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="python -m checkpointd.worker", description=__doc__.splitlines()[0])
    parser.add_argument(
        "agent", help="module:attribute of the agent (a step function or an object with step)"
    )
    parser.add_argument("--server", default=env("CHECKPOINTD_SERVER", "http://127.0.0.1:50051"))
    parser.add_argument("--tenant", default=env("CHECKPOINTD_TENANT"))
    parser.add_argument("--token", default=env("CHECKPOINTD_TOKEN"), help="sent as authorization: Bearer")
    parser.add_argument("--ca-cert", default=env("CHECKPOINTD_CA_CERT"))
    parser.add_argument("--client-cert", default=env("CHECKPOINTD_CLIENT_CERT"))
    parser.add_argument("--client-key", default=env("CHECKPOINTD_CLIENT_KEY"))
    parser.add_argument("--worker-id", default=env("CHECKPOINTD_WORKER_ID"))
    parser.add_argument("--concurrency", type=int, default=int(env("CHECKPOINTD_WORKER_CONCURRENCY", "4")))
    parser.add_argument(
        "--lease", type=parse_duration, default=parse_duration(env("CHECKPOINTD_WORKER_LEASE", "30s"))
    )
    parser.add_argument("--poll-interval", type=parse_duration, default=0.5)
    parser.add_argument(
        "--strategy", type=Strategy.parse, default=Strategy.parse(env("CHECKPOINTD_STRATEGY", "every_n:3"))
    )
    parser.add_argument(
        "--max-resurrections", type=int, default=int(env("CHECKPOINTD_MAX_RESURRECTIONS", "3"))
    )
    parser.add_argument(
        "--cooldown",
        type=parse_duration,
        default=parse_duration(env("CHECKPOINTD_RESURRECTION_COOLDOWN", "2s")),
    )
    parser.add_argument("--drain-deadline", type=parse_duration, default=10.0)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument(
        "--fatal-pattern", action="append", default=[], help="message fragment of fatal errors (repeatable)"
    )
    parser.add_argument("--exit-after", type=int, default=None)
    parser.add_argument("--otlp-endpoint", default=env("CHECKPOINTD_OTLP_ENDPOINT"))
    return parser.parse_args(argv)


async def _serve(args: argparse.Namespace) -> WorkerReport:
    agent, initial_state = load_agent(args.agent)
    options: dict[str, Any] = dict(
        tenant=args.tenant,
        token=args.token,
        ca_cert=args.ca_cert,
        client_cert=args.client_cert,
        client_key=args.client_key,
    )
    config = WorkerConfig(
        concurrency=args.concurrency,
        lease=args.lease,
        poll_interval=args.poll_interval,
        exit_after=args.exit_after,
        recovery=RecoveryPolicy(
            strategy=args.strategy,
            max_resurrections=args.max_resurrections,
            cooldown=args.cooldown,
            classifier=ErrorClassifier([*DEFAULT_FATAL_PATTERNS, *args.fatal_pattern]),
            drain_deadline=args.drain_deadline,
            max_steps=args.max_steps,
        ),
    )
    if args.worker_id:
        config.worker_id = args.worker_id
    client = AsyncClient(args.server, **options)
    store = CheckpointStore(args.server, **options)
    worker = Worker(agent, client, store, config, initial_state)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, worker.shutdown.set)
    event("started", worker=config.worker_id, strategy=config.recovery.strategy)
    try:
        report = await worker.run()
    finally:
        await store.close()
        await client.close()
    latencies = sorted(store.stats.latencies)

    def quantile_ms(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else 0.0

    print(
        f"summary tasks={len(report.ends)} saves={len(latencies)} "
        f"p50_ms={quantile_ms(0.5):.2f} p99_ms={quantile_ms(0.99):.2f}",
        flush=True,
    )
    return report


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    sys.path.insert(0, os.getcwd())
    exporting = configure_exporter(args.otlp_endpoint)
    try:
        asyncio.run(_serve(args))
    finally:
        if exporting:
            shutdown_exporter()
    return 0


if __name__ == "__main__":
    sys.exit(main())
