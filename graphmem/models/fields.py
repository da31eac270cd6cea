"""The field types every record and input is made of: text with its limits, metadata as JSON,
times in UTC, namespaces and ids. Limits hold for inputs; a record read back from a store
(``hydrate``) is taken as it was written."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationInfo


class Model(BaseModel):
    """The base of graphmem's models: each builds its validator on first use (``defer_build``),
    so a program or a cold command that never checks a kind does not pay for its schema."""

    model_config = ConfigDict(defer_build=True)


NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@\-]{0,127}$"
MAX_TEXT_CHARS = 20_000  # a text, a summary, a soul, an entity description
MAX_METADATA_CHARS = 20_000  # metadata as JSON
MAX_METADATA_DEPTH = 16

CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def to_utc(value: datetime) -> datetime:
    # Naive datetimes are read as UTC (documented); aware ones are converted.
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def _unicode(value: str) -> str:
    if _SURROGATE.search(value):  # not encodable: no store, tokenizer or file could take it
        raise ValueError("text contains a lone surrogate (not valid Unicode)")
    return value


def from_store(info: ValidationInfo) -> bool:
    """Validating a record read back from a store (``hydrate``): limits added later must not
    make data written before them unreadable, so only inputs are held to them."""
    return bool(info.context and info.context.get("stored"))


def _long_text(value: str, info: ValidationInfo | None = None) -> str:
    if info is not None and from_store(info):
        return value
    value = _unicode(CONTROL_CHARS.sub("", value).strip())
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"text has {len(value)} characters; the limit is {MAX_TEXT_CHARS}")
    return value


def _raw_text(value: str, info: ValidationInfo) -> str:
    """A turn's content as it was sent, byte for byte: only lone surrogates (no store can hold
    them) and the size limit are refused. Search normalises its own copy, never this one."""
    if from_store(info):
        return value
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"content has {len(value)} characters; the limit is {MAX_TEXT_CHARS}")
    return _unicode(value)


def _clean_text(value: str) -> str:
    value = _long_text(value)
    if not value:
        raise ValueError("text must not be empty")
    return value


def _json_metadata(value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    """Metadata is JSON: string keys; strings, finite numbers, booleans, null, lists and objects
    nested at most MAX_METADATA_DEPTH deep; at most MAX_METADATA_CHARS as JSON."""
    if from_store(info):
        return value
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_METADATA_DEPTH:
                raise ValueError(f"metadata is nested more than {MAX_METADATA_DEPTH} deep")
            if isinstance(item, dict) and not all(isinstance(k, str) and k and "\x00" not in k for k in item):
                raise ValueError("metadata keys must be non-empty strings without NUL")
            if isinstance(item, dict):
                for k in item:  # a lone surrogate in a key became U+FFFD on the way to the store
                    _unicode(k)
            stack += [(v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)]
        elif isinstance(item, str):
            _unicode(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"metadata numbers must be finite (got {item})")
        elif item is not None and not isinstance(item, (bool, int, float)):
            raise ValueError(f"metadata values must be JSON (got a {type(item).__name__})")
    size = len(json.dumps(value, ensure_ascii=False))
    if size > MAX_METADATA_CHARS:
        raise ValueError(f"metadata has {size} characters as JSON; the limit is {MAX_METADATA_CHARS}")
    return value


UTCDateTime = Annotated[datetime, AfterValidator(to_utc)]
Namespace = Annotated[str, StringConstraints(pattern=NAMESPACE_PATTERN)]
Text = Annotated[str, AfterValidator(_clean_text)]
LongStr = Annotated[str, AfterValidator(_long_text)]  # may be empty
RawText = Annotated[str, AfterValidator(_raw_text)]  # may be empty; never stripped
Label = Annotated[str, StringConstraints(max_length=200), AfterValidator(_unicode)]  # may be empty
Metadata = Annotated[dict[str, Any], AfterValidator(_json_metadata)]
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
ShortStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
                     AfterValidator(_unicode)]
_ID_SHAPE = re.compile(r"[\w\-:.@]{1,128}")


def id_shape(value: str) -> str:
    """An id as every record's: letters of any script, digits and ``_-:.@``, at most 128."""
    if value and not _ID_SHAPE.fullmatch(value):
        raise ValueError("ids use letters (any script), digits and _-:.@ only, at most 128")
    return value


RecordId = Annotated[str, AfterValidator(id_shape)]
SESSION_ID = TypeAdapter(Annotated[ShortStr, AfterValidator(id_shape)])  # the session record's own rule, up front
