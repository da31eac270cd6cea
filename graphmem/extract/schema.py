"""What the model must return for one window, and how it is validated and normalised.

The wire format uses short keys (fewer output tokens: the model writes about 9 tokens/s on
2 cores) and puts a short reasoning field first, which helps small models decide what is new
and what changed. ``Extraction`` is the normalised result the pipeline consumes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..models import Message
from .checks import canonical_predicate

KINDS = ("fact", "preference", "event", "plan", "relationship", "skill", "other")
ENTITY_TYPES = ("person", "org", "place", "thing", "concept", "event", "other")
SOURCES = {"u": "user_stated", "i": "inferred", "o": "observed"}
MAX_MEMORIES = 30  # the bound; the grammar asks for at most 12 per window (a loop ends there)
GRAMMAR_MAX_MEMORIES = 12

# The JSON schema handed to llama.cpp's grammar (and to OpenAI-compatible servers).
WIRE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "r": {"type": "string", "maxLength": 300},
        "m": {
            "type": "array",
            "maxItems": GRAMMAR_MAX_MEMORIES,
            "items": {
                "type": "object",
                "properties": {
                    "t": {"type": "string"},
                    "k": {"type": "string", "enum": list(KINDS)},
                    "s": {"type": "string"},
                    "p": {"type": "string"},
                    "o": {"type": "string"},
                    "i": {"type": "integer", "minimum": 1, "maximum": 5},
                    "c": {"type": "string", "enum": list(SOURCES)},
                    "n": {"type": "array", "minItems": 1, "maxItems": 3,
                          "items": {"type": "integer", "minimum": 1, "maximum": 64}},
                },
                "required": ["t", "k", "s", "p", "o", "i", "c", "n"],
            },
        },
        "e": {
            "type": "array",
            "maxItems": 16,
            "items": {
                "type": "object",
                "properties": {"n": {"type": "string"}, "y": {"type": "string", "enum": list(ENTITY_TYPES)}},
                "required": ["n", "y"],
            },
        },
        "ep": {"type": "string"},
        "pr": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"task": {"type": "string"}, "steps": {"type": "array", "maxItems": 12, "items": {"type": "string"}}},
                "required": ["task", "steps"],
            },
        },
    },
    "required": ["r", "m", "e", "ep", "pr"],
}

_SEQUENCE_CUES = re.compile(
    r"\b(first|then|next|after that|afterwards|finally|step|steps)\b|首先|然后|接着|之后|最后|第[一二三四五]步|步骤",
    re.IGNORECASE,
)


def reads_like_a_workflow(messages: Iterable[Message]) -> bool:
    """Whether the user's turns of a window put steps in order: two sequence cues or more
    ("first ..., then ...", "首先……然后……"). A workflow is only asked for and taken when the
    window reads like one: small models invent procedures from ordinary chat ("introduce
    herself: say hello, ..."), and on MemoryBank from an assistant's "Then I recommend ..." or
    a user's "At first he was melancholic"; the invented steps then hid the window's memories
    that restate them."""
    users = " ".join(m.content for m in messages if m.role != "assistant")
    return len(_SEQUENCE_CUES.findall(users)) >= 2


def wire_schema(*, procedures: bool) -> dict[str, Any]:
    """The reply schema for one window. Without a sequence cue the window's procedures would be
    dropped, so ``pr`` must be empty: the model still closes the episode with its usual ``","``
    (a schema without ``pr`` refuses that token and the episode runs on) and the reply up to
    there is token for token the whole schema's, but an invented workflow costs nothing. Such a
    window's reply stops where its memories end (``extractors.MEMORIES_END``); its grammar stays
    the whole one, so that the tokens up to there are the same."""
    if procedures:
        return WIRE_SCHEMA
    none = {**WIRE_SCHEMA["properties"]["pr"], "maxItems": 0}
    return {**WIRE_SCHEMA, "properties": {**WIRE_SCHEMA["properties"], "pr": none}}


_SPACES = re.compile(r"\s+")
_PRED_CHARS = re.compile(r"[^\w]+", re.UNICODE)


def _clean(value: str, limit: int = 500) -> str:
    return _SPACES.sub(" ", value).strip()[:limit]


def normalise_predicate(value: str) -> str:
    """'Prefers Language' / 'prefers-language' -> 'prefers_language'."""
    return _PRED_CHARS.sub("_", value.strip().casefold()).strip("_")


class ExtractedMemory(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str
    kind: str = "fact"
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    importance: float = Field(default=0.5, ge=0, le=1)
    source: Literal["user_stated", "inferred", "observed"] = "inferred"
    turns: list[int] = Field(default_factory=list, description="the window's turns it comes from, numbered from 1")

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        v = _clean(v)
        if len(v) < 3:
            raise ValueError("memory text too short")
        return v


class ExtractedEntity(BaseModel):
    name: str
    type: str = "thing"


class ExtractedProcedure(BaseModel):
    task: str
    steps: list[str] = Field(min_length=2)


class Extraction(BaseModel):
    """One window's knowledge, validated and normalised."""

    reasoning: str = ""
    memories: list[ExtractedMemory] = Field(default_factory=list)
    entities: list[ExtractedEntity] = Field(default_factory=list)
    episode: str = ""
    procedures: list[ExtractedProcedure] = Field(default_factory=list)


_KEY = re.compile(r'\s*"(\w+)"\s*:\s*')
_COMMA = re.compile(r"\s*,")


def complete_fields(text: str) -> dict[str, Any]:
    """The top-level fields a reply completed before it was cut short (the token limit, most
    often a workflow or an episode that loops), in order: ``{"r": ..., "m": [...]}`` of
    ``{"r":"..","m":[..],"e":[{"n":"Ann","y``."""
    decoder, out = json.JSONDecoder(strict=False), {}
    at = text.find("{") + 1
    while at and (key := _KEY.match(text, at)):
        try:
            value, end = decoder.raw_decode(text, key.end())
        except ValueError:
            break
        out[key.group(1)] = value
        comma = _COMMA.match(text, end)
        if not comma:
            break
        at = comma.end()
    return out


def parse_wire(data: Any) -> Extraction:
    """Validate and normalise the model's JSON. Raises ValueError when it is unusable; drops
    single bad items (an empty memory, an unknown kind) rather than the whole window."""
    if not isinstance(data, dict):
        raise ValueError("the model's output is not a JSON object")
    if "m" not in data:
        raise ValueError("the model's output lacks its memories ('m')")
    memories: list[ExtractedMemory] = []
    for raw in data.get("m") or []:
        if not isinstance(raw, dict):
            continue
        try:
            kind = str(raw.get("k", "fact")).lower()
            triple = [(_clean(str(raw.get(x) or ""), 120) or None) for x in ("s", "p", "o")]
            importance = min(5, max(1, int(raw.get("i", 3))))
            memories.append(ExtractedMemory(
                text=str(raw.get("t", "")), kind=kind if kind in KINDS else "other",
                subject=triple[0], predicate=canonical_predicate(normalise_predicate(triple[1])) if triple[1] else None,
                object=triple[2],
                importance=(importance - 1) / 4, source=SOURCES.get(str(raw.get("c", "i")), "inferred"),
                turns=[n for n in (raw.get("n") or []) if isinstance(n, int) and not isinstance(n, bool)][:3],
            ))
        except (ValueError, TypeError):
            continue
    entities = []
    for raw in data.get("e") or []:
        if isinstance(raw, dict) and _clean(str(raw.get("n") or ""), 120):
            etype = str(raw.get("y", "thing")).lower()
            entities.append(ExtractedEntity(name=_clean(str(raw["n"]), 120), type=etype if etype in ENTITY_TYPES else "other"))
    procedures = []
    for raw in data.get("pr") or []:
        if not isinstance(raw, dict):
            continue
        steps = [_clean(str(s), 300) for s in raw.get("steps") or [] if _clean(str(s), 300)]
        task = _clean(str(raw.get("task") or ""), 200)
        if task and len(steps) >= 2:
            procedures.append(ExtractedProcedure(task=task, steps=steps))
    unique = list({m.text.casefold(): m for m in reversed(memories)}.values())[::-1]  # a looping model repeats itself
    return Extraction(
        reasoning=_clean(str(data.get("r") or ""), 300), memories=unique[:MAX_MEMORIES], entities=entities,
        episode=_clean(str(data.get("ep") or ""), 1000), procedures=procedures,
    )
