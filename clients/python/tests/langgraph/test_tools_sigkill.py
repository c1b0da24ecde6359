"""A graph process SIGKILLed right after an exactly-once tool's email went out, before the
tool's result or the node's writes were saved, is resumed by a new process: the call is in
doubt, and its policy settles it. `retry_with_key` sends again under the same key (the
provider delivers once); `ask` stops the graph at an interrupt naming the call, and
`Command(resume=...)` settles it through the graph's own resume path.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from checkpointd import Client
from checkpointd.langgraph import IN_DOUBT_INTERRUPT, _naming

AGENT = Path(__file__).resolve().parent / "email_agent.py"


def run_agent(server: Any, thread: str, root: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(AGENT), server.target, thread, str(root), *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )


def outcome(process: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout.strip().splitlines()[-1])


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def kill_after_the_email(server: Any, thread: str, root: Path, policy: str) -> str:
    """Runs the graph until it SIGKILLs itself after the send; returns the in-doubt call id."""
    first = run_agent(server, thread, root, "--policy", policy, "--die-after-effect")
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert len(lines(root / "outbox.log")) == 1
    with Client(server.target) as client:
        journal = client.get_journal(run_id=_naming.run_id(thread, ""))
    in_doubt = [c for c in journal.in_doubt if c.tool_name == "send_email"]
    assert len(in_doubt) == 1, journal
    assert in_doubt[0].idempotency_key == lines(root / "attempts.log")[0]
    return in_doubt[0].call_id


def test_retry_with_key_resends_under_the_same_key_and_the_email_is_delivered_once(
    server: Any, tmp_path: Path
) -> None:
    thread = "email/retry"
    kill_after_the_email(server, thread, tmp_path, "retry_with_key")

    resumed = outcome(run_agent(server, thread, tmp_path, "--policy", "retry_with_key"))

    assert resumed == {"last": "done: sent to ada@example.com", "interrupts": []}
    attempts = lines(tmp_path / "attempts.log")
    assert len(attempts) == 2 and attempts[0] == attempts[1], attempts  # one key, twice
    assert len(lines(tmp_path / "outbox.log")) == 1  # delivered once
    with Client(server.target) as client:
        assert not client.get_journal(run_id=_naming.run_id(thread, "")).in_doubt


def test_ask_stops_at_an_interrupt_naming_the_call_and_a_skip_resume_settles_it(
    server: Any, tmp_path: Path
) -> None:
    thread = "email/ask"
    call_id = kill_after_the_email(server, thread, tmp_path, "ask")

    stopped = outcome(run_agent(server, thread, tmp_path, "--policy", "ask"))

    [question] = stopped["interrupts"]
    assert question["type"] == IN_DOUBT_INTERRUPT
    assert question["call_id"] == call_id and question["tool_name"] == "send_email"
    assert question["idempotency_key"] == lines(tmp_path / "attempts.log")[0]
    assert len(lines(tmp_path / "attempts.log")) == 1  # nothing re-sent while asking

    skip = json.dumps({"action": "skip", "result": "sent (checked by a human)"})
    settled = outcome(run_agent(server, thread, tmp_path, "--policy", "ask", "--resume", skip))

    assert settled == {"last": "done: sent (checked by a human)", "interrupts": []}
    assert len(lines(tmp_path / "attempts.log")) == 1  # the human's answer, not a new send
    assert len(lines(tmp_path / "outbox.log")) == 1


def test_ask_answered_retry_resends_under_the_same_key(server: Any, tmp_path: Path) -> None:
    thread = "email/ask-retry"
    kill_after_the_email(server, thread, tmp_path, "ask")
    assert outcome(run_agent(server, thread, tmp_path, "--policy", "ask"))["interrupts"]

    settled = outcome(run_agent(server, thread, tmp_path, "--policy", "ask", "--resume", '"retry"'))

    assert settled == {"last": "done: sent to ada@example.com", "interrupts": []}
    attempts = lines(tmp_path / "attempts.log")
    assert len(attempts) == 2 and attempts[0] == attempts[1]
    assert len(lines(tmp_path / "outbox.log")) == 1
