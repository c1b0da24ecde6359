"""The `checkpoint.v1` messages and enums, generated from proto/ at build time: build requests
(`v1.SaveRequest(...)`) and read responses with them (`v1.TASK_STATE_COMPLETED`)."""

from ._proto.checkpoint_pb2 import *  # noqa: F403
from ._proto.task_pb2 import *  # noqa: F403
