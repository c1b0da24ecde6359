"""The runner of the shared client scenarios (tests/scenarios/*.json, format in its README.md)
for this package: each step's RPC goes through `checkpointd.Client`, so the scenarios hold this
client's request building, error mapping and checksum v1 to what every client must show.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format, message_factory
from google.protobuf.message import Message
from waiting import wait_until

from checkpointd import CheckpointdError, Client
from checkpointd._rpc import CHECKPOINTS, TASKS
from checkpointd.checksum import MessageChain, ToolChain, checkpoint_checksum, idempotency_key

REPO = Path(__file__).resolve().parents[3]
SCENARIOS = REPO / "tests" / "scenarios"
TESTS = Path(__file__).resolve().parent
TYPESCRIPT = REPO / "clients" / "typescript"
#: The tenant a call without a credential acts in.
DEFAULT_TENANT = "default"
#: TaskService methods whose `Client` name says "task" (the others are the snake_case name).
TASK_METHODS = {"Get": "get_task", "List": "list_tasks", "Cancel": "cancel_task", "Requeue": "requeue_task"}


def load_scenarios() -> dict[str, dict[str, Any]]:
    """Every scenario, by its file's stem."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(SCENARIOS.glob("*.json"))}


def expand_bytes(value: Any) -> Any:
    """`{"$utf8": TEXT}` anywhere becomes TEXT's UTF-8 bytes in base64, as proto JSON writes bytes."""
    if isinstance(value, dict):
        if set(value) == {"$utf8"}:
            return base64.b64encode(value["$utf8"].encode()).decode()
        return {k: expand_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_bytes(v) for v in value]
    return value


def scalar(value: Any) -> str:
    """A scalar as the spec compares it: 3 and "3" (proto JSON's int64) are the same."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def is_default(value: Any) -> bool:
    """What proto JSON leaves out: zero, false, empty and the UNSPECIFIED enum value."""
    if isinstance(value, dict | list):
        return not value
    return scalar(value) in ("0", "false", "") or scalar(value).endswith("_UNSPECIFIED")


def match(expected: Any, actual: Any, where: str = "") -> None:
    """Fails unless `actual` holds `expected`: objects by subset, arrays whole, scalars by text."""
    if isinstance(expected, dict):
        actual = actual if actual is not None else {}
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            if key not in actual:
                assert is_default(value), f"{where}.{key}: expected {value!r}, absent"
                continue
            match(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        actual = actual if actual is not None else []
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        assert len(actual) == len(expected), f"{where}: expected {len(expected)} items, got {actual!r}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            match(want, got, f"{where}[{index}]")
    else:
        assert scalar(expected) == scalar(actual), f"{where}: expected {expected!r}, got {actual!r}"


def lookup(value: Any, path: str) -> Any:
    """The value at a dotted path (`tasks.0.attempt`) of a response's proto JSON."""
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def tool_chain(entries: list[Any], tool_count: int | None) -> ToolChain:
    """Checksum v1's tool chain over journal entries (results and intents) in `seq` order, up
    to `tool_count` (all of them when None)."""
    tools = ToolChain()
    for e in sorted(entries, key=lambda entry: entry.seq):
        if tool_count is not None and e.seq > tool_count:
            break
        if hasattr(e, "output"):
            tools = tools.push_result(e.call_id, e.tool_name, e.step, e.output, e.is_error)
        else:
            tools = tools.push_intent(e.call_id, e.tool_name, e.step)
    return tools


def verify(checkpoint: Any, results: list[Any], intents: list[Any]) -> str | None:
    """Checksum v1 recomputed from a loaded checkpoint (full history) and its journal, as the
    contract's "Verifying a loaded checkpoint" says; None when it is the stored one."""
    tools = tool_chain([*results, *intents], checkpoint.tool_count)
    if tools.length != checkpoint.tool_count:
        return f"{tools.length} of the {checkpoint.tool_count} journal entries came back"
    computed = checkpoint_checksum(
        run_id=checkpoint.run_id,
        step=checkpoint.step,
        content_type=checkpoint.content_type,
        state=checkpoint.state,
        metadata=dict(checkpoint.metadata),
        messages=MessageChain().extend((m.role, m.content) for m in checkpoint.messages),
        tools=tools,
    )
    return None if computed == checkpoint.checksum else f"stored {checkpoint.checksum}, computed {computed}"


@dataclass
class RunView:
    """What this runner saw of a run: its message log and journal, for client checksums."""

    messages: list[tuple[str, bytes]] = field(default_factory=list)
    journal: dict[int, Any] = field(default_factory=dict)

    def chains(
        self, offset: int, new: list[tuple[str, bytes]], tool_count: int | None
    ) -> tuple[MessageChain, ToolChain]:
        messages = MessageChain().extend(self.messages[:offset] + new)
        return messages, tool_chain(list(self.journal.values()), tool_count)

    def restored(self, answer: Any) -> None:
        """A load or Resume returned the run as the server holds it: start over from that."""
        if answer.HasField("checkpoint") and answer.checkpoint.messages_offset == 0:
            self.messages = [(m.role, m.content) for m in answer.checkpoint.messages]
        elif getattr(answer, "restarted_from_scratch", False):
            self.messages = []
        self.journal = {e.seq: e for e in [*answer.tool_results, *answer.tool_intents]}


class Runner:
    """Runs one scenario's steps against a server (conftest.Server)."""

    def __init__(self, server: Any, keys: dict[str, dict[str, str]], work: Path) -> None:
        self.server = server
        self.keys = keys
        self.work = work
        self.vars: dict[str, Any] = {}
        self.runs: dict[str, RunView] = {}

    # Values -------------------------------------------------------------------------------

    def substitute(self, value: Any) -> Any:
        """`${name}` becomes a bound value (kept whole when it is the entire string);
        `${idempotencyKey:RUN:CALL}` the key v1 of that call in the default tenant."""
        if isinstance(value, dict):
            return {k: self.substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if not isinstance(value, str):
            return value
        whole = re.fullmatch(r"\$\{([^}]+)\}", value)
        if whole:
            return self.variable(whole.group(1))
        return re.sub(r"\$\{([^}]+)\}", lambda m: scalar(self.variable(m.group(1))), value)

    def variable(self, name: str) -> Any:
        if name.startswith("idempotencyKey:"):
            _, run_id, call_id = name.split(":", 2)
            return idempotency_key(DEFAULT_TENANT, run_id, call_id)
        assert name in self.vars, f"${{{name}}} is not bound yet (bound: {sorted(self.vars)})"
        return self.vars[name]

    def view(self, run_id: str) -> RunView:
        return self.runs.setdefault(run_id, RunView())

    # Steps --------------------------------------------------------------------------------

    def run(self, scenario: dict[str, Any]) -> None:
        for index, step in enumerate(scenario["steps"]):
            kind = next(k for k in ("call", "corrupt", "cli", "continue", "agent") if k in step)
            try:
                getattr(self, f"step_{kind}")(step)
            except AssertionError as error:
                raise AssertionError(f"step {index} ({kind} {step.get(kind)!r}): {error}") from error

    def client(self, step: dict[str, Any]) -> Client:
        token = step.get("token")
        tenant = step.get("tenant")
        if "as" in step:
            key = self.keys[step["as"]]
            token = key["token"]
            tenant = tenant or key["tenant"]
        return Client(self.server.target, token=token, tenant=tenant, timeout=30)

    def step_call(self, step: dict[str, Any]) -> None:
        name = step["call"]
        service = CHECKPOINTS if name in CHECKPOINTS.methods_by_name else TASKS
        method = service.methods_by_name[name]
        body = self.substitute(expand_bytes(step.get("request", {})))
        request = json_format.ParseDict(body, message_factory.GetMessageClass(method.input_type)())
        if "checksum" in step:
            self.with_checksum(request, step["checksum"])
        python_name = TASK_METHODS.get(name) if service is TASKS else None
        python_name = python_name or re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
        expect = step.get("expect", {"ok": {}})
        with self.client(step) as client:
            call: Callable[..., Message] = getattr(client, python_name)
            try:
                if name == "Resume" and not request.capabilities:
                    # Client.resume declares the in-doubt capability unless told `capabilities=[]`.
                    fields = {f.name: v for f, v in request.ListFields()}
                    response = call(capabilities=[], **fields)
                else:
                    response = call(request)
            except CheckpointdError as error:
                assert "error" in expect, f"expected success, got {error}"
                want = self.substitute(expect["error"])
                assert error.code.name == want["code"], f"expected {want['code']}, got {error}"
                assert error.reason == want["reason"], f"expected reason {want['reason']}, got {error}"
                for key, value in want.get("metadata", {}).items():
                    assert error.metadata.get(key) == value, f"metadata {key}: {error.metadata}"
                return
        assert "ok" in expect, f"expected {expect['error']}, the call succeeded: {response}"
        answer = json_format.MessageToDict(response)
        self.observe(name, request, response)
        if step.get("verify"):
            problem = verify(response.checkpoint, list(response.tool_results), list(response.tool_intents))
            assert response.HasField("checkpoint") and problem is None, f"not verified: {problem}"
        match(self.substitute(expand_bytes(expect["ok"])), answer, name)
        for var, path in step.get("bind", {}).items():
            self.vars[var] = lookup(answer, path)

    def with_checksum(self, request: Any, kind: str) -> None:
        """Sets a Save's checksum: `client` computes v1 over this runner's view of the run,
        `upper` is that in upper case, `wrong` a well-formed checksum of nothing."""
        tool_count = request.tool_count if request.HasField("tool_count") else None
        messages, tools = self.view(request.run_id).chains(
            request.message_offset, [(m.role, m.content) for m in request.messages], tool_count
        )
        right = checkpoint_checksum(
            run_id=request.run_id,
            step=request.step,
            content_type=request.content_type,
            state=request.state,
            metadata=dict(request.metadata),
            messages=messages,
            tools=tools,
        )
        self.vars["clientChecksum"] = right
        request.checksum = {"client": right, "upper": right.upper(), "wrong": "0" * 64}[kind]

    def observe(self, name: str, request: Any, response: Any) -> None:
        """Keeps the runner's view of the run in step with what the server acknowledged."""
        if name == "Save":
            view = self.view(request.run_id)
            view.messages = view.messages[: request.message_offset] + [
                (m.role, m.content) for m in request.messages
            ]
        elif name == "RecordToolResult":
            self.view(request.run_id).journal[response.result.seq] = response.result
        elif name == "RecordToolIntent":
            self.view(request.run_id).journal[response.intent.seq] = response.intent
        elif name in ("LoadLatest", "Resume"):
            self.view(request.run_id).restored(response)

    def step_corrupt(self, step: dict[str, Any]) -> None:
        """Damages a stored checkpoint's state (`step`) or a journalled result's output (`callId`)."""
        target = step["corrupt"]
        run_id = target["runId"]
        assert re.fullmatch(r"[\w/-]+", run_id + target.get("callId", "")), "corrupt takes plain ids"
        if "step" in target:
            self.server.database.corrupt_state(run_id, int(target["step"]))
            return
        if self.server.database.kind == "sqlite":
            flip, not_intent = "output = CAST(X'00' || substr(output, 2) AS BLOB)", "intent = 0"
        else:
            flip, not_intent = "output = set_byte(output, 0, 0)", "NOT intent"
        self.server.database.execute(
            f"UPDATE tool_results SET {flip} WHERE run_id = '{run_id}' "
            f"AND call_id = '{target['callId']}' AND {not_intent}"
        )

    def step_cli(self, step: dict[str, Any]) -> None:
        args = [scalar(a) for a in self.substitute(step["cli"])]
        done = self.server.cli(*args, check=False)
        expect = step.get("expect", {"exit": 0})
        assert done.returncode == expect.get("exit", 0), f"exit {done.returncode}: {done.stderr}"
        for stream in ("stdout", "stderr"):
            for text in self.substitute(expect.get(stream, [])):
                assert text in getattr(done, stream), f"{stream} lacks {text!r}: {getattr(done, stream)}"

    def step_continue(self, step: dict[str, Any]) -> None:
        """Hands the run to the TypeScript client's continuation program (README: "continue")."""
        script = typescript_program("fixtures/continue-run")
        done = subprocess.run(
            ["node", str(script), f"http://{self.server.target}", step["continue"]["runId"]],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"the TypeScript continuation failed: {done.stderr}"
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        assert answer["language"] == "typescript", answer
        match(step.get("expect", {}), answer, "continue")

    def step_agent(self, step: dict[str, Any]) -> None:
        agent = step["agent"]
        answer = {"reference-example": self.reference_example, "side-effect-agent": self.side_effect_agent}[
            agent
        ](step)
        if answer is not None:
            match(step.get("expect", {}), answer, agent)

    def reference_example(self, step: dict[str, Any]) -> dict[str, Any]:
        assert "by" not in step and "kill" not in step, "the reference example runs as it is"
        example = REPO / "clients" / "python" / "examples" / "crash_and_resume.py"
        done = subprocess.run(
            [sys.executable, str(example), "--server", self.server.target, "--run-id", step["runId"]],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        recovered = re.search(r"^recovered_from_step=(\d+)$", done.stdout, re.MULTILINE)
        calls = re.search(r"^lookup calls: (\d+) for \d+ steps \((\d+) replayed", done.stdout, re.MULTILINE)
        assert recovered and calls, done.stdout
        return {
            "recoveredFromStep": int(recovered.group(1)),
            "toolCalls": int(calls.group(1)),
            "toolsReplayed": int(calls.group(2)),
        }

    def side_effect_agent(self, step: dict[str, Any]) -> dict[str, Any] | None:
        """tests/crash_agent.py, or with `"by": "other"` the TypeScript package's agent
        (test/recovery-crash-agent.ts), so a run crosses languages: killed with SIGKILL once its
        email went out (`kill`), or run to the end, reporting the recovery, the lookups per step
        and the effects that happened. Every process of a run shares its logs, whatever its
        language."""
        work = self.work / step["runId"]
        work.mkdir(exist_ok=True)
        if step.get("by") == "other":
            agent = typescript_program("recovery-crash-agent")
            argv = ["node", str(agent), f"http://{self.server.target}", step["runId"], str(work)]
        else:
            agent = TESTS / "crash_agent.py"
            argv = [sys.executable, str(agent), self.server.target, step["runId"], str(work)]
        if step.get("kill") == "after-side-effect":
            process = subprocess.Popen([*argv, "--hang-after-email"], stderr=subprocess.PIPE)
            try:
                wait_until(lambda: (work / "hanging").exists() or process.poll() is not None, "the email")
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
            finally:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
            assert process.returncode == -signal.SIGKILL
            return None
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.strip().splitlines()[-1])
        tools = (work / "tools.log").read_text().splitlines()
        lookups = Counter(line for line in tools if line.startswith("lookup@"))
        # Each package prints its own result: snake_case in Python, camelCase in TypeScript.
        return {
            "recoveredFromStep": result.get("recovered_from_step", result.get("recoveredFromStep")),
            "result": result["result"],
            "lookupsPerStep": [lookups[f"lookup@{s}"] for s in range(1, 9)],
            "effects": len((work / "effects.log").read_text().splitlines()),
        }


def typescript_program(name: str) -> Path:
    """A compiled program of the TypeScript package's test build (`name` under test/, without
    `.ts`), compiled here when it is missing or older than any TypeScript source (the package's
    dependencies must be installed)."""
    built = TYPESCRIPT / "dist-test" / "test" / f"{name}.js"
    sources = [*(TYPESCRIPT / "src").rglob("*.ts"), *(TYPESCRIPT / "test").rglob("*.ts")]
    if built.exists() and built.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return built
    tsc = TYPESCRIPT / "node_modules" / ".bin" / "tsc"
    assert tsc.exists(), f"the cross-language scenarios need the TypeScript package: `npm ci` in {TYPESCRIPT}"
    done = subprocess.run(
        [str(tsc), "-p", "tsconfig.test.json"], cwd=TYPESCRIPT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"building the TypeScript tests failed: {done.stdout}{done.stderr}"
    return built
