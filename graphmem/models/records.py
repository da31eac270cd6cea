"""The stored records: every node of the memory graph, and its edges."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from datetime import datetime, timezone
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator, ConfigDict, Field, ValidationInfo, WithJsonSchema, field_validator, model_validator,
)

from .entity_types import entity_type
from .fields import (
    CONTROL_CHARS, LongStr, Metadata, Model, Namespace, RawText, ShortStr, Text, UTCDateTime, Unit, from_store, id_shape,
)
from ..vocab import Layer, NodeKind, Role, ToolStatus  # noqa: F401  (re-exported: the models' vocabulary)

_last_ts = 0
# random bytes for ids, read from the OS a page at a time: ``os.urandom`` lets go of the GIL, and
# a writer that asked for 5 bytes an id waited behind the background worker each time (a
# profile of ``add_messages(wait=False)`` beside it: ~0.1 ms an id, a sixth of the write)
_RANDOM_POOL = 4096
_random: list = [b"", 0]  # the bytes read and how many are used
_random_lock = threading.Lock()


def _fresh_random() -> None:
    """In a forked child: none of the parent's unread bytes (they would repeat its next ids), and
    a lock no other thread of the parent can have held at the fork."""
    global _random_lock
    _random_lock = threading.Lock()
    _random[:] = [b"", 0]


os.register_at_fork(after_in_child=_fresh_random)


def _random_hex(n: int) -> str:
    with _random_lock:
        pool, at = _random
        if at + n > len(pool):
            pool, at = os.urandom(_RANDOM_POOL), 0
        _random[:] = [pool, at + n]
    return pool[at : at + n].hex()


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def new_id(prefix: str) -> str:
    """A time-ordered id (`mem_0190f3...`): sorts by creation, unique without coordination."""
    global _last_ts
    ts = max(time.time_ns() // 1000, _last_ts + 1)  # microseconds, strictly increasing in-process
    _last_ts = ts
    return f"{prefix}_{ts:014x}{_random_hex(5)}"


# a [start, end) pair as plain JSON Schema (some OpenAPI tools do not read prefixItems)
_WINDOW_SCHEMA = {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2}


class Status(str, Enum):
    active = "active"
    superseded = "superseded"
    archived = "archived"
    merged = "merged"  # folded into a near-duplicate by maintenance (MERGED_INTO), out of recall


class Source(str, Enum):
    """How a memory was learned; sets its default confidence."""

    user_stated = "user_stated"
    inferred = "inferred"
    observed = "observed"


SOURCE_CONFIDENCE = {Source.user_stated: 1.0, Source.inferred: 0.7, Source.observed: 0.5}


class EdgeType(str, Enum):
    DERIVED_FROM = "DERIVED_FROM"  # Memory -> Message
    PRODUCED = "PRODUCED"  # Episode -> Memory
    COVERS = "COVERS"  # Episode -> Message
    NEXT = "NEXT"  # Episode -> Episode, Message -> Message (the session's order)
    HAS_MESSAGE = "HAS_MESSAGE"  # Session -> Message
    SAID = "SAID"  # Entity (the speaker) -> Message
    MENTIONS = "MENTIONS"  # Memory|Episode|Message -> Entity  {role}
    RELATES_TO = "RELATES_TO"  # Entity -> Entity {predicate, memory_id, valid_at, invalid_at}
    SUPERSEDES = "SUPERSEDES"  # Memory -> Memory {reason, at}
    MERGED_INTO = "MERGED_INTO"  # Memory -> Memory
    FIRST_STEP = "FIRST_STEP"  # Procedure -> Step (the head of its NEXT chain)
    HAS_STEP = "HAS_STEP"  # Procedure -> Step, Trace -> TraceStep {order}
    CALLED = "CALLED"  # TraceStep -> ToolCall
    OF_TOOL = "OF_TOOL"  # ToolCall -> Tool
    IN_SESSION = "IN_SESSION"  # Trace -> Session


class Record(Model):
    """Fields every node shares. ``namespace`` is the tenant: nothing is read without one."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=False,
                              json_schema_serialization_defaults_required=True)

    id: str = ""
    namespace: Namespace = "default"
    created_at: UTCDateTime = Field(default_factory=utcnow)
    updated_at: UTCDateTime = Field(default_factory=utcnow)
    metadata: Metadata = Field(default_factory=dict)

    kind: str = ""
    _prefix: str = "rec"

    def model_post_init(self, __context: Any) -> None:
        if not self.id:
            self.id = new_id(self._prefix)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        return id_shape(value)

    def value_of(self, name: str) -> Any:
        """The field ``name``, None where this kind has none: for code that reads every kind
        alike (a ``getattr`` default costs pydantic a raised error per miss, ~2 us; a recall at
        100k missed about 800 times)."""
        return self.__dict__.get(name)


class Scorable(Record):
    """Fields the five-factor score reads."""

    importance: Unit = 0.5
    confidence: Unit = 1.0
    status: Status = Status.active
    access_count: int = Field(default=0, ge=0)
    last_accessed_at: UTCDateTime | None = None


SCOPE_FIELDS = ("user_id", "agent_id", "run_id")


class Scope(Model):
    """Whose a record is inside its namespace: the end user, the agent, the run (a conversation
    or job). Unset: shared by the whole namespace. Turns take their session's user and agent;
    extracted memories and episodes take those of the turns they came from."""

    user_id: ShortStr | None = Field(default=None, description="the end user it belongs to (unset: shared)")
    agent_id: ShortStr | None = Field(default=None, description="the agent it belongs to (unset: shared)")
    run_id: ShortStr | None = Field(default=None, description="the run or job it belongs to (unset: shared)")


class SupersededBy(Model):
    """On a turn or episode that states a value a later memory replaced: which memory, since
    when the new value holds (its ``valid_at``) and what holds now (its text), so context
    annotates it. A correction (``update``) also ranks the turn lower; the model's reading that
    a value changed (``inferred``: extraction's supersession) only annotates it: a turn is the
    sure record of what was said, and a wrong inference must not bury it."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)
    memory_id: str
    at: UTCDateTime
    text: Text
    inferred: bool = False


class Session(Record):
    kind: Literal["session"] = "session"
    _prefix = "ses"
    title: str = ""
    user_id: ShortStr | None = None  # whose conversation it is
    agent_id: ShortStr | None = None  # which agent took part
    summary: LongStr = ""  # L1: the rolling working summary
    summary_updated_at: UTCDateTime | None = None
    message_count: int = Field(default=0, ge=0)  # turns it holds now
    next_seq: int = Field(default=-1, ge=-1)  # the next turn's number (turns forgotten leave gaps); -1: message_count
    last_message_at: UTCDateTime | None = None
    last_message_id: str | None = None  # the tail of the NEXT chain
    # extraction: messages with seq < extracted_upto have been through a window
    extracted_upto: int = Field(default=0, ge=0)
    windows_done: int = Field(default=0, ge=0)
    windows_skipped: int = Field(default=0, ge=0)
    failed_windows: list[Annotated[tuple[int, int], WithJsonSchema(_WINDOW_SCHEMA)]] = Field(
        default_factory=list, description="[start, end) seq ranges whose extraction failed")
    last_error: str = ""

    def model_post_init(self, __context: Any) -> None:
        super().model_post_init(__context)
        if self.next_seq < 0:  # written before turns were numbered apart from the count
            self.next_seq = self.message_count




class ToolFunction(Model):
    """The function a tool call invokes, as chat APIs send it: ``arguments`` is JSON text (an
    object given instead is written as JSON)."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)
    name: ShortStr
    arguments: RawText = ""

    @field_validator("arguments", mode="before")
    @classmethod
    def _arguments_as_json(cls, value: Any) -> Any:
        return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value


class ToolCall(Model):
    """One tool call of an assistant turn (the OpenAI chat message shape)."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)
    id: ShortStr
    type: Literal["function"] = "function"
    function: ToolFunction


def check_content(content: str, tool_calls: list[ToolCall], stored: bool = False) -> None:
    """A turn's content is kept as sent, empty included (an empty turn is a turn); control
    characters alone (NUL, BEL) are refused, except beside tool calls or in a turn stored before."""
    if not stored and not tool_calls and content.strip() and not CONTROL_CHARS.sub("", content).strip():
        raise ValueError("content must not be control characters only (NUL, BEL, ...)")


def turn_text(content: str, tool_calls: list[ToolCall]) -> str:
    """What a turn is searched, embedded and tagged by: its content, then its tool calls."""
    return " ".join([content.strip(), *(f"{c.function.name}({c.function.arguments})" for c in tool_calls)]).strip()


class Message(Scorable, Scope):
    """A raw conversation turn: the audit trail, and searchable at once (the fast path)."""

    kind: Literal["message"] = "message"
    _prefix = "msg"
    session_id: ShortStr
    role: Role = "user"
    speaker: str = ""
    content: RawText = ""  # as sent, byte for byte (an empty turn is kept as one)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: ShortStr | None = None  # a tool turn: the call it answers
    seq: int = Field(default=0, ge=0)
    importance: Unit = 0.3
    # a turn is a faithful record of what was said, whoever said it: 1.0 (stores written before
    # this read 0.5 and are read as 1.0). How far its claim holds is for the memories read from
    # it, and none of them is surer than the turn
    confidence: Unit = 1.0
    extracted: bool = False  # set once an extraction window has represented it
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    superseded_by: SupersededBy | None = None

    @model_validator(mode="after")
    def _content(self, info: ValidationInfo) -> "Message":
        check_content(self.content, self.tool_calls, stored=from_store(info))
        self.__dict__["confidence"] = 1.0  # set, not assigned: an assignment would validate the model again
        return self

    @property
    def said(self) -> str:
        """Content and tool calls: what the turn is searched, embedded and tagged by."""
        return turn_text(self.content, self.tool_calls)


class MemoryRecord(Scorable, Scope):
    """One discrete fact or preference (the semantic layer).

    Named ``MemoryRecord`` so that ``graphmem.Memory`` can be the facade users open."""

    kind: Literal["memory"] = "memory"
    _prefix = "mem"
    text: Text
    category: ShortStr = "fact"
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    source: Source = Source.user_stated
    pinned: bool = False  # never expires, is never capped, never purged
    # bi-temporal: when the fact held in the world (valid_at, invalid_at) apart from when
    # graphmem learned it (created_at), retired it (expired_at: superseded or merged away)
    # and archived it (archived_at: demoted by expiry or a cap, purged purge_after_days later)
    valid_at: UTCDateTime | None = None
    invalid_at: UTCDateTime | None = None
    expired_at: UTCDateTime | None = None
    archived_at: UTCDateTime | None = None
    status_reason: str = ""  # the rule that last changed the status, with its numbers
    source_message_ids: list[str] = Field(default_factory=list)
    said_at: UTCDateTime | None = None  # when the last of its source turns was said (recency counts from it)
    episode_id: str | None = None
    entities: list[str] = Field(default_factory=list)  # names as written, resolved to Entity ids by MENTIONS edges
    keywords: list[str] = Field(default_factory=list)


class Entity(Record):
    kind: Literal["entity"] = "entity"
    _prefix = "ent"
    name: ShortStr
    type: Annotated[str, BeforeValidator(entity_type)] = "thing"  # person, org, place, thing, concept, event, ...
    aliases: list[str] = Field(default_factory=list)
    description: LongStr = ""
    merged_into: str | None = None  # folded into that entity (MERGED_INTO): found by no name, linked by nothing
    curated: bool = False  # added, edited or judged by a person: kept when nothing mentions it any more
    typed: bool = False  # its type was stated (add_entity, an entity passed with a type), not guessed by NER
    # who said which type: speaker (it spoke a turn), caller (add_entity, entities=[...]), model (extraction),
    # ner (spaCy/jieba's guess); the strongest present decides ``type`` (TYPE_EVIDENCE, strongest first)
    type_votes: dict[str, str] = Field(default_factory=dict)
    feedback: Literal["confirmed", "rejected"] | None = None  # a person's judgement; recall never starts from a rejected one


class Episode(Scorable, Scope):
    """What happened in a stretch of conversation."""

    kind: Literal["episode"] = "episode"
    _prefix = "epi"
    session_id: str | None = None
    summary: Text
    message_ids: list[str] = Field(default_factory=list)
    memory_ids: list[str] = Field(default_factory=list)
    previous_episode_id: str | None = None
    start_at: UTCDateTime | None = None
    end_at: UTCDateTime | None = None
    keywords: list[str] = Field(default_factory=list)
    superseded_by: SupersededBy | None = None


class Step(Model):
    """A procedure's step as the procedure lists it: its text and the id of its ``ProcedureStep``
    node (empty in stores written before procedures were chains, until they migrate)."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)
    text: Text
    id: str = ""


class Procedure(Scorable):
    """A learned workflow: the task it serves and its ordered steps. The steps are a chain of
    ``ProcedureStep`` nodes (FIRST_STEP, NEXT, HAS_STEP); ``steps`` lists them in order so a
    procedure reads in one fetch. A version never changes its steps: the same task taught
    differently is a new procedure that SUPERSEDES this one."""

    kind: Literal["procedure"] = "procedure"
    _prefix = "prc"
    task: Text
    steps: list[Step] = Field(min_length=1)
    seen_count: int = Field(default=1, ge=0)
    success_count: int = Field(default=0, ge=0)
    failure_count: int = Field(default=0, ge=0)
    learned_from: list[str] = Field(default_factory=list, description="the successful traces it was learned from")
    status_reason: str = ""
    keywords: list[str] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The task and its numbered steps on one line (as a memory's ``text`` reads; history
        lists memories and procedures alike)."""
        return f"{self.task}: " + "; ".join(f"{i}. {s.text}" for i, s in enumerate(self.steps, 1))


class ProcedureStep(Scorable):
    """One step of a procedure, a node with its own embedding, keywords and MENTIONS edges. Its
    status follows its procedure's."""

    kind: Literal["step"] = "step"
    _prefix = "stp"
    procedure_id: str
    order: int = Field(ge=1)
    text: Text
    failure_count: int = Field(default=0, ge=0)
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)




class Trace(Scorable, Scope):
    """One run of an agent on a task: its steps (``TraceStep``), their tool calls and the outcome."""

    kind: Literal["trace"] = "trace"
    _prefix = "trc"
    task: Text
    session_id: ShortStr | None = None
    step_count: int = Field(default=0, ge=0)
    last_step_id: str | None = None  # the tail of the NEXT chain
    outcome: LongStr = ""
    success: bool | None = None  # None: still running
    completed_at: UTCDateTime | None = None
    procedure_id: str | None = None  # the procedure this run followed, or was learned into
    importance: Unit = 0.4
    keywords: list[str] = Field(default_factory=list)


class TraceStep(Record):
    """One step of a trace: what the agent thought, did and saw. ``order`` counts from 1 without gaps."""

    kind: Literal["trace_step"] = "trace_step"
    _prefix = "tst"
    trace_id: str
    order: int = Field(ge=1)
    thought: LongStr = ""
    action: LongStr = ""
    observation: LongStr = ""
    entities: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _says_something(self) -> "TraceStep":
        if not (self.thought or self.action or self.observation):
            raise ValueError("a step needs a thought, an action or an observation")
        return self

    @property
    def text(self) -> str:
        """What the step did: its action, else its thought, else what it observed."""
        return self.action or self.thought or self.observation


class ToolInvocation(Record):
    """One tool call a trace step made (the ``:ToolCall`` node)."""

    kind: Literal["tool_call"] = "tool_call"
    _prefix = "tcl"
    trace_id: str
    step_id: str
    tool: ShortStr
    arguments: Metadata = Field(default_factory=dict)
    result: RawText | None = None
    status: ToolStatus = "success"
    duration_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class Tool(Record):
    """A tool agents call, one node per name in a namespace (``OF_TOOL`` from each call)."""

    kind: Literal["tool"] = "tool"
    _prefix = "tol"
    name: ShortStr


class LifecycleAction(Model):
    """One change a maintenance run made (or, in a dry run, would make)."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)

    action: Literal["merge", "expire", "cap", "purge", "merge_entity"]
    id: str
    reason: str
    target: str | None = None  # merge: the memory it was folded into; merge_entity: the entity


class MaintenanceRun(Record):
    """The audit record of one maintenance run over one namespace: what it changed (or would
    change, when ``dry_run``), why, and with which settings."""

    kind: Literal["maintenance"] = "maintenance"
    _prefix = "mnt"
    dry_run: bool = False
    now: UTCDateTime  # the clock the rules used (time travel in tests)
    seconds: float = 0.0
    merged: int = 0
    expired: int = 0
    capped: int = 0
    purged: int = 0
    reembedded: int = 0
    active_before: int = 0
    active_after: int = 0
    actions: list[LifecycleAction] = Field(default_factory=list)
    policy: dict[str, Any] = Field(default_factory=dict)


Node = (Session | Message | MemoryRecord | Entity | Episode | Procedure | ProcedureStep | Trace | TraceStep
        | ToolInvocation | Tool | MaintenanceRun)
NODE_TYPES: dict[str, type[Record]] = {
    "session": Session,
    "message": Message,
    "memory": MemoryRecord,
    "entity": Entity,
    "episode": Episode,
    "procedure": Procedure,
    "step": ProcedureStep,
    "trace": Trace,
    "trace_step": TraceStep,
    "tool_call": ToolInvocation,
    "tool": Tool,
    "maintenance": MaintenanceRun,
}
LAYERS: tuple[Layer, ...] = ("memory", "episode", "procedure", "message", "trace")


class Edge(Model):
    """A typed, directed edge between two nodes of one namespace. ``key`` tells parallel
    edges of one type apart (a relation's predicate)."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)

    namespace: Namespace = "default"
    source: str
    type: EdgeType
    target: str
    key: str = ""
    props: dict[str, Any] = Field(default_factory=dict)
    created_at: UTCDateTime = Field(default_factory=utcnow)

    @field_validator("props")
    @classmethod
    def _keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not all(k and "\x00" not in k for k in value):  # Neo4j refuses them at the write
            raise ValueError("edge property keys must be non-empty and without NUL")
        return value

    @classmethod
    def stored(cls, namespace: str, source: str, type: str, target: str, key: str | None, props: str | None,
               created_at: datetime | str) -> Edge:
        """An edge as a store reads it back (``props`` as JSON text; ``created_at`` aware, or ISO
        text): checked when it was written, so built without the checks (a context at 100k
        memories reads ~1,300 edges; validating them cost ~15 ms of its ~90)."""
        when = datetime.fromisoformat(created_at) if isinstance(created_at, str) else created_at
        return cls.model_construct(namespace=namespace, source=source, type=EdgeType(type), target=target,
                                   key=key or "", props=json.loads(props) if props and props != "{}" else {},
                                   created_at=when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc))


class Relation(Model):
    """A relation edge between two entities, derived from a fact."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)

    namespace: Namespace = "default"
    source_id: str
    predicate: ShortStr
    target_id: str
    memory_id: str | None = None
    valid_at: UTCDateTime | None = None
    invalid_at: UTCDateTime | None = None

    def to_edge(self) -> Edge:
        return Edge(
            namespace=self.namespace,
            source=self.source_id,
            type=EdgeType.RELATES_TO,
            target=self.target_id,
            key=self.predicate,
            props={
                "predicate": self.predicate,
                "memory_id": self.memory_id,
                "valid_at": self.valid_at.isoformat() if self.valid_at else None,
                "invalid_at": self.invalid_at.isoformat() if self.invalid_at else None,
            },
        )

    @classmethod
    def from_edge(cls, edge: Edge) -> "Relation":
        p = edge.props
        return cls(
            namespace=edge.namespace,
            source_id=edge.source,
            target_id=edge.target,
            predicate=p.get("predicate") or edge.key,
            memory_id=p.get("memory_id"),
            valid_at=p.get("valid_at"),
            invalid_at=p.get("invalid_at"),
        )


def check_vector(vector: Any, dim: int) -> None:
    """Raise ValueError unless ``vector`` is a finite vector of length ``dim``."""
    import numpy as np

    arr = np.asarray(vector, dtype=np.float32)
    if arr.ndim != 1 or arr.shape[0] != dim:
        raise ValueError(f"vector has shape {arr.shape}; expected ({dim},)")
    if not np.all(np.isfinite(arr)):
        raise ValueError("vector contains NaN or infinite values")
    if not math.isfinite(float(np.linalg.norm(arr))) or float(np.linalg.norm(arr)) == 0.0:
        raise ValueError("vector has zero length")
