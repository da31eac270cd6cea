"""The engine: the ``Memory`` facade, which orchestrates the store, the lifecycle workers and
recall, and its background workers (enrichment, extraction)."""

from ..lifecycle import EXPORT_FORMAT
from ..models import EntityIn, MemoryIn, MemoryPatch, MessageIn, RelationIn
from .async_memory import AsyncMemory
from .listing import list_all
from .memory import Memory

__all__ = ["AsyncMemory", "EXPORT_FORMAT", "EntityIn", "Memory", "MemoryIn", "MemoryPatch", "MessageIn", "RelationIn", "list_all"]
