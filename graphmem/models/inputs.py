"""Validated inputs of the public API: what callers may pass in, checked at the edge."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from .entity_types import entity_type
from .fields import Label, Metadata, Model, RawText, RecordId, ShortStr, Text, UTCDateTime, Unit
from .records import Role, Source, ToolCall, check_content, turn_text


class MessageIn(Model):
    """One conversation turn to append, in graphmem's shape or the OpenAI chat message shape
    (``content`` may be empty or null: an empty turn is kept as one; ``name`` is the speaker).
    The content is kept byte for byte. ``created_at`` defaults to now."""

    model_config = ConfigDict(extra="forbid")

    role: Role = "user"
    content: RawText | None = None
    speaker: Label = ""
    name: Label | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: ShortStr | None = None
    created_at: UTCDateTime | None = None
    id: RecordId | None = None  # checked up front as the write checks it
    metadata: Metadata = Field(default_factory=dict)
    user_id: ShortStr | None = Field(default=None, description="whose turn (default: the session's user)")
    agent_id: ShortStr | None = Field(default=None, description="which agent's (default: the session's agent)")
    run_id: ShortStr | None = None

    @model_validator(mode="after")
    def _shape(self) -> "MessageIn":
        self.content = self.content or ""
        check_content(self.content, self.tool_calls)
        if self.name and not self.speaker:
            self.speaker = self.name
        return self

    @property
    def said(self) -> str:
        return turn_text(self.content, self.tool_calls)


class EntityIn(Model):
    model_config = ConfigDict(extra="forbid")

    name: ShortStr
    type: Annotated[str, BeforeValidator(entity_type)] = Field(default="thing", description="person, org, place, thing, ... "
                                                               "in any spelling (PERSON, Person, company)")
    aliases: list[ShortStr] = Field(default_factory=list)


class RelationIn(Model):
    """A relation between two entities, by name (created when unknown)."""

    model_config = ConfigDict(extra="forbid")

    source: ShortStr
    predicate: ShortStr
    target: ShortStr


class MemoryIn(Model):
    """What ``remember`` accepts."""

    model_config = ConfigDict(extra="forbid")

    text: Text
    category: ShortStr = "fact"
    subject: ShortStr | None = None
    predicate: ShortStr | None = None
    object: ShortStr | None = None
    importance: Unit = 0.5
    confidence: Unit | None = None
    source: Source = Source.user_stated
    pinned: bool = False
    entities: list[EntityIn] | None = None
    relations: list[RelationIn] = Field(default_factory=list)
    valid_at: UTCDateTime | None = None
    invalid_at: UTCDateTime | None = None
    source_message_ids: list[str] = Field(default_factory=list)
    episode_id: str | None = None
    metadata: Metadata = Field(default_factory=dict)
    id: str | None = None
    user_id: ShortStr | None = None
    agent_id: ShortStr | None = None
    run_id: ShortStr | None = None


class MemoryPatch(Model):
    """What ``update`` accepts. Changing ``text`` or the triple is a correction: a new version
    supersedes the old one, which stays in history. Other fields change in place."""

    model_config = ConfigDict(extra="forbid")

    text: Text | None = None
    subject: ShortStr | None = None
    predicate: ShortStr | None = None
    object: ShortStr | None = None
    category: ShortStr | None = None
    importance: Unit | None = None
    confidence: Unit | None = None
    status: Literal["active", "archived"] | None = None
    pinned: bool | None = None
    valid_at: UTCDateTime | None = None
    invalid_at: UTCDateTime | None = None
    metadata: Metadata | None = None
    source_message_ids: list[ShortStr] | None = Field(
        default=None, description="with a correction: the turns the new version comes from (default none: the old "
        "version's turns stated the old value, and are marked superseded)"
    )
