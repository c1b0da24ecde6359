"""The Python client's turn in `checkpointd-bench --scenarios languages`: Saves with a client
checksum and LoadLatests verified on the client, each timed, printed as one JSON line of
microseconds. Every language's save loop takes the same flags and does the same work.

    python bench/save_loop.py --target http://127.0.0.1:50051 --run r1 \
        --state-file state.json --iterations 300 --warmup 30
"""

from __future__ import annotations

import argparse
import json
import time

from checkpointd import Client
from checkpointd.checksum import MessageChain, ToolChain, checkpoint_checksum

CONTENT_TYPE = "application/json"


def checksum(run_id: str, step: int, state: bytes) -> str:
    return checkpoint_checksum(
        run_id=run_id,
        step=step,
        content_type=CONTENT_TYPE,
        state=state,
        metadata={},
        messages=MessageChain(),
        tools=ToolChain(),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--state-file", required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=0)
    args = parser.parse_args()
    with open(args.state_file, "rb") as file:
        state = file.read()
    saves: list[int] = []
    loads: list[int] = []
    with Client(args.target.removeprefix("http://")) as client:
        for step in range(1, args.warmup + args.iterations + 1):
            start = time.perf_counter_ns()
            client.save(
                run_id=args.run,
                step=step,
                content_type=CONTENT_TYPE,
                state=state,
                checksum=checksum(args.run, step, state),
            )
            saved = time.perf_counter_ns()
            loaded = client.load_latest(run_id=args.run).checkpoint
            if loaded.step != step or loaded.checksum != checksum(args.run, loaded.step, loaded.state):
                raise SystemExit(f"LoadLatest of {args.run} did not verify at step {step}")
            done = time.perf_counter_ns()
            if step > args.warmup:
                saves.append((saved - start) // 1000)
                loads.append((done - saved) // 1000)
    print(json.dumps({"save_us": saves, "load_us": loads}))


if __name__ == "__main__":
    main()
