"""graphmem: knowledge-graph memory for AI agents.

    from graphmem import Memory
    mem = Memory("graphmem.db")
    mem.add_messages("s1", [{"role": "user", "content": "I prefer TypeScript over JavaScript"}])
    mem.recall("which language does the user like?")
"""

from .engine import EntityIn, Memory, MemoryIn, MessageIn, RelationIn
from .errors import (
    ConfigurationError,
    EmbeddingError,
    GraphMemError,
    ImportFormatError,
    NamespaceNotFoundError,
    NotFoundError,
    StoreError,
    ValidationError,
)
from .models import (
    Context,
    Edge,
    EdgeType,
    Entity,
    Episode,
    History,
    MemoryRecord,
    Message,
    Neighbourhood,
    Procedure,
    Relation,
    ScoreBreakdown,
    ScoredItem,
    Session,
    Source,
    Status,
    Step,
)
from .settings import RecallOptions, ScoreWeights, Settings

__version__ = "0.1.0"

__all__ = [
    "ConfigurationError", "Context", "EmbeddingError", "Edge", "EdgeType", "Entity", "EntityIn", "Episode",
    "GraphMemError", "History", "ImportFormatError", "Memory", "MemoryIn", "MemoryRecord", "Message",
    "MessageIn", "NamespaceNotFoundError", "Neighbourhood", "NotFoundError", "Procedure", "RecallOptions",
    "Relation", "RelationIn", "ScoreBreakdown", "ScoreWeights", "ScoredItem", "Session", "Settings", "Source",
    "Status", "Step", "StoreError", "ValidationError",
]
