"""The failover test's load: clients saving continuously and an enqueuer feeding the worker,
each recording what the server acknowledged and every error, with its time and gRPC code."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from checkpointd import CheckpointdError, Client

# A failed call is sent again, unchanged, after this pause: the same (run, step, content) is an
# idempotent retry (contract 4), so a save whose commit happened but whose answer was lost is
# answered `already_existed` rather than a conflict.
RETRY_PAUSE = 0.05
CALL_TIMEOUT = 5.0


@dataclass
class Ack:
    step: int
    checksum: str
    started: float  # when the first attempt of this step was sent
    acked: float


@dataclass
class Failure:
    at: float
    code: str
    reason: str | None
    message: str


@dataclass
class Record:
    """What one load thread saw; read by the main thread only after the thread stopped."""

    acks: list[Ack] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    # Retries answered `already_existed`: the failed attempt had committed after all (its answer
    # was lost with the connection). The idempotent retry is what makes that case harmless.
    committed_before_retry: int = 0

    def fail(self, error: CheckpointdError) -> None:
        self.failures.append(Failure(time.monotonic(), error.code.name, error.reason, error.message))


def state_of(run_id: str, step: int) -> bytes:
    """Deterministic state of a step, so a retry sends the identical bytes. About 1 KiB, so a
    save is a row of realistic size, not an empty one."""
    seed = hashlib.sha256(f"{run_id}/{step}".encode()).hexdigest()
    return (f'{{"run":"{run_id}","step":{step},"pad":"' + seed * 16 + '"}').encode()


class Saver(threading.Thread):
    """Saves steps 1, 2, 3... of one run, one message each, until stopped; a step is retried
    until acknowledged, so the acked steps of a run are exactly 1..last."""

    def __init__(self, target: str, run_id: str, stop: threading.Event) -> None:
        super().__init__(name=f"saver-{run_id}", daemon=True)
        self.target = target
        self.run_id = run_id
        self.stop = stop
        self.record = Record()

    def run(self) -> None:
        with Client(self.target) as client:
            step = 1
            while not self.stop.is_set():
                started = time.monotonic()
                while not self.stop.is_set():
                    try:
                        saved = client.save(
                            run_id=self.run_id,
                            step=step,
                            state=state_of(self.run_id, step),
                            content_type="application/json",
                            messages=[{"role": "user", "content": f"message {step}".encode()}],
                            message_offset=step - 1,
                            timeout=CALL_TIMEOUT,
                        )
                    except CheckpointdError as error:
                        self.record.fail(error)
                        time.sleep(RETRY_PAUSE)
                        continue
                    self.record.acks.append(Ack(step, saved.checksum, started, time.monotonic()))
                    self.record.committed_before_retry += saved.already_existed
                    step += 1
                    break


class Enqueuer(threading.Thread):
    """Enqueues demo tasks (`{"steps": N}`) at a steady pace until stopped. The run id doubles as
    the idempotency key, so an Enqueue retried after an error never makes a second task."""

    def __init__(self, target: str, stop: threading.Event, *, every: float, steps: int) -> None:
        super().__init__(name="enqueuer", daemon=True)
        self.target = target
        self.stop = stop
        self.every = every
        self.steps = steps
        self.record = Record()
        self.tasks: dict[str, str] = {}  # run id -> task id

    def run(self) -> None:
        with Client(self.target) as client:
            n = 0
            while not self.stop.is_set():
                n += 1
                run_id = f"task-{n:04d}"
                while not self.stop.is_set():
                    try:
                        answer = client.enqueue(
                            run_id=run_id,
                            input=f'{{"steps":{self.steps}}}'.encode(),
                            idempotency_key=run_id,
                            timeout=CALL_TIMEOUT,
                        )
                    except CheckpointdError as error:
                        self.record.fail(error)
                        time.sleep(RETRY_PAUSE)
                        continue
                    self.tasks[run_id] = answer.task.task_id
                    self.record.acks.append(Ack(n, "", time.monotonic(), time.monotonic()))
                    break
                self.stop.wait(self.every)


def failures_between(records: list[Record], start: float, end: float) -> Counter[str]:
    return Counter(f.code for r in records for f in r.failures if start <= f.at <= end)


def first_ack_after(records: list[Record], moment: float) -> float | None:
    """The first acknowledgement of a call whose first attempt was sent after `moment`: a save
    sent before it could be answered by the old primary in its last instant."""
    acks = [a.acked for r in records for a in r.acks if a.started >= moment]
    return min(acks) if acks else None


def longest_gap(records: list[Record], start: float, end: float) -> float:
    """The longest time in [start, end] with no acknowledgement from any client."""
    times = sorted([start] + [a.acked for r in records for a in r.acks if start <= a.acked <= end] + [end])
    return max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0)
