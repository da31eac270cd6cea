"""Retirements in two steps on Neo4j (a mixin of ``Neo4jStore``).

Neo4j reads take no locks and a commit reaches the store before its index updates, so a
correction written as one transaction (the new version created, the old one retired) could be
read half applied: the old version already superseded, the new one not yet found by the index
a query scans, and no current version at all (seen by ``benchmarks/faults.py``'s soak). So
``put`` retires a node superseded or merged into a node of the same write in a second
transaction, once the first (the successor, the edges, and a mark on the old node holding its
retired record) has committed and is in every index. A read that holds the old node beside one
of its successors takes the retired record (``retired_form``); one that holds it alone reads the
state before the write. A store that opens finishes retirements whose second step never ran."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..errors import StoreError
from ..models import Edge, EdgeType, Node, Status
from .neo4j_rows import WRITE_BATCH, chunks, write_row

log = logging.getLogger(__name__)


def retirements(nodes: Sequence[Node], edges: Sequence[Edge], rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes of a write retired in favour of a node of the same write (SUPERSEDES new -> old,
    MERGED_INTO old -> survivor) and given no new vector, as rows of ``nodes_retire_begin``:
    Neo4jStore.put retires them in a second transaction, once their successors are indexed.
    ``rows`` maps a node id to its ``nodes_put`` row."""
    successors: dict[str, list[str]] = {}
    for e in edges:
        if e.type == EdgeType.SUPERSEDES and e.source in rows:
            successors.setdefault(e.target, []).append(e.source)
        elif e.type == EdgeType.MERGED_INTO and e.target in rows:
            successors.setdefault(e.source, []).append(e.target)
    return [
        {"id": n.id, "kind": n.kind, "successors": successors[n.id], "data": rows[n.id]["props"]["data"],
         "updated_at": n.updated_at}
        for n in nodes
        if n.id in successors and getattr(n, "status", None) in (Status.superseded, Status.merged)
        and rows[n.id]["vector"] is None
    ]


def retired_form(rows: list[list[Any]]) -> list[list[Any]]:
    """Rows of [kind, data, access_count, last_accessed_at, id, retiring, ...] with ``data``
    replaced by the retired record where ``retiring`` ([successor ids, retired record]) names
    a successor that the same read holds."""
    seen = {row[4] for row in rows}
    return [[*row[:1], r[1], *row[2:]] if (r := row[5]) and r[1] and seen.intersection(r[0] or ()) else row
            for row in rows]


class RetireMixin:
    def _finish_retirements(self, namespace: str, rows: list[dict[str, Any]]) -> None:
        """The second step. The first is committed and acknowledged; if this one fails, the
        store finishes it when it next opens (reads meanwhile use ``retired_form``)."""
        work = [{"id": r["id"], "props": r["props"], "times": r["times"]} for r in rows]
        try:
            self._run(True, lambda tx: [self._tx(tx, "nodes_retire_finish", namespace=namespace, rows=chunk)
                                        for chunk in chunks(work, WRITE_BATCH)])
        except StoreError as exc:
            log.warning("graphmem: %d retirements in %r left for the next open: %s", len(rows), namespace, exc)

    def _recover_retirements(self) -> None:
        by_namespace: dict[str, list[dict[str, Any]]] = {}
        for node in self._hydrate(self._rows("nodes_retire_pending")):
            by_namespace.setdefault(node.namespace, []).append(write_row(node))
        for namespace, rows in by_namespace.items():
            self._finish_retirements(namespace, rows)
