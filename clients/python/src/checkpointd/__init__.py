"""checkpointd for Python: clients, checksum v1, the recovery loop and a queue worker.

- `Client` / `AsyncClient`: every RPC of CheckpointService and TaskService.
- `CheckpointStore`, `Checkpoint`, `RecoverableAgent`: the recovery loop for agent authors.
- `python -m checkpointd.worker module:agent`: the queue worker.
- `CheckpointdError` and its subclasses: failed calls, with `.code` and `.reason`.
"""

from .aio import AsyncClient
from .client import Client
from .errors import (
    AlreadyExists,
    CheckpointdError,
    DataLoss,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)

__all__ = [
    "AlreadyExists",
    "AsyncClient",
    "CheckpointdError",
    "Client",
    "DataLoss",
    "FailedPrecondition",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "ResourceExhausted",
    "Unauthenticated",
    "Unavailable",
]
