"""graphmem's closed vocabularies as ``typing.Literal`` types: who speaks a turn, the layers
recall searches, the node kinds, the statuses of a tool call. Plain typing, no pydantic, so the
command line names them in its options without loading the models (``graphmem.models``
re-exports them)."""

from typing import Literal

Role = Literal["user", "assistant", "system", "tool"]  # who speaks a turn
Layer = Literal["memory", "episode", "procedure", "message", "trace"]
NodeKind = Literal["session", "message", "memory", "entity", "episode", "procedure", "step", "trace", "trace_step",
                   "tool_call", "tool", "maintenance"]
# pending: started, not finished yet (``update_tool_call`` finishes it)
ToolStatus = Literal["success", "failure", "error", "timeout", "cancelled", "pending"]
