"""graphmem: knowledge-graph memory for AI agents.

    from graphmem import Memory
    mem = Memory("graphmem.db")
    mem.add_messages("s1", [{"role": "user", "content": "I prefer TypeScript over JavaScript"}])
    mem.recall("which language does the user like?")
"""

import importlib as _importlib
import typing as _typing

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

if _typing.TYPE_CHECKING:  # the names below load on first use (see __getattr__); type checkers see them here
    from .engine import AsyncMemory, Memory
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

# Public names that load their module on first use, so that ``import graphmem`` (and the
# command line, a subpackage) does not pay for numpy, networkx and pydantic's models until a
# program asks for them.
_LAZY: dict[str, str] = {
    "AsyncMemory": "engine", "Memory": "engine",
    **dict.fromkeys((
        "Context", "Edge", "EdgeType", "Entity", "EntityIn", "Episode", "Explanation", "History",
        "LifecycleAction", "MaintenanceRun", "MemoryIn", "MemoryRecord", "Message", "MessageIn",
        "MergeSuggestion", "Neighbourhood", "Procedure", "Relation", "RelationIn",
        "ScoreBreakdown", "ScoredItem", "Session", "Source", "Status", "Step", "ToolCall",
        "ToolFunction",
    ), "models"),
    **dict.fromkeys(("LifecycleSettings", "RecallFilter", "RecallOptions", "ScoreWeights", "Settings"), "settings"),
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphmem' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AsyncMemory", "ConfigurationError", "ConflictError", "Context", "EmbeddingError", "Edge", "ExtractionError", "EdgeType", "Entity", "EntityIn", "Episode",
    "Explanation", "GraphMemError", "History", "ImportFormatError", "LifecycleAction", "LifecycleSettings",
    "MaintenanceRun", "Memory", "MergeSuggestion", "ModelLoadError", "MemoryIn", "MemoryRecord", "Message", "MessageIn", "NamespaceNotFoundError",
    "Neighbourhood", "NotFoundError", "Procedure", "RecallFilter", "RecallOptions",
    "Relation", "RelationIn", "ScoreBreakdown", "ScoreWeights", "ScoredItem", "Session", "Settings", "Source",
    "Status", "Step", "StoreError", "ToolCall", "ToolFunction", "ValidationError", "WriteRace",
]
