"""A Python agent process killed with SIGKILL mid-run is recovered by a new process, with no
tool re-run and no side effect repeated (the email in doubt is settled by its idempotency key)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from waiting import wait_until

AGENT = Path(__file__).resolve().parent / "crash_agent.py"


def test_a_sigkilled_agent_process_is_recovered_by_a_new_one_without_rerunning_tools(
    server, tmp_path: Path
) -> None:
    first = subprocess.Popen(
        [sys.executable, str(AGENT), server.target, "killed-run", str(tmp_path), "--hang-after-email"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: (tmp_path / "hanging").exists() or first.poll() is not None, "step 5's email")
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    assert first.returncode == -signal.SIGKILL
    assert (tmp_path / "effects.log").read_text().count("\n") == 1

    second = subprocess.run(
        [sys.executable, str(AGENT), server.target, "killed-run", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout.strip().splitlines()[-1])
    assert result["recovered_from_step"] == 3
    assert result["result"] == {"total": sum(10 * s for s in range(1, 9))}

    tools = Counter((tmp_path / "tools.log").read_text().splitlines())
    lookups = {line: n for line, n in tools.items() if line.startswith("lookup@")}
    # Every lookup ran exactly once across both processes: steps 4 and 5 were replayed.
    assert lookups == {f"lookup@{s}": 1 for s in range(1, 9)}
    # The email call was in doubt (intent, no result): re-run once with the same key, which
    # the tool honoured, so exactly one email went out.
    emails = [line for line in tools if line.startswith("send_email@")]
    assert len(emails) == 1 and tools[emails[0]] == 2
    effects = (tmp_path / "effects.log").read_text().splitlines()
    assert len(effects) == 1 and json.loads(effects[0])["key"] == emails[0].split("@", 1)[1]
