"""Validated inputs of the public API: what callers may pass in, checked at the edge."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .records import Label, Metadata, Role, ShortStr, Source, Text, Unit, UTCDateTime


class MessageIn(BaseModel):
    """One conversation turn to append. ``created_at`` defaults to now."""

    model_config = ConfigDict(extra="forbid")

    role: Role = "user"
    content: Text
    speaker: Label = ""
    created_at: UTCDateTime | None = None
    id: str | None = None
    metadata: Metadata = Field(default_factory=dict)


class EntityIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: ShortStr
    type: str = Field("thing", max_length=40)
    aliases: list[ShortStr] = Field(default_factory=list)


class RelationIn(BaseModel):
    """A relation between two entities, by name (created when unknown)."""

    model_config = ConfigDict(extra="forbid")

    source: ShortStr
    predicate: ShortStr
    target: ShortStr


class MemoryIn(BaseModel):
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


class MemoryPatch(BaseModel):
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
        None, description="with a correction: the turns the new version comes from (default none: the old "
        "version's turns stated the old value, and are marked superseded)"
    )
