"""The engine: the ``Memory`` facade, which orchestrates the store, the lifecycle workers and
recall, and its background workers (enrichment, extraction)."""

from typing import TYPE_CHECKING

from ..lifecycle import EXPORT_FORMAT
from ..models import EntityIn, MemoryIn, MemoryPatch, MessageIn, RelationIn
from .listing import list_all
from .memory import Memory

if TYPE_CHECKING:
    from .async_memory import AsyncMemory


def __getattr__(name: str) -> object:
    """``AsyncMemory`` loads asyncio on first use: the command line and sync programs skip it."""
    if name != "AsyncMemory":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .async_memory import AsyncMemory

    return AsyncMemory


__all__ = ["AsyncMemory", "EXPORT_FORMAT", "EntityIn", "Memory", "MemoryIn", "MemoryPatch", "MessageIn", "RelationIn", "list_all"]
