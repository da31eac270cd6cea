"""The embedded store's edges: SQLite rows, with the RELATES_TO graph held in networkx for
multi-hop traversal (a mixin of ``EmbeddedStore``: it shares the connection and lock)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ..models import Edge, EdgeType, NodeKind, Status
from .base import Direction
from .embedded_parts import chunks as _chunks

if TYPE_CHECKING:
    import networkx as nx


class GraphMixin:
    # edges ------------------------------------------------------------------------------
    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        self.put(namespace, [], edges=edges)

    @staticmethod
    def _put_edges(cur: sqlite3.Cursor, namespace: str, edges: Sequence[Edge]) -> None:
        if not edges:
            return
        ends = list({e.source for e in edges} | {e.target for e in edges})
        present: set[str] = set()
        for chunk in _chunks(ends, 500):
            marks = ",".join("?" * len(chunk))
            present |= {r[0] for r in cur.execute(
                f"SELECT id FROM nodes WHERE namespace = ? AND id IN ({marks})", (namespace, *chunk))}  # noqa: S608
        missing = [x for x in ends if x not in present]
        if missing:
            raise ValidationError(f"edge endpoint {missing[0]!r} does not exist in namespace {namespace!r}")
        cur.executemany(
            "INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(namespace, e.source, e.type.value, e.target, e.key, json.dumps(e.props, ensure_ascii=False),
              e.created_at.timestamp()) for e in edges],
        )

    def delete_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        with self._lock, self._guard():
            self._sync()
            with self._tx() as cur:
                cur.executemany(
                    "DELETE FROM edges WHERE namespace = ? AND source = ? AND type = ? AND target = ? AND key = ?",
                    [(namespace, e.source, e.type.value, e.target, e.key) for e in edges],
                )
            graph = self._graphs.get(namespace)
            if graph is not None:
                for e in edges:
                    if e.type is EdgeType.RELATES_TO and graph.has_edge(e.source, e.target, key=e.key):
                        graph.remove_edge(e.source, e.target, key=e.key)

    def edges(
        self,
        namespace: str,
        ids: Sequence[str],
        *,
        types: Sequence[EdgeType] | None = None,
        direction: Direction = "out",
    ) -> list[Edge]:
        return [Edge.stored(namespace, source, etype, target, key, props, datetime.fromtimestamp(created, tz=timezone.utc))
                for source, etype, target, key, props, created in self._edge_rows(namespace, ids, types, direction, "props")]

    def _relation_ends(self, namespace: str, ids: Sequence[str]) -> list[tuple[str, str, str, Any, Any]]:
        """``edges(ids, RELATES_TO, "both")`` as the walk reads them: the same rows in the same
        order, with only the predicate and end taken out of the properties, in SQL. A walk at
        100k memories reads ~470 relations; whole edges cost it ~10 ms (the models, the JSON)."""
        rows = self._edge_rows(namespace, ids, [EdgeType.RELATES_TO], "both",
                               "json_extract(props, '$.predicate'), json_extract(props, '$.invalid_at')")
        return [(source, target, key, predicate, invalid_at) for source, _, target, key, predicate, invalid_at, _ in rows]

    def _edge_rows(self, namespace: str, ids: Sequence[str], types: Sequence[EdgeType] | None, direction: Direction,
                   columns: str) -> list[tuple]:
        """Rows (source, type, target, key, ``columns``..., created_at) of the edges at ``ids``,
        one per edge, oldest first. ``columns``: SQL of graphmem's own, never a caller's text."""
        if not ids:
            return []
        type_sql, type_params = "", []
        if types:
            type_sql = f" AND type IN ({','.join('?' * len(types))})"
            type_params = [EdgeType(t).value for t in types]
        out: dict[tuple, tuple] = {}
        with self._lock, self._guard():
            self._sync()
            for end in {"out": ["source"], "in": ["target"], "both": ["source", "target"]}[direction]:
                for chunk in _chunks(list(ids), 500):
                    marks = ",".join("?" * len(chunk))
                    for row in self.conn.execute(
                        f"SELECT source, type, target, key, {columns}, created_at FROM edges "  # noqa: S608
                        f"WHERE namespace = ? AND {end} IN ({marks}){type_sql}",
                        (namespace, *chunk, *type_params),
                    ):
                        out[row[:4]] = row
        return sorted(out.values(), key=lambda row: row[-1])

    def _graph(self, namespace: str) -> nx.MultiDiGraph | None:
        """The namespace's relation graph, loaded at its first traversal; None while it has no
        relation edge (nothing cached: the next traversal reads again), so a namespace without
        relations (extraction off) never imports networkx, ~0.1 s of a cold command's CPU."""
        graph = self._graphs.get(namespace)
        if graph is None:
            rows = self.conn.execute("SELECT source, target, key FROM edges WHERE namespace = ? AND type = ?",
                                     (namespace, EdgeType.RELATES_TO.value)).fetchall()
            if not rows:
                return None
            import networkx as nx

            graph = nx.MultiDiGraph()
            graph.add_edges_from(rows)  # (source, target, key): a key as its third item
            self._graphs[namespace] = graph
        return graph

    def neighbours(self, namespace: str, entity_ids: Sequence[str], depth: int, limit: int = 200) -> dict[str, int]:
        with self._lock, self._guard():
            self._sync()
            graph = self._graph(namespace)
            hops = {e: 0 for e in entity_ids}
            if graph is None:
                return hops
            frontier = [e for e in entity_ids if e in graph]
            for hop in range(1, depth + 1):
                nxt = []
                for node in frontier:
                    for other in (*graph.successors(node), *graph.predecessors(node)):
                        if other not in hops:
                            if len(hops) >= limit:
                                return hops
                            hops[other] = hop
                            nxt.append(other)
                frontier = nxt
            return hops

    def mention_counts(self, namespace: str, entity_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._lock, self._guard():
            self._sync()
            for chunk in _chunks(list(entity_ids), 400):
                marks = ",".join("?" * len(chunk))
                for column, etype in (("target", EdgeType.MENTIONS), ("source", EdgeType.SAID)):
                    for entity_id, n in self.conn.execute(
                        f"SELECT {column}, COUNT(*) FROM edges WHERE namespace = ? AND {column} IN ({marks}) "  # noqa: S608
                        f"AND type = ? GROUP BY {column}", (namespace, *chunk, etype.value),
                    ):
                        out[entity_id] = out.get(entity_id, 0) + n
        return out

    def mentioned_by(
        self, namespace: str, entity_ids: Sequence[str], kind: NodeKind, statuses: Sequence[Status], limit: int
    ) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        status_marks = ",".join("?" * len(statuses))
        with self._lock, self._guard():
            self._sync()
            if not self._holds(namespace, kind):
                return out
        with self._reading() as conn:
            for chunk in _chunks(list(entity_ids), 400):
                if len(out) >= limit:
                    break
                marks = ",".join("?" * len(chunk))
                out += conn.execute(
                    # edges by target drive the join; left alone, the planner scans the namespace's edges
                    "SELECT e.source, e.target FROM edges e INDEXED BY edges_by_target_source "
                    "CROSS JOIN nodes n ON n.namespace = e.namespace AND n.id = e.source "
                    f"WHERE e.namespace = ? AND e.type = ? AND e.target IN ({marks}) "  # noqa: S608 (placeholders only)
                    f"AND n.kind = ? AND n.status IN ({status_marks}) LIMIT ?",
                    (namespace, EdgeType.MENTIONS.value, *chunk, kind, *(Status(x).value for x in statuses),
                     limit - len(out)),
                ).fetchall()
        return out
