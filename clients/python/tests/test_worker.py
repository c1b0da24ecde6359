"""The worker (`python -m checkpointd.worker`) as real processes against a real server: killed
with SIGKILL mid-task and finished by a second worker after the lease, human approval through
the operator CLI, graceful shutdown on SIGTERM, and fatal errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from waiting import wait_until

from checkpointd import Client
from checkpointd import v1 as tpb

TESTS = Path(__file__).resolve().parent


def start_worker(server, directory: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "checkpointd.worker",
            "worker_agent:agent",
            "--server",
            server.target,
            "--concurrency",
            "1",
            "--poll-interval",
            "100ms",
            *args,
        ],
        cwd=TESTS,
        env={**os.environ, "AGENT_DIR": str(directory), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(worker: subprocess.Popen[str], timeout: float = 60) -> str:
    out, err = worker.communicate(timeout=timeout)
    assert worker.returncode == 0, f"worker exited {worker.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    return out


def enqueue(client: Client, run_id: str) -> str:
    return client.enqueue(run_id=run_id, input=json.dumps({"goal": run_id}).encode()).task.task_id


def test_a_killed_worker_s_task_is_finished_by_a_second_worker_after_the_lease(
    server, tmp_path: Path
) -> None:
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-kill")
        first = start_worker(server, tmp_path, "--lease", "2s", AGENT_HANG_AT="5")
        try:
            wait_until(lambda: (tmp_path / "hanging").exists() or first.poll() is not None, "step 5")
            assert first.poll() is None, first.communicate()
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.communicate()
        assert client.get_task(task_id=task_id).task.state == tpb.TASK_STATE_RUNNING

        second = start_worker(server, tmp_path, "--lease", "2s", "--exit-after", "1")
        out = finish(second)
        task = client.get_task(task_id=task_id).task
        assert task.state == tpb.TASK_STATE_COMPLETED, task
        assert json.loads(task.result) == {"sum": 21, "approved_by": None}
        assert task.attempt == 2
    assert "recovered_from_step=3" in out, out
    lookups = Counter((tmp_path / "tools.log").read_text().splitlines())
    assert lookups == {f"lookup@{step}": 1 for step in range(1, 7)}


def test_a_step_that_asks_for_approval_waits_for_the_operator_cli(server, tmp_path: Path) -> None:
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-approval")
        worker = start_worker(server, tmp_path, "--exit-after", "1", AGENT_APPROVAL_AT="4")
        try:
            parked = wait_until(
                lambda: (
                    (t := client.get_task(task_id=task_id).task).state == tpb.TASK_STATE_INPUT_REQUIRED and t
                ),
                "the task to wait for approval",
            )
            assert parked.approval.action == "deploy"
            assert json.loads(parked.approval.details) == {"target": "prod"}
            server.cli("tasks", "approve", task_id, "--by", "alice")
            out = finish(worker)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
        task = client.get_task(task_id=task_id).task
        assert task.state == tpb.TASK_STATE_COMPLETED, task
        assert json.loads(task.result) == {"sum": 21, "approved_by": "alice"}
    assert "end=awaiting_approval" in out and "end=completed" in out
    # Parked at step 4 after checkpointing step 3: steps 1 to 3 never ran their tools again.
    lookups = Counter((tmp_path / "tools.log").read_text().splitlines())
    assert all(n == 1 for n in lookups.values()), lookups


def test_sigterm_drains_checkpoints_and_releases_the_task(server, tmp_path: Path) -> None:
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-drain")
        worker = start_worker(server, tmp_path, "--drain-deadline", "200ms", AGENT_HANG_AT="5")
        wait_until(lambda: (tmp_path / "hanging").exists() or worker.poll() is not None, "step 5")
        worker.send_signal(signal.SIGTERM)
        out = finish(worker)
        task = client.get_task(task_id=task_id).task
        assert task.state == tpb.TASK_STATE_PENDING and task.attempts_used == 0, task
        # Step 5 was abandoned; step 4, done, was checkpointed on the way out.
        latest = client.load_latest(run_id="worker-drain").checkpoint
        assert latest.step == 4
    assert "end=released" in out


def test_a_fatal_error_fails_the_task_without_retries(server, tmp_path: Path) -> None:
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-fatal")
        out = finish(start_worker(server, tmp_path, "--exit-after", "1", AGENT_FATAL_AT="2"))
        task = client.get_task(task_id=task_id).task
        assert task.state == tpb.TASK_STATE_FAILED, task
        assert task.last_error_class == tpb.ERROR_CLASS_FATAL and task.attempts_used == 1
        assert "configuration is wrong" in task.last_error
    assert "end=failed_fatal" in out


def test_transient_errors_resurrect_the_run_in_process_then_hand_the_task_back(
    server, tmp_path: Path
) -> None:
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-transient")
        worker = start_worker(
            server,
            tmp_path,
            "--exit-after",
            "1",
            "--max-resurrections",
            "2",
            "--cooldown",
            "0s",
            AGENT_TRANSIENT_AT="3",
        )
        out = finish(worker)
        task = client.get_task(task_id=task_id).task
        assert task.state == tpb.TASK_STATE_PENDING, task
        assert task.last_error_class == tpb.ERROR_CLASS_TRANSIENT and "connection reset" in task.last_error
    # The first life and two resurrections reached step 3; the journal kept its lookup single.
    assert (tmp_path / "attempts.log").read_text().count("step 3") == 3
    assert "end=failed_transient" in out
    assert Counter((tmp_path / "tools.log").read_text().splitlines())["lookup@3"] == 1


def test_a_frozen_worker_that_lost_its_lease_stops_without_writing(server, tmp_path: Path) -> None:
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-zombie")
        zombie = start_worker(server, tmp_path, "--lease", "2s", "--exit-after", "1", AGENT_HANG_AT="5")
        try:
            wait_until(lambda: (tmp_path / "hanging").exists() or zombie.poll() is not None, "step 5")
            zombie.send_signal(signal.SIGSTOP)
            finish(start_worker(server, tmp_path, "--lease", "2s", "--exit-after", "1"))
            completed = client.get_task(task_id=task_id).task
            assert completed.state == tpb.TASK_STATE_COMPLETED and completed.attempt == 2
            checkpoints = client.list_checkpoints(run_id="worker-zombie").checkpoints
        finally:
            zombie.send_signal(signal.SIGCONT)
        # Thawed, its next heartbeat is fenced: the hung step is cancelled and nothing written.
        out = finish(zombie)
        assert "end=lease_lost" in out
        assert client.get_task(task_id=task_id).task == completed
        assert client.list_checkpoints(run_id="worker-zombie").checkpoints == checkpoints
    lookups = Counter((tmp_path / "tools.log").read_text().splitlines())
    assert lookups == {f"lookup@{step}": 1 for step in range(1, 7)}


def test_an_email_in_doubt_after_a_kill_waits_for_a_human_and_is_never_sent_twice(
    server, tmp_path: Path
) -> None:
    email = {"AGENT_EMAIL_AT": "2", "AGENT_EMAIL_POLICY": "ask"}
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-in-doubt")
        first = start_worker(server, tmp_path, "--lease", "2s", AGENT_HANG_AFTER_EMAIL="1", **email)
        try:
            wait_until(lambda: (tmp_path / "hanging").exists() or first.poll() is not None, "the email")
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.communicate()
        second = start_worker(server, tmp_path, "--lease", "2s", "--exit-after", "1", **email)
        try:
            parked = wait_until(
                lambda: (
                    (t := client.get_task(task_id=task_id).task).state == tpb.TASK_STATE_INPUT_REQUIRED and t
                ),
                "the in-doubt email to be put to a human",
            )
            assert parked.approval.action == "in_doubt step-2/send_email/0"
            assert json.loads(parked.approval.details)["tool_name"] == "send_email"
            server.cli("tasks", "approve", task_id, "--by", "bob")
            finish(second)
        finally:
            if second.poll() is None:
                second.kill()
                second.communicate()
        assert client.get_task(task_id=task_id).task.state == tpb.TASK_STATE_COMPLETED
    # Approved, the call re-ran with its idempotency key, which the tool had seen: one email.
    assert len((tmp_path / "effects.log").read_text().splitlines()) == 1


def test_an_in_doubt_email_is_not_retried_for_other_arguments_and_the_task_fails_fatally(
    server, tmp_path: Path
) -> None:
    """The intent journalled for one recipient is not settled by a call with another: the
    worker's journal refuses the replay (ReplayMismatch), nothing is sent, and the task fails
    as fatal instead of being retried."""
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-other-args")
        first = start_worker(
            server, tmp_path, "--lease", "2s", AGENT_EMAIL_AT="2", AGENT_HANG_AFTER_EMAIL="1"
        )
        try:
            wait_until(lambda: (tmp_path / "hanging").exists() or first.poll() is not None, "the email")
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.communicate()
        second = start_worker(
            server,
            tmp_path,
            "--lease",
            "2s",
            "--exit-after",
            "1",
            AGENT_EMAIL_AT="2",
            AGENT_EMAIL_TO="eve@example.com",
        )
        out = finish(second)
        task = client.get_task(task_id=task_id).task
        assert task.state == tpb.TASK_STATE_FAILED and task.last_error_class == tpb.ERROR_CLASS_FATAL, task
        assert "ARGUMENTS_MISMATCH" in task.last_error and "step-2/send_email/0" in task.last_error
    assert "end=failed_fatal" in out
    sent = [json.loads(line)["to"] for line in (tmp_path / "effects.log").read_text().splitlines()]
    assert sent == ["ops@example.com"]


def test_a_task_resumed_past_quarantined_checkpoints_says_so(server, tmp_path: Path) -> None:
    with Client(server.target) as client:
        enqueue(client, "worker-rot")
        every_step = ("--strategy", "every_step", "--exit-after", "1")
        finish(start_worker(server, tmp_path, *every_step, AGENT_FATAL_AT="5"))
        for step in (4, 3):
            server.database.corrupt_state("worker-rot", step)
        task_id = enqueue(client, "worker-rot")
        out = finish(start_worker(server, tmp_path, *every_step))
        assert client.get_task(task_id=task_id).task.state == tpb.TASK_STATE_COMPLETED
    assert "event passed_over run=worker-rot steps=4,3" in out, out
    assert "recovered_from_step=2" in out, out


def test_an_operator_cancel_stops_the_running_step_at_the_next_heartbeat(server, tmp_path: Path) -> None:
    with Client(server.target) as client:
        task_id = enqueue(client, "worker-cancel")
        worker = start_worker(server, tmp_path, "--lease", "3s", "--exit-after", "1", AGENT_HANG_AT="4")
        try:
            wait_until(lambda: (tmp_path / "hanging").exists() or worker.poll() is not None, "step 4")
            server.cli("tasks", "cancel", task_id)
            out = finish(worker, timeout=30)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
        assert client.get_task(task_id=task_id).task.state == tpb.TASK_STATE_CANCELLED
        # The hung step was cancelled, not checkpointed: step 3 stays the latest.
        assert client.load_latest(run_id="worker-cancel").checkpoint.step == 3
    assert "end=lease_lost" in out
