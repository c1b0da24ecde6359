"""A LangGraph graph with a tool node, its process SIGKILLed mid-run, is resumed from
checkpointd by a new process: no tool call is repeated and the final state is complete.

The kill lands while call 6 hangs and call 5, its sibling in the same super-step, has finished
and its result is in the journal as a pending write. The new process must restore the
checkpoint, apply call 5's pending write instead of running it again, run call 6 once, and
finish the remaining turns.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from waiting import wait_until

from checkpointd import Client
from checkpointd.langgraph import _naming

AGENT = Path(__file__).resolve().parent / "graph_agent.py"


def number(call: str) -> int:
    return int(call.split("-")[1])


def test_a_sigkilled_graph_resumes_from_checkpointd_without_repeating_a_tool_call(
    server, tmp_path: Path
) -> None:
    thread = "graph thread/1"
    run = _naming.run_id(thread, "")
    first = subprocess.Popen(
        [sys.executable, str(AGENT), server.target, thread, str(tmp_path), "--block-at", "6"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with Client(server.target) as client:

        def call_5_journalled() -> bool:
            if first.poll() is not None:
                raise AssertionError(first.stderr.read().decode() if first.stderr else "exited")
            try:
                entries = client.get_journal(run_id=run).entries
            except Exception:  # noqa: BLE001 - the run may not exist yet
                return False
            return any(b"call-5" in e.output for e in entries)

        try:
            wait_until(lambda: (tmp_path / "blocked").exists(), "call 6 to hang", timeout=60)
            wait_until(call_5_journalled, "call 5's pending write in the journal", timeout=60)
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
    assert first.returncode == -signal.SIGKILL
    before = (tmp_path / "effects.log").read_text().splitlines()
    assert sorted(before, key=number) == [f"call-{n}" for n in range(1, 6)]  # parallel: any order

    second = subprocess.run(
        [sys.executable, str(AGENT), server.target, thread, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 0, second.stderr
    final = json.loads(second.stdout.strip().splitlines()[-1])
    assert final["resumed"] is True
    effects = (tmp_path / "effects.log").read_text().splitlines()
    assert sorted(effects, key=number) == [f"call-{n}" for n in range(1, 9)]
    assert len(effects) == len(set(effects)) == 8, effects
    assert sorted(final["tool_results"]) == sorted(f"appended {n}" for n in range(1, 9))
    assert final["last"] == "finished after 8 calls"
    # human + 4 turns x (AI + 2 tool results) + the closing AI message
    assert final["messages"] == 1 + 4 * 3 + 1
