"""Failover under Patroni: a real load through checkpointd while the Postgres leader is killed
(kill -9 of its postmaster) and later switched over; asserts no acknowledged save is lost, the
server never restarts, every task finishes and no side effect runs twice. See docs/chaos.md."""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from checkpointd import CheckpointdError, Client, v1

from cluster import Cluster, record_pid, remove_tree
from load import Ack, Enqueuer, Record, Saver, failures_between, first_ack_after, longest_gap

# Codes a client may see while the database moves: the server cannot reach a primary
# (UNAVAILABLE) or a transaction was cut off (ABORTED). Anything else (INTERNAL above all) is a
# failure of the test: it means a driver error reached the client unmapped, or worse.
RETRYABLE = {"UNAVAILABLE", "ABORTED"}
DEMO_STEPS = 12  # steps of each enqueued demo task; steps not a multiple of 3 send an email


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--binary", required=True, help="the checkpointd release binary to test")
    p.add_argument("--workdir", help="empty directory for the cluster and logs (default: a new temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the work directory after the run")
    p.add_argument("--savers", type=int, default=4, help="clients saving continuously, one run each")
    p.add_argument("--phase", type=float, default=6.0, help="seconds of load before and after each fault")
    p.add_argument(
        "--plant",
        choices=["duplicate", "lost-save"],
        help="plant a fault after the load, to show the assertions catch it: a second copy of one "
        "email in the spool, or an acknowledgement of a save the server never stored",
    )
    return p.parse_args()


class Run:
    """The processes of one test run and what it measured."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.cluster = Cluster(workdir)
        self.port = free_port()
        self.admin_port = free_port()
        self.target = f"127.0.0.1:{self.port}"
        self.spool = workdir / "emails.spool"
        self.server: subprocess.Popen[bytes] | None = None
        self.worker: subprocess.Popen[bytes] | None = None
        self.problems: list[str] = []

    # -- processes ------------------------------------------------------------------------------

    def database_url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{n.pg_port}" for n in self.cluster.nodes)
        return f"postgres://postgres@{hosts}/postgres?target_session_attrs=read-write"

    def spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            argv,
            stdout=open(self.workdir / f"{name}.log", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        record_pid(self.workdir, process.pid)
        return process

    def start_server(self) -> None:
        self.server = self.spawn(
            "server",
            [
                self.args.binary,
                "serve",
                "--database",
                self.database_url(),
                "--listen",
                self.target,
                "--admin-listen",
                f"127.0.0.1:{self.admin_port}",
                "--pool-size",
                "8",
                # Reclaims and transient failures during the failover spend attempts; the test is
                # about duplicates and lost work, not dead letters.
                "--queue-max-attempts",
                "1000",
                "--queue-initial-delay",
                "200ms",
                "--queue-max-delay",
                "2s",
            ],
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RuntimeError(f"checkpointd serve exited at start ({self.server.returncode})")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError("checkpointd serve did not answer /healthz within 30 s")

    def start_worker(self) -> None:
        self.worker = self.spawn(
            "worker",
            [
                self.args.binary,
                "worker",
                "--server",
                f"http://{self.target}",
                "--side-effect-file",
                str(self.spool),
                "--concurrency",
                "4",
                "--strategy",
                "every_n:3",
                "--step-delay",
                "20ms",
                # A lease longer than a failover, so a task rides through it instead of being
                # reclaimed; shorter cooldowns so a transient failure costs little time.
                "--lease",
                "15s",
                "--cooldown",
                "500ms",
            ],
        )

    def stop(self) -> None:
        for process in (self.worker, self.server):
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
        self.cluster.stop()

    # -- the test -------------------------------------------------------------------------------

    def check(self, ok: bool, problem: str) -> None:
        if not ok:
            self.problems.append(problem)

    def execute(self) -> dict[str, object]:
        started = time.monotonic()
        self.cluster.start()
        print(f"cluster up in {time.monotonic() - started:.1f} s: {self.cluster.describe()}", flush=True)
        self.start_server()
        assert self.server is not None
        server_pid = self.server.pid
        self.start_worker()

        stop = threading.Event()
        savers = [Saver(self.target, f"save-{i}", stop) for i in range(self.args.savers)]
        enqueuer = Enqueuer(self.target, stop, every=0.3, steps=DEMO_STEPS)
        for thread in [*savers, enqueuer]:
            thread.start()
        records: list[Record] = [s.record for s in savers]
        phase = self.args.phase
        time.sleep(phase)  # the load's pace is the point here: a steady state before the fault

        # Fault 1: kill -9 of the leader's postmaster.
        old = self.cluster.leader()
        sync = self.cluster.sync_standby()
        assert old is not None and sync is not None, self.cluster.describe()
        acked_before_kill = sum(len(r.acks) for r in records)
        killed_at = time.monotonic()
        pid = self.cluster.kill_postmaster(old)
        print(f"kill -9 postmaster {pid} of leader {old.name} (sync standby {sync.name})", flush=True)
        self.cluster.wait_for(
            lambda: (lead := self.cluster.leader()) is not None and lead is not old, 60, "a new leader"
        )
        promoted_at = time.monotonic()
        new = self.cluster.leader()
        assert new is not None
        self.cluster.wait_for(
            lambda: first_ack_after(records, killed_at) is not None, 60, "a save after the kill"
        )
        failover_first = first_ack_after(records, killed_at)
        assert failover_first is not None
        # The killed node comes back as a replica (pg_rewind); a switchover needs a sync standby.
        self.cluster.wait_for(self.cluster.healthy, 90, "the cluster whole again after the failover")
        rejoined_at = time.monotonic()
        time.sleep(phase)

        # Fault 2: a planned switchover to the sync standby.
        leader = self.cluster.leader()
        candidate = self.cluster.sync_standby()
        assert leader is not None and candidate is not None, self.cluster.describe()
        switched_at = time.monotonic()
        self.cluster.switchover(leader, candidate)
        self.cluster.wait_for(lambda: self.cluster.leader() is candidate, 60, f"{candidate.name} to lead")
        switched_done = time.monotonic()
        print(
            f"switchover {leader.name} -> {candidate.name} in {switched_done - switched_at:.1f} s", flush=True
        )
        time.sleep(phase)
        stop.set()
        for thread in [*savers, enqueuer]:
            thread.join(30)
        load_end = time.monotonic()

        self.check(self.server.poll() is None and self.server.pid == server_pid, "checkpointd serve exited")
        tasks_done = self.wait_tasks(enqueuer)
        tasks_settled = time.monotonic()
        self.check(self.server.poll() is None, "checkpointd serve exited after the load")
        self.plant(savers)
        self.check(self.worker is not None and self.worker.poll() is None, "the worker exited")
        self.verify_saves(savers)
        duplicates = self.verify_emails(enqueuer)

        all_records = [*records, enqueuer.record]
        # The timeline, relative to the kill, for reading a run afterwards (--keep).
        with open(self.workdir / "timeline.tsv", "w") as timeline:
            marks = [("kill", killed_at), ("promoted", promoted_at), ("switchover", switched_at)]
            rows = [(t, f"mark\t{name}") for name, t in marks]
            rows += [(f.at, f"error\t{f.code}\t{f.message}") for r in all_records for f in r.failures]
            rows += [(a.acked, "ack") for r in records for a in r.acks if a.acked >= killed_at - 1]
            for t, what in sorted(rows):
                timeline.write(f"{t - killed_at:.3f}\t{what}\n")
        failover_end = failover_first
        switch_end = switched_done + longest_gap(records, switched_at, load_end)
        errors = Counter(f.code for r in all_records for f in r.failures)
        # What the clients were told, by code, reason and message: the server's own words for
        # each state of the failover (its messages never carry driver text, contract 8).
        said = Counter(f"{f.code} {f.reason} {f.message}" for r in all_records for f in r.failures)
        for text, n in said.most_common(6):
            print(f"  client saw {n}x: {text}", flush=True)
        for code in errors:
            self.check(code in RETRYABLE, f"{errors[code]} calls failed with non-retryable {code}")
        for r in all_records:
            for f in r.failures:
                if f.code not in RETRYABLE:
                    print(f"  non-retryable: {f.code} {f.reason} {f.message}", flush=True)
        return {
            "saves_acked": sum(len(r.acks) for r in records),
            "saves_before_kill": acked_before_kill,
            "promotion_s": promoted_at - killed_at,
            "failover_window_s": failover_end - killed_at,
            "failover_stall_s": longest_gap(records, killed_at - 1, rejoined_at),
            "failover_errors": dict(failures_between(all_records, killed_at, failover_end)),
            "switchover_s": switched_done - switched_at,
            "switchover_stall_s": longest_gap(records, switched_at, load_end),
            "switchover_errors": dict(failures_between(all_records, switched_at, switch_end)),
            "errors_total": dict(errors),
            "saves_committed_before_retry": sum(r.committed_before_retry for r in records),
            "tasks_enqueued": len(enqueuer.tasks),
            "tasks_done": tasks_done,
            "duplicates": duplicates,
            "worker": self.worker_figures(),
            "server_pid": f"{server_pid} (same, alive)" if self.server.poll() is None else "EXITED",
            "leaders": f"{old.name} -> {new.name} -> {candidate.name}",
            "rejoin_s": rejoined_at - killed_at,
            "tasks_wait_s": tasks_settled - load_end,
            "verify_s": time.monotonic() - tasks_settled,
            "wall_s": time.monotonic() - started,
        }

    def plant(self, savers: list[Saver]) -> None:
        """The sensitivity check (--plant): the run must then fail, naming the planted fault."""
        if self.args.plant == "duplicate":
            first = self.spool.read_text().splitlines()[0]
            with open(self.spool, "a") as spool:
                spool.write(first + "\n")
        elif self.args.plant == "lost-save":
            acks = savers[0].record.acks
            last = acks[-1]
            acks.append(Ack(last.step + 1000, last.checksum, last.started, last.acked))

    def worker_figures(self) -> str:
        """How the worker rode through the failovers, from its log: in-process resurrections,
        failed claims, task outcomes it could not report (those tasks wait for their lease to
        expire and are claimed again) and claims in all."""
        text = re.sub(r"\x1b\[[0-9;]*m", "", (self.workdir / "worker.log").read_text(errors="replace"))
        count = {
            "claims": len(re.findall(r"^event claimed ", text, re.M)),
            "resurrections": text.count("transient error; resurrecting"),
            "claim_failures": text.count("claim failed; retrying"),
            "outcome_report_failures": text.count("reporting the task outcome failed"),
        }
        return " ".join(f"{k}={v}" for k, v in count.items())

    def wait_tasks(self, enqueuer: Enqueuer) -> int:
        """Waits (bounded) for every enqueued task to complete; a failed, dead or cancelled one
        fails the run at once."""
        bad = {v1.TASK_STATE_FAILED, v1.TASK_STATE_DEAD, v1.TASK_STATE_CANCELLED}
        deadline = time.monotonic() + 90
        states: dict[str, int] = {}
        with Client(self.target) as client:
            while time.monotonic() < deadline:
                for run_id, task_id in enqueuer.tasks.items():
                    if states.get(run_id) != v1.TASK_STATE_COMPLETED:
                        states[run_id] = client.get_task(task_id=task_id, timeout=5).task.state
                if any(s in bad for s in states.values()):
                    break
                if all(s == v1.TASK_STATE_COMPLETED for s in states.values()):
                    break
                time.sleep(0.5)
        done = sum(s == v1.TASK_STATE_COMPLETED for s in states.values())
        for run_id, state in sorted(states.items()):
            if state != v1.TASK_STATE_COMPLETED:
                self.problems.append(f"task {run_id} ended {v1.TaskState.Name(state)}, not COMPLETED")
        return done

    def verify_saves(self, savers: list[Saver]) -> None:
        """Every acknowledged step loads with the checksum its Save returned, the message log
        length it had and its own message; LoadLatest is at or past the last acknowledged step.
        One thread per run: thousands of loads, and CI time is the budget."""
        with ThreadPoolExecutor(len(savers)) as pool:
            list(pool.map(self.verify_run, savers))

    def verify_run(self, saver: Saver) -> None:
        acks = saver.record.acks
        self.check(bool(acks), f"{saver.run_id}: no save acknowledged at all")
        if not acks:
            return
        steps = [ack.step for ack in acks]
        self.check(steps == list(range(1, len(steps) + 1)), f"{saver.run_id}: acked steps not 1..n")
        with Client(self.target) as client:
            latest = client.load_latest(run_id=saver.run_id, timeout=10).checkpoint
            self.check(
                latest.step >= acks[-1].step,
                f"{saver.run_id}: LoadLatest step {latest.step} < last acknowledged {acks[-1].step}",
            )
            for ack in acks:
                try:
                    # From the step's own message on: the server still verifies the whole
                    # checkpoint (contract 9) and reports the log's length, and the
                    # verification costs O(steps) rather than O(steps^2).
                    got = client.load_at_step(
                        run_id=saver.run_id, step=ack.step, message_offset=ack.step - 1, timeout=10
                    ).checkpoint
                except CheckpointdError as error:
                    self.problems.append(f"{saver.run_id} step {ack.step}: acknowledged, now {error}")
                    continue
                own = [m.content for m in got.messages]
                self.check(
                    got.checksum == ack.checksum
                    and got.message_count == ack.step
                    and own == [f"message {ack.step}".encode()],
                    f"{saver.run_id} step {ack.step}: checksum {got.checksum[:12]} (acked "
                    f"{ack.checksum[:12]}), {got.message_count} messages (want {ack.step})",
                )

    def verify_emails(self, enqueuer: Enqueuer) -> int:
        """The demo agent appends `RUN step-K/send_email` per email it sends: no line twice, none
        unexpected, none missing for a completed task."""
        lines = self.spool.read_text().splitlines() if self.spool.exists() else []
        counts = Counter(lines)
        duplicates = sum(n - 1 for n in counts.values() if n > 1)
        for line, n in counts.items():
            if n > 1:
                self.problems.append(f"side effect executed {n} times: {line}")
        expected = {
            f"{run_id} step-{k}/send_email"
            for run_id in enqueuer.tasks
            for k in range(1, DEMO_STEPS + 1)
            if k % 3 != 0
        }
        for line in sorted(set(lines) - expected):
            self.problems.append(f"unexpected side effect: {line}")
        missing = expected - set(lines)
        self.check(not missing, f"{len(missing)} emails never sent, e.g. {sorted(missing)[:3]}")
        return duplicates


def main() -> int:
    args = parse_args()
    if os.geteuid() != 0:
        print("run as root: the Postgres nodes run as the postgres user", file=sys.stderr)
        return 2
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="cpd-patroni-"))
    run = Run(args, workdir)
    try:
        figures = run.execute()
    except BaseException:
        print(run.cluster.dump_logs(), file=sys.stderr)
        run.problems.append("the run stopped with an exception (above)")
        raise
    finally:
        run.stop()
        for name in ("server", "worker"):
            log = workdir / f"{name}.log"
            if log.exists() and run.problems:
                print(f"--- {log} (last 30 lines)\n" + "\n".join(log.read_text().splitlines()[-30:]))
        if not args.keep and not args.workdir:
            remove_tree(workdir)
    print("patroni failover figures:")
    for key, value in figures.items():
        print(f"  {key}: {value:.2f}" if isinstance(value, float) else f"  {key}: {value}")
    for problem in run.problems:
        print(f"FAIL: {problem}")
    print("patroni failover: " + ("FAILED" if run.problems else "ok"))
    return 1 if run.problems else 0


if __name__ == "__main__":
    sys.exit(main())
