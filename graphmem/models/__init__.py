"""Pydantic models: the records stored and the results returned."""

from .inputs import EntityIn, MemoryIn, MemoryPatch, MessageIn, RelationIn
from .records import (
    Scorable,
    LAYERS,
    NODE_TYPES,
    SOURCE_CONFIDENCE,
    Edge,
    EdgeType,
    Entity,
    Episode,
    Layer,
    LifecycleAction,
    MaintenanceRun,
    MemoryRecord,
    Message,
    Node,
    NodeKind,
    Procedure,
    ProcedureStep,
    Record,
    Relation,
    Session,
    Source,
    Status,
    Step,
    SupersededBy,
    ToolCall,
    Tool,
    ToolFunction,
    ToolInvocation,
    Trace,
    TraceStep,
    check_vector,
    new_id,
    utcnow,
)
from .results import (
    Context, ContextSection, Explanation, History, MergeSuggestion, Neighbourhood, ScoreBreakdown, ScoredItem,
    SimilarTrace, ToolStats, TraceStepView, TraceView, embed_text, item_text,
)

__all__ = [
    "LAYERS", "NODE_TYPES", "SOURCE_CONFIDENCE", "Context", "ContextSection", "Edge", "EdgeType", "Entity",
    "EntityIn", "Episode", "Explanation", "History", "Layer", "LifecycleAction", "MaintenanceRun", "MemoryIn", "MemoryPatch", "MergeSuggestion",
    "MessageIn", "RelationIn", "MemoryRecord", "Message", "Neighbourhood", "Node", "NodeKind", "Procedure",
    "ProcedureStep", "Record", "Relation", "Scorable", "ScoreBreakdown", "ScoredItem", "Session", "SimilarTrace", "Source",
    "Status", "Step", "SupersededBy", "Tool", "ToolCall", "ToolFunction", "ToolInvocation", "ToolStats", "Trace",
    "TraceStep", "TraceStepView", "TraceView", "check_vector", "embed_text",
    "item_text", "new_id", "utcnow",
]
