"""Strategies, error classification, in-doubt policies and the resurrection cooldown: the runner's
rules, no server."""

from __future__ import annotations

import time

import grpc
import pytest

from checkpointd import (
    ApprovalRequired,
    CheckpointStore,
    FatalError,
    InDoubt,
    InDoubtPolicy,
    RecoverableAgent,
    RecoveryPolicy,
    StepContext,
    Strategy,
    TransientError,
)
from checkpointd.classify import ErrorClass, ErrorClassifier, is_fenced
from checkpointd.context import in_doubt_action, settle_in_doubt
from checkpointd.errors import DataLoss, FailedPrecondition, Unavailable, from_rpc_error


def test_strategies_parse_and_decide_when_to_save() -> None:
    every_three = Strategy.parse("every_n")
    assert [s for s in range(1, 8) if every_three.saves_after(s, False)] == [3, 6]
    hybrid = Strategy.parse("hybrid:5")
    assert hybrid.saves_after(2, True) and not hybrid.saves_after(2, False)
    each = Strategy.parse("every_step,before_llm")
    assert each.before_llm and each.saves_after(1, False)
    assert str(each) == "every_step,before_llm"
    assert str(Strategy.parse("every_n:4,after_tools")) == "every_n:4,after_tools"
    for bad in ("every_n:0", "sometimes", "every_n:2,after_lunch", "every_step:2"):
        with pytest.raises(ValueError):
            Strategy.parse(bad)


def test_typed_errors_win_and_patterns_classify_the_rest() -> None:
    classifier = ErrorClassifier()
    assert classifier.classify(TransientError("invalid credentials")) is ErrorClass.TRANSIENT
    assert classifier.classify(FatalError("timeout")) is ErrorClass.FATAL
    assert classifier.classify(RuntimeError("Invalid Credentials for provider")) is ErrorClass.FATAL
    assert classifier.classify(ModuleNotFoundError("No module named 'x'")) is ErrorClass.FATAL
    assert classifier.classify(ConnectionResetError("connection reset by peer")) is ErrorClass.TRANSIENT
    assert classifier.classify(Unavailable("down")) is ErrorClass.TRANSIENT
    assert classifier.classify(DataLoss("corrupt")) is ErrorClass.FATAL
    custom = ErrorClassifier(["quota exceeded"])
    assert custom.classify(RuntimeError("Quota Exceeded")) is ErrorClass.FATAL


def call(corrupt: bool = False) -> InDoubt:
    return InDoubt("step-2/send_email/0", "send_email", 2, "k", corrupt)


def test_every_policy_settles_an_in_doubt_call_its_own_way() -> None:
    settle_in_doubt(call(), InDoubtPolicy.RETRY_WITH_KEY, None)
    with pytest.raises(ApprovalRequired) as asked:
        settle_in_doubt(call(), InDoubtPolicy.ASK, None)
    assert asked.value.action == in_doubt_action("step-2/send_email/0") == "in_doubt step-2/send_email/0"
    settle_in_doubt(call(), InDoubtPolicy.ASK, True)
    with pytest.raises(FatalError):
        settle_in_doubt(call(), InDoubtPolicy.ASK, False)
    with pytest.raises(FatalError, match="step-2/send_email/0"):
        settle_in_doubt(call(), InDoubtPolicy.FAIL, None)


def test_a_corrupt_call_is_always_put_to_a_human() -> None:
    with pytest.raises(ApprovalRequired):
        settle_in_doubt(call(corrupt=True), InDoubtPolicy.RETRY_WITH_KEY, None)


def test_status_codes_become_their_error_classes() -> None:
    class Failed(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.DATA_LOSS

        def details(self) -> str:
            return "checksum mismatch"

        def trailing_metadata(self) -> tuple:
            return ()

    error = from_rpc_error(Failed())
    assert isinstance(error, DataLoss) and error.reason is None and "checksum mismatch" in str(error)


async def test_the_three_resurrections_are_spread_over_the_default_cooldown() -> None:
    attempts: list[float] = []

    def provider_down(ctx: StepContext) -> None:
        attempts.append(time.monotonic())
        raise TransientError("provider unavailable")

    recoverable = RecoverableAgent(provider_down, CheckpointStore.in_memory())
    # The Rust runner's defaults (crates/runner/src/recovery.rs): 3 resurrections, 2 s apart.
    assert recoverable.policy.cooldown == RecoveryPolicy().cooldown == 2.0
    assert recoverable.policy.max_resurrections == 3
    with pytest.raises(TransientError):
        await recoverable.run_with_recovery(None, "provider-down")
    gaps = [later - earlier for earlier, later in zip(attempts, attempts[1:], strict=False)]
    assert len(attempts) == 4 and all(gap >= 2.0 for gap in gaps), gaps


def test_a_save_past_a_lost_log_is_resumed_not_taken_for_a_lost_lease() -> None:
    lost_log = FailedPrecondition("log behind", reason="MESSAGE_LOG_BEHIND")
    assert not is_fenced(lost_log)
    assert ErrorClassifier().classify(lost_log) is ErrorClass.TRANSIENT
    for reason in ("STALE_EPOCH", "LEASE_LOST", "STEP_BEHIND_LATEST", None):
        assert is_fenced(FailedPrecondition("fenced", reason=reason))
