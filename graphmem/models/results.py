"""What reads return: scored results with their factor breakdown, context blocks, histories."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Union

from pydantic import ConfigDict, Field, computed_field

from .fields import Model
from .records import (
    Edge, Entity, Episode, Layer, Message, MemoryRecord, Procedure, ProcedureStep, Relation, ToolInvocation, Trace, TraceStep,
)

Versioned = Annotated[Union[MemoryRecord, Procedure], Field(discriminator="kind")]  # what SUPERSEDES links
Item = Annotated[Union[MemoryRecord, Episode, Procedure, Message, Trace], Field(discriminator="kind")]


class ScoreBreakdown(Model):
    """Each factor in 0..1, and the weighted total. ``semantic``, ``keyword`` and ``graph``
    are the signals blended into ``relevance``."""

    model_config = ConfigDict(frozen=True, json_schema_serialization_defaults_required=True)

    relevance: float
    importance: float
    confidence: float
    recency: float
    frequency: float
    semantic: float = 0.0
    keyword: float = 0.0
    graph: float = 0.0
    context: float = Field(default=0.0, description="relevance from the conversation around a turn (adjacent turns, its "
                           "session) and from the time the query names")
    total: float
    path: str | None = Field(default=None, description="how the graph found the item: \"mentions Alice -manager-> Bob\", "
                             "\"said by Caroline\"")


class ScoredItem(Model):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    layer: Layer
    item: Item
    score: float
    breakdown: ScoreBreakdown
    matched_by: list[Literal["vector", "keyword", "graph", "context", "feedback"]] = Field(
        default_factory=list, description="how it was found; feedback: by meaning near the query and its best hit "
        "(RecallOptions.feedback), not by the query alone")
    tokens: int = Field(default=0, ge=0, description="what the item's text costs in a prompt")
    matched_step: int | None = Field(default=None, description="a procedure found by one of its steps: that step's order")

    @property
    def id(self) -> str:
        return self.item.id

    @computed_field
    @property
    def turns(self) -> list[str]:
        """The conversation turns the item carries: a message itself, the turns a memory was
        derived from, the turns an episode covers."""
        item = self.item
        if item.kind == "message":
            return [item.id]
        return list(getattr(item, "source_message_ids", None) or getattr(item, "message_ids", None) or [])

    @property
    def text(self) -> str:
        return item_text(self.item)


def item_text(item: MemoryRecord | Episode | Procedure | Message | Trace) -> str:
    """The one-line text of any recallable item."""
    if isinstance(item, (MemoryRecord, Procedure)):
        return item.text
    if isinstance(item, Trace):
        how = "running" if item.success is None else "succeeded" if item.success else "failed"
        return f"{item.task} ({how})" + (f": {item.outcome}" if item.outcome else "")
    if isinstance(item, Episode):
        return item.summary
    who = item.speaker or item.role
    return f"{who}: {item.said}"


def embed_text(item: MemoryRecord | Episode | Procedure | Message | Entity | ProcedureStep | Trace) -> str:
    """The text a node's vector is computed from."""
    if isinstance(item, Message):
        return item.said
    if isinstance(item, ProcedureStep):
        return item.text
    if isinstance(item, Trace):  # the task and, once done, its outcome (similar_traces)
        return f"{item.task}: {item.outcome}" if item.outcome else item.task
    if isinstance(item, Entity):  # its name, and what it is when it was described
        return f"{item.name}: {item.description}" if item.description else item.name
    return item_text(item)


class ContextSection(Model):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    name: Literal["soul", "memories", "episodes", "procedures", "traces", "recent", "summary"]
    tokens: int
    item_ids: list[str] = Field(default_factory=list)


class Context(Model):
    """A prompt block packed into a token budget."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    text: str
    tokens: int
    budget: int
    items: list[ScoredItem]
    sections: list[ContextSection]
    dropped: int = Field(default=0, description="recalled items that did not fit the budget")
    timings_ms: dict[str, float]


class History(Model):
    """A memory (or procedure) with what it superseded and what superseded it (oldest first)."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    memory: Versioned = Field(description="the memory or procedure asked about")
    supersedes: list[Versioned]
    superseded_by: list[Versioned]
    reasons: dict[str, str] = Field(default_factory=dict, description="memory id -> reason of its SUPERSEDES edge")


class Neighbourhood(Model):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    entity: Entity
    entities: list[Entity]
    relations: list[Relation]
    memories: list[MemoryRecord]
    hops: dict[str, int]


class Explanation(Model):
    """Why a node is in the state it is in: the rule, its numbers and dates, the edges involved."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    id: str
    kind: str
    status: str
    rule: str = Field(description="the rule that put the node in its state, in one line")
    details: list[str] = Field(default_factory=list)
    dates: dict[str, datetime | None] = Field(default_factory=dict)
    edges: list[Edge] = Field(default_factory=list)


class TraceStepView(Model):
    """A trace step with its tool calls, in the order they were made."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    step: TraceStep
    tool_calls: list[ToolInvocation] = Field(default_factory=list)


class TraceView(Model):
    """A trace with its steps in order (``get_trace``)."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    trace: Trace
    steps: list[TraceStepView] = Field(default_factory=list)


class SimilarTrace(Model):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    trace: Trace
    similarity: float = Field(description="cosine of the query to the trace's task and outcome")


class ToolStats(Model):
    """How one tool has fared in a namespace's traces."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    tool: str
    calls: int
    successes: int
    failures: int
    errors: int
    timeouts: int = 0
    cancelled: int = 0
    pending: int = Field(default=0, description="started and not finished; left out of the rate and durations")
    success_rate: float = Field(description="successes over finished calls (0 when none has finished)")
    mean_ms: float | None = Field(default=None, description="mean duration of the calls that reported one")
    p95_ms: float | None = None


class MergeSuggestion(Model):
    """Two entities that look like one real thing (``Memory.suggest_merges``): ``sure`` ones
    are merged by ``maintain``, the rest wait for ``merge_entities``."""

    keep_id: str
    keep_name: str
    merge_id: str
    merge_name: str
    reason: str
    sure: bool
