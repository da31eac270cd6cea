"""Recall's candidates as light views of stored records: the fields scoring reads, taken from
the stored JSON without validating the whole record, and the record itself built only when
something else is read (recall builds it for the items it returns).

A context at 100k memories reads ~280 candidate records to show ~20; validating each whole
record cost ~40 % of the record reads (``hydrate``)."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ..models import NODE_TYPES, Node, Status, SupersededBy
from ..models.fields import to_utc
from .base import hydrate

# what recall reads of a candidate (admission, scoring, the conversation around a turn, the
# text of a path); any other field is read from the whole record
_TIMES = ("created_at", "updated_at", "valid_at", "invalid_at", "expired_at", "said_at", "start_at", "end_at")
_PLAIN = ("importance", "confidence", "keywords", "entities", "session_id", "seq", "speaker", "role", "content", "text",
          "summary", "subject", "predicate", "object", "category", "user_id", "agent_id", "run_id")


@lru_cache(maxsize=None)
def _fields(kind: str) -> tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]]:
    """The fields of ``kind`` a view holds, each with its default (a record written before a
    field existed reads as the model would read it): its times, its plain values, and its
    status and supersession (each read in its own way)."""
    model = NODE_TYPES[kind].model_fields

    def of(names: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
        return tuple((name, model[name].get_default(call_default_factory=True)) for name in names if name in model)
    return of(_TIMES), of(_PLAIN), of(("status", "superseded_by"))


def _time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, (int, float)):  # the access time kept beside the record, in epoch seconds
        return datetime.fromtimestamp(value, tz=timezone.utc)
    return to_utc(datetime.fromisoformat(value))


def decode(kind: str, data: str, node_id: str) -> dict[str, Any]:
    """The fields a view reads from a stored record's JSON (``data``), each decoded."""
    payload = json.loads(data)
    get = payload.get
    values: dict[str, Any] = {}
    times, plain, states = _fields(kind)
    for name, default in times:
        value = get(name, default)
        values[name] = value if value is None else _time(value)
    for name, default in plain:
        values[name] = get(name, default)
    for name, default in states:
        value = get(name, default)
        if name == "status":
            values[name] = Status(value)
        else:  # superseded_by
            values[name] = value if value is None else SupersededBy.model_validate(value, context={"stored": True})
    if kind == "message":
        values["confidence"] = 1.0  # as ``Message`` reads every turn
    values["kind"], values["id"] = kind, node_id
    values["_calls"] = bool(get("tool_calls"))
    return values


class RecordView:
    """A stored record as recall reads it (``Store.views``). ``value_of`` and the fields
    listed above are read without building the record; ``record()`` builds it (once)."""

    def __init__(self, kind: str, data: str, node_id: str, access_count: int | None, last_accessed_at: Any,
                 pending: tuple[int, Any] | None, decoded: dict[str, Any] | None = None) -> None:
        values = self.__dict__
        values.update(decoded if decoded is not None else decode(kind, data, node_id))
        values["access_count"] = (access_count or 0) + (pending[0] if pending else 0)
        values["last_accessed_at"] = _time(pending[1] if pending else last_accessed_at)
        values["_row"] = (kind, data, node_id, access_count, last_accessed_at, pending)
        values["_record"] = None

    def value_of(self, name: str) -> Any:
        """As ``Record.value_of``: None where this kind has no such field."""
        if name in self.__dict__ and not name.startswith("_"):
            return self.__dict__[name]
        return getattr(self.record(), name) if name in NODE_TYPES[self.kind].model_fields else None

    @property
    def said(self) -> str:
        """As ``Message.said`` (a turn's only)."""
        if self.kind != "message":
            raise AttributeError("said")
        return self.record().said if self._calls else self.content.strip()  # ``turn_text`` without tool calls

    def record(self) -> Node:
        """The whole record, validated (built on the first call)."""
        if self._record is None:
            self.__dict__["_record"] = hydrate(*self._row)
        return self._record

    def __getattr__(self, name: str) -> Any:  # a field the view does not hold: the record's
        model = NODE_TYPES[self.kind]
        if name.startswith("_") or not (name in model.model_fields or hasattr(model, name)):
            raise AttributeError(name)  # as the record would, without building it
        return getattr(self.record(), name)


class DecodedViews:
    """Decoded views by (namespace, id) with the row they came from (the ``size`` read last),
    kept until that row is written (the store drops what it writes, and everything when
    another process commits): recall reads the same candidates again and again (at 100k
    memories, 65 % of the records a context reads were read by an earlier context), and
    decoding is most of a read. The access counts are not kept: a view takes the pending ones
    when it is made."""

    def __init__(self, size: int = 16384) -> None:
        self.size = size
        self.writes = 0  # drops so far: a view read before one may be stale, and is not kept
        # least recently read first (a plain dict's oldest-first deletes rescan the deleted slots: 8.6
        # against 0.5 us an insert once full)
        self._kept: OrderedDict[tuple[str, str], tuple[tuple, dict[str, Any]]] = OrderedDict()

    def views(self, namespace: str, ids: Sequence[str], pending: Callable[[str, str], Any]
              ) -> tuple[dict[str, RecordView], list[str]]:
        """The views kept of ``ids`` (their access counts as of now), and the ids not kept."""
        found: dict[str, RecordView] = {}
        missing: list[str] = []
        kept = self._kept
        for node_id in ids:
            hit = kept.get((namespace, node_id))
            if hit is None:
                missing.append(node_id)
            else:
                kept.move_to_end((namespace, node_id))
                (kind, data, access_count, last_at), decoded = hit
                found[node_id] = RecordView(kind, data, node_id, access_count, last_at, pending(namespace, node_id),
                                            decoded)
        return found, missing

    def keep(self, namespace: str, views: Iterable[RecordView], since: int) -> None:
        """Keep ``views``, read after ``writes`` was ``since``, unless a write came meanwhile."""
        if since != self.writes:
            return
        kept = self._kept
        for view in views:
            kind, data, node_id, access_count, last_at, _ = view._row
            decoded = {k: v for k, v in view.__dict__.items() if k not in _PER_READ}
            kept[(namespace, node_id)] = ((kind, data, access_count, last_at), decoded)
        while len(kept) > self.size:
            kept.popitem(last=False)

    def drop(self, namespace: str, ids: Iterable[str]) -> None:
        self.writes += 1
        for node_id in ids:
            self._kept.pop((namespace, node_id), None)

    def clear(self, namespace: str | None = None) -> None:
        self.writes += 1
        if namespace is None:
            self._kept.clear()
        else:
            for key in [k for k in self._kept if k[0] == namespace]:
                del self._kept[key]


_PER_READ = frozenset(("access_count", "last_accessed_at", "_row", "_record"))


def record_of(item: Any) -> Any:
    """The record behind a view; any other record as it is."""
    return item.record() if isinstance(item, RecordView) else item
