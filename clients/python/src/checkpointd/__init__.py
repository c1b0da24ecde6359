"""checkpointd for Python: clients, checksum v1, the recovery loop and a queue worker.

- `Client` / `AsyncClient`: every RPC of CheckpointService and TaskService.
- `CheckpointStore`, `Checkpoint`, `RecoverableAgent`: the recovery loop for agent authors.
- `python -m checkpointd.worker module:agent`: the queue worker.
- `CheckpointdError` and its subclasses: failed calls, with `.code` and `.reason`.
"""

from .aio import AsyncClient
from .classify import ApprovalRequired, Decision, ErrorClassifier, FatalError, TransientError
from .client import Client
from .context import InDoubtPolicy, StepContext
from .digest import arguments_digest
from .errors import (
    AlreadyExists,
    CheckpointdError,
    DataLoss,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ReplayMismatch,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from .recovery import Done, RecoverableAgent, RecoveryPolicy
from .store import Checkpoint, CheckpointStore, InDoubt, PassedOver, Resumed
from .strategy import Strategy

__all__ = [
    "AlreadyExists",
    "ApprovalRequired",
    "AsyncClient",
    "Checkpoint",
    "CheckpointStore",
    "CheckpointdError",
    "Client",
    "DataLoss",
    "Decision",
    "Done",
    "ErrorClassifier",
    "FailedPrecondition",
    "FatalError",
    "InDoubt",
    "InDoubtPolicy",
    "InvalidArgument",
    "NotFound",
    "PassedOver",
    "PermissionDenied",
    "RecoverableAgent",
    "RecoveryPolicy",
    "ReplayMismatch",
    "ResourceExhausted",
    "Resumed",
    "StepContext",
    "Strategy",
    "TransientError",
    "Unauthenticated",
    "Unavailable",
    "arguments_digest",
]
