"""The collaborators a lifecycle worker needs, as one small bundle (never the ``Memory``
facade): the store, the embedder, the entity tagger, the settings and the write lock."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from ..embed import Embedder
from ..errors import ValidationError
from ..settings import Settings
from ..store import Store
from ..text import EntityTagger

M = TypeVar("M", bound=BaseModel)


@dataclass
class Parts:
    store: Store
    embedder: Embedder
    tagger: EntityTagger
    settings: Settings
    # engine writes are read-modify-write: one at a time in this process
    write_lock: threading.RLock = field(default_factory=threading.RLock)


def check(model: type[M] | TypeAdapter, data: Any, what: str) -> M:
    """Validate at the edge: pydantic errors become graphmem ValidationErrors naming the field."""
    try:
        return model.validate_python(data) if isinstance(model, TypeAdapter) else model.model_validate(data)
    except PydanticValidationError as exc:
        raise ValidationError(describe(exc, what)) from exc


def describe(exc: PydanticValidationError, what: str) -> str:
    """A pydantic error as one line: the first field that failed, why, and what it got."""
    first = exc.errors()[0]
    where = "".join(f"{p}: " for p in [".".join(str(p) for p in first["loc"])] if p)
    got = repr(first.get("input"))
    got = got if len(got) <= 60 else got[:57] + "..."
    return f"invalid {what}: {where}{first['msg']} (got {got})"
