"""Fatal versus transient: typed errors first, then the gRPC code, then message patterns."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc

from .errors import CheckpointdError, ReplayMismatch


class FatalError(Exception):
    """Will fail again on retry: the run is not resurrected and the task is not retried."""


class TransientError(Exception):
    """May succeed on retry: the run is resurrected from its latest valid checkpoint."""


@dataclass
class Decision:
    """A human's decision on an approval request."""

    action: str
    approved: bool
    decided_by: str = ""
    comment: str = ""


class ApprovalRequired(Exception):
    """A step needs a human decision first (raised by `StepContext.request_approval`)."""

    def __init__(self, action: str, details: Any = None) -> None:
        super().__init__(f"approval required for {action}")
        self.action = action
        self.details = details


class ErrorClass(enum.Enum):
    FATAL = "fatal"
    TRANSIENT = "transient"


#: Message fragments that make an untyped error fatal (matched case-insensitively).
DEFAULT_FATAL_PATTERNS = (
    "credential",
    "unauthorized",
    "unauthenticated",
    "authentication",
    "invalid api key",
    "permission denied",
    "forbidden",
    "no module named",
    "module not found",
    "missing configuration",
    "not configured",
)

# The service refused the data or the caller: retrying sends the same thing.
_FATAL_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.DATA_LOSS,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


class ErrorClassifier:
    def __init__(self, fatal_patterns: Iterable[str] = DEFAULT_FATAL_PATTERNS) -> None:
        self.fatal_patterns = [p.lower() for p in fatal_patterns]

    def classify(self, error: BaseException) -> ErrorClass:
        if isinstance(error, (FatalError, ReplayMismatch)):
            # A call id reused with other arguments fails the same way on every retry.
            return ErrorClass.FATAL
        if isinstance(error, (TransientError, ApprovalRequired)):
            return ErrorClass.TRANSIENT
        if isinstance(error, CheckpointdError):
            return ErrorClass.FATAL if error.code in _FATAL_CODES else ErrorClass.TRANSIENT
        if isinstance(error, (ImportError, NameError, TypeError, AttributeError, SyntaxError)):
            return ErrorClass.FATAL
        message = f"{type(error).__name__}: {error}".lower()
        if any(pattern in message for pattern in self.fatal_patterns):
            return ErrorClass.FATAL
        return ErrorClass.TRANSIENT


#: FAILED_PRECONDITION reasons that do not mean another owner has the run. MESSAGE_LOG_BEHIND:
#: the server lost the saves this process built on (a failover to a standby that missed them);
#: the rule is to Resume and go on from what it restores, so the run is resurrected.
#: JOURNAL_BEHIND: the same for the tool journal a Save said it covers (`tool_count`).
RESUMABLE_REASONS = frozenset({"MESSAGE_LOG_BEHIND", "JOURNAL_BEHIND"})


def is_fenced(error: BaseException) -> bool:
    """A write refused for a stale epoch or a lost lease: another owner has the run."""
    return (
        isinstance(error, CheckpointdError)
        and error.code == grpc.StatusCode.FAILED_PRECONDITION
        and error.reason not in RESUMABLE_REASONS
    )
