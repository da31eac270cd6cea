"""Pydantic models: the records stored and the results returned."""

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
    MemoryRecord,
    Message,
    Node,
    NodeKind,
    Procedure,
    Record,
    Relation,
    Session,
    Source,
    Status,
    Step,
    check_vector,
    new_id,
    utcnow,
)
from .results import Context, ContextSection, History, Neighbourhood, ScoreBreakdown, ScoredItem, item_text

__all__ = [
    "LAYERS", "NODE_TYPES", "SOURCE_CONFIDENCE", "Context", "ContextSection", "Edge", "EdgeType", "Entity",
    "Episode", "History", "Layer", "MemoryRecord", "Message", "Neighbourhood", "Node", "NodeKind", "Procedure",
    "Record", "Relation", "Scorable", "ScoreBreakdown", "ScoredItem", "Session", "Source", "Status", "Step", "check_vector",
    "item_text", "new_id", "utcnow",
]
