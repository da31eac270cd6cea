"""The engine: the ``Memory`` facade and its validated inputs."""

from .inputs import EntityIn, MemoryIn, MemoryPatch, MessageIn, RelationIn
from .memory import EXPORT_FORMAT, Memory

__all__ = ["EXPORT_FORMAT", "EntityIn", "Memory", "MemoryIn", "MemoryPatch", "MessageIn", "RelationIn"]
