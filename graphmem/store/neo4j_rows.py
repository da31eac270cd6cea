"""How graphmem's records travel to and from Neo4j: node properties, edge rows, Lucene terms."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from ..errors import StoreError, ValidationError
from ..models import Edge, EdgeType, Node
from .base import body_terms, node_text, scope_token

WRITE_BATCH = 2000  # nodes or edges per UNWIND
READ_CHUNK = 5000  # ids per IN list


def lucene_term(term: str) -> str:
    """One term as a quoted Lucene phrase: user text can never become query syntax."""
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_native(value: Any) -> Any:
    return value.to_native() if hasattr(value, "to_native") else value


def plain(value: Any) -> Any:
    """A model field as a Neo4j property value, or None when it has no property form."""
    if hasattr(value, "value") and not isinstance(value, (str, int, float, bool, datetime)):
        value = value.value  # enums
    if value is None or isinstance(value, (str, int, float, bool, datetime)):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


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
        "source": e.source, "target": e.target, "key": e.key, "created_at": e.created_at,
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


class ExploreMixin:
    """Read-only Cypher of a user's own (``Memory.cypher``, ``graphmem cypher``)."""

    def explore(self, text: str, params: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
        """Run a user's exploration query in a read transaction: any write is refused by the
        server. Returns column names and rows."""

        def work(tx: Any) -> tuple[list[str], list[list[Any]]]:
            result = tx.run(text, params)
            return list(result.keys()), [list(r.values()) for r in result]

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
