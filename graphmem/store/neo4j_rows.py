"""How graphmem's records travel to and from Neo4j: node properties, edge rows, Lucene terms."""

from __future__ import annotations

import calendar
import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from ..errors import StoreError, ValidationError
from ..models import Edge, EdgeType, Node
from .base import body_terms, node_text, scope_token
from .cypher_scope import check_scoped

WRITE_BATCH = 2000  # nodes or edges per UNWIND
READ_CHUNK = 5000  # ids per IN list


def lucene_term(term: str) -> str:
    """One term as a quoted Lucene phrase: user text can never become query syntax."""
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_native(value: Any) -> Any:
    return value.to_native() if hasattr(value, "to_native") else value


def epoch(value: datetime) -> list[int]:
    """A datetime as ``[seconds, nanoseconds]`` since the epoch, which a write turns back into a
    DateTime (``datetime({epochSeconds: .., nanosecond: ..})``, the same instant in UTC): the
    driver packs a datetime through pytz in 30-60 us, two ints in about 1; at ~9 datetimes a
    memory (its own and its edges') that was a quarter of a write's client time. A naive
    datetime is read as UTC (``utctimetuple`` leaves it as it is), as the models read one."""
    return [calendar.timegm(value.utctimetuple()), value.microsecond * 1000]


def plain(value: Any) -> Any:
    """A model field as a Neo4j property value, or None when it has no property form."""
    if hasattr(value, "value") and not isinstance(value, (str, int, float, bool, datetime)):
        value = value.value  # enums
    if value is None or isinstance(value, (str, int, float, bool, datetime)):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def write_row(node: Node) -> dict[str, Any]:
    """A node as the rows ``nodes_put`` and ``nodes_retire_finish`` take: ``props`` to set (a
    None removes the property) and ``times``, its datetime properties as ``epoch`` pairs."""
    out = props(node)
    times = {k: epoch(v) for k, v in out.items() if isinstance(v, datetime)}
    return {"id": node.id, "props": {k: v for k, v in out.items() if k not in times}, "times": times}


def props(node: Node) -> dict[str, Any]:
    """Searchable, explorable properties of a node (the JSON ``data`` is the source of truth)."""
    out: dict[str, Any] = {}
    for name in type(node).model_fields:
        if name in ("metadata", "access_count", "last_accessed_at"):
            continue
        out[name] = plain(getattr(node, name))
    if node.kind == "tool_call":  # as JSON text: a property holds no map
        out["arguments"] = json.dumps(node.arguments, ensure_ascii=False)
    if node.kind == "trace_step":
        out["text"] = node.text
    if getattr(node, "superseded_by", None) is not None:  # a turn or episode stating a replaced value
        out["superseded_by"] = node.superseded_by.memory_id
    text = node_text(node)
    status = getattr(node, "status", None)
    out["text"] = text if text is not None else out.get("text")
    out["terms"] = (
        scope_token(node.namespace, node.kind, status.value if status else None) + " " + body_terms(text)
        if text else None
    )
    data = node.model_dump(mode="json", exclude={"access_count", "last_accessed_at"})
    out["data"] = json.dumps(data, ensure_ascii=False)
    out["access_count"] = getattr(node, "access_count", 0)
    out["last_accessed_at"] = getattr(node, "last_accessed_at", None)
    return out


def edge_row(e: Edge) -> dict[str, Any]:
    flat = {k: plain(v) for k, v in e.props.items() if k not in ("key", "props", "created_at")}
    return {
        "source": e.source, "target": e.target, "key": e.key, "created_at": epoch(e.created_at),
        "props": json.dumps(e.props, ensure_ascii=False), "flat": flat,
    }


def chunks(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def edge_rows(edges: Sequence[Edge]) -> dict[str, list[dict[str, Any]]]:
    """Edges as ``edges_put`` rows, grouped by relationship type."""
    out: dict[str, list[dict[str, Any]]] = {}
    for e in edges:
        out.setdefault(EdgeType(e.type).value, []).append(edge_row(e))
    return out


def _own(value: Any, namespace: str) -> None:
    """Raise if ``value`` holds a node (alone, in a list or map, or on a relationship or path)
    of another namespace: the second line behind ``check_scoped``."""
    if isinstance(value, (list, tuple)):
        for item in value:
            _own(item, namespace)
    elif isinstance(value, dict):
        for item in value.values():
            _own(item, namespace)
    elif hasattr(value, "nodes") and not hasattr(value, "labels"):  # a path or a relationship
        for node in value.nodes:
            _own(node, namespace)
    elif hasattr(value, "labels") and hasattr(value, "get"):  # a node
        if "namespace" in value.keys() and value.get("namespace") != namespace:
            raise ValidationError("the query's answer holds a node of another namespace; it was withheld")


class ExploreMixin:
    """Read-only Cypher of a user's own (``Memory.cypher``, ``graphmem cypher``)."""

    def explore(self, text: str, params: dict[str, Any], namespace: str) -> tuple[list[str], list[list[Any]]]:
        """Run a user's exploration query, kept to ``namespace`` (``cypher_scope``: a query
        that could read beyond it is refused before it is sent, ``$namespace`` is always
        ``namespace``, and a node of another namespace in the answer is an error), in a read
        transaction: any write is refused by the server. Returns column names and rows."""
        check_scoped(text)
        if params.get("namespace", namespace) != namespace:
            raise ValidationError(f"$namespace is the namespace the query runs in ({namespace!r}); a query cannot "
                                  "name another")
        params = {**params, "namespace": namespace}

        def work(tx: Any) -> tuple[list[str], list[list[Any]]]:
            result = tx.run(text, params)
            rows = [list(r.values()) for r in result]
            for row in rows:
                _own(row, namespace)
            return list(result.keys()), rows

        try:
            with self._errors(), self._session(default_access_mode=self._neo4j.READ_ACCESS) as session:
                return session.execute_read(work)
        except StoreError as exc:
            cause = exc.__cause__
            code = getattr(cause, "code", "") or ""
            if "AccessMode" in code or "ForbiddenDueToTransactionType" in code:
                raise ValidationError(f"graphmem cypher runs read-only queries; the server refused a write: {cause.message}") from cause
            if "ParameterMissing" in code or "Statement.Syntax" in code or "ArgumentError" in code:
                raise ValidationError(f"the query cannot run: {cause.message}") from cause
            raise
