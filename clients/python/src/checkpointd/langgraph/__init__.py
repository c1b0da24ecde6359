"""LangGraph integration: `CheckpointdSaver`, a LangGraph checkpointer backed by checkpointd.

    from checkpointd.langgraph import CheckpointdSaver
    graph = builder.compile(checkpointer=CheckpointdSaver("127.0.0.1:50051"))

Needs the `langgraph` extra: `pip install "checkpointd[langgraph]"`.
"""

from .saver import CheckpointdSaver

__all__ = ["CheckpointdSaver"]
