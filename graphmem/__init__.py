"""graphmem: knowledge-graph memory for AI agents.

    from graphmem import Memory
    mem = Memory("graphmem.db")
    mem.add_messages("s1", [{"role": "user", "content": "I prefer TypeScript over JavaScript"}])
    mem.recall("which language does the user like?")
"""

from .engine import AsyncMemory, Memory
from .errors import (
    ConfigurationError,
    ConflictError,
    EmbeddingError,
    ExtractionError,
    GraphMemError,
    ImportFormatError,
    ModelLoadError,
    NamespaceNotFoundError,
    NotFoundError,
    StoreError,
    ValidationError,
    WriteRace,
)
from .models import (
    Context,
    Edge,
    EdgeType,
    Entity,
    EntityIn,
    Episode,
    Explanation,
    History,
    LifecycleAction,
    MaintenanceRun,
    MemoryIn,
    MemoryRecord,
    Message,
    MessageIn,
    MergeSuggestion,
    Neighbourhood,
    Procedure,
    Relation,
    RelationIn,
    ScoreBreakdown,
    ScoredItem,
    Session,
    Source,
    Status,
    Step,
    ToolCall,
    ToolFunction,
)
from .settings import LifecycleSettings, RecallFilter, RecallOptions, ScoreWeights, Settings

__version__ = "0.1.0"

__all__ = [
    "AsyncMemory", "ConfigurationError", "ConflictError", "Context", "EmbeddingError", "Edge", "ExtractionError", "EdgeType", "Entity", "EntityIn", "Episode",
    "Explanation", "GraphMemError", "History", "ImportFormatError", "LifecycleAction", "LifecycleSettings",
    "MaintenanceRun", "Memory", "MergeSuggestion", "ModelLoadError", "MemoryIn", "MemoryRecord", "Message", "MessageIn", "NamespaceNotFoundError",
    "Neighbourhood", "NotFoundError", "Procedure", "RecallFilter", "RecallOptions",
    "Relation", "RelationIn", "ScoreBreakdown", "ScoreWeights", "ScoredItem", "Session", "Settings", "Source",
    "Status", "Step", "StoreError", "ToolCall", "ToolFunction", "ValidationError", "WriteRace",
]
