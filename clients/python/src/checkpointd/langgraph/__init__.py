"""LangGraph integration: `CheckpointdSaver`, a LangGraph checkpointer backed by checkpointd,
and `exactly_once`, which makes a graph's side-effecting tools run once across crashes.

    from checkpointd.langgraph import CheckpointdSaver
    graph = builder.compile(checkpointer=CheckpointdSaver("127.0.0.1:50051"))

Needs the `langgraph` extra: `pip install "checkpointd[langgraph]"`.
"""

from ..errors import ReplayMismatch
from ._fallback import FALLBACK_KEY, CorruptCheckpoints
from ._ownership import ThreadTakenOver
from .saver import CheckpointdSaver
from .tools import IN_DOUBT_INTERRUPT, ExactlyOnceTool, ToolCallInDoubt, exactly_once, idempotency_key

__all__ = [
    "FALLBACK_KEY",
    "IN_DOUBT_INTERRUPT",
    "CheckpointdSaver",
    "CorruptCheckpoints",
    "ThreadTakenOver",
    "ExactlyOnceTool",
    "ReplayMismatch",
    "ToolCallInDoubt",
    "exactly_once",
    "idempotency_key",
]
