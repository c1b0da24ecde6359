"""The README's Python quickstart: its example command, run as the README writes it (but for the
interpreter and the server address) against a real server, prints a recovery from step 3."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def quickstart_block() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Python quickstart", 1)[1]
    match = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert match, "the README's Python quickstart has no sh block"
    return match.group(1)


def test_the_readme_quickstart_example_crashes_at_step_5_and_resumes_from_step_3(server) -> None:
    block = quickstart_block()
    assert ".venv/bin/pip install ./clients/python" in block
    (command,) = [line for line in block.splitlines() if "clients/python/examples/" in line]
    argv = shlex.split(command.replace("127.0.0.1:50051", server.addr))
    assert argv[0] == ".venv/bin/python"
    done = subprocess.run([sys.executable, *argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "step 5: simulated crash" in lines
    assert "recovered_from_step=3" in lines
    assert "lookup calls: 8 for 8 steps (2 replayed from the journal)" in lines
    # Steps 4 and 5 ran twice: before the crash and after the recovery from step 3.
    assert [line for line in lines if line.startswith("step ") and line.endswith(" done")] == [
        f"step {s} done" for s in (1, 2, 3, 4, 5, 4, 5, 6, 7, 8)
    ]
