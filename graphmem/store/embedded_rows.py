"""The embedded store's node rows: each node of a write with its full-text and vector rows; the
nodes a batch adds go in with one statement per table."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from ..errors import ValidationError
from ..models import Node
from ..text import index_terms
from .base import entity_norms, node_text, scope_token
from .embedded_parts import chunks as _chunks
from .embedded_parts import ts as _ts


class RowsMixin:
    """``EmbeddedStore``'s node writes, inside the transaction ``put`` holds."""

    def _put_nodes(self, cur: sqlite3.Cursor, namespace: str, nodes: Sequence[Node], vectors: np.ndarray,
                   has_vec: Sequence[bool]) -> None:
        """Each node written with its text and vector. The nodes a batch adds go in with one
        statement per table for the whole batch (``_insert``): a statement per node and table
        let go of the GIL three times a turn, and ``add_messages(wait=False)`` waited behind
        the background worker each time."""
        stored: dict[str, tuple[int, str]] = {}  # id -> (rowid, kind), of the batch's nodes in the file
        for chunk in _chunks(list(dict.fromkeys(n.id for n in nodes)), 500):
            marks = ",".join("?" * len(chunk))
            stored.update((node_id, (rowid, kind)) for node_id, rowid, kind in cur.execute(
                f"SELECT id, rowid, kind FROM nodes WHERE namespace = ? AND id IN ({marks})",  # noqa: S608
                (namespace, *chunk)))
        fresh: dict[str, tuple[Node, np.ndarray | None]] = {}
        for i, node in enumerate(nodes):
            vec = vectors[i] if has_vec[i] else None
            if node.id in stored or node.kind == "entity":
                # rowids are given in order: what is waiting goes in before a row that may take one
                self._insert(cur, namespace, list(fresh.values()), stored)
                fresh = {}
                rowid, kind = stored.get(node.id, (None, node.kind))
                if kind != node.kind:  # as on Neo4j: an id never changes kind
                    raise ValidationError(f"id {node.id!r} is already a {kind} in namespace {namespace!r}, "
                                          f"not a {node.kind}")
                stored[node.id] = (self._put_one(cur, namespace, node, vec, rowid), node.kind)
            else:
                fresh[node.id] = (node, vec)  # a node new to the file given twice: its last version
        self._insert(cur, namespace, list(fresh.values()), stored)

    @staticmethod
    def _row(namespace: str, node: Node) -> tuple:
        """The ``nodes`` columns of a node, from namespace to data."""
        data = node.model_dump(mode="json", exclude={"access_count", "last_accessed_at"})
        return (
            namespace, node.id, node.kind, data.get("status"), getattr(node, "session_id", None),
            getattr(node, "category", None), node.seq if node.kind == "message" else None, _ts(node.created_at),
            _ts(node.updated_at), getattr(node, "access_count", 0), _ts(getattr(node, "last_accessed_at", None)),
            json.dumps(data, ensure_ascii=False),
        )

    def _insert(self, cur: sqlite3.Cursor, namespace: str, new: list[tuple[Node, np.ndarray | None]],
                stored: dict[str, tuple[int, str]]) -> None:
        """Nodes not in the file yet, with their texts and vectors: one statement per table. Each
        takes the rowid SQLite would give it (the largest + 1, in order), which the full-text
        and vector rows share."""
        if not new:
            return
        first = (cur.execute("SELECT max(rowid) FROM nodes").fetchone()[0] or 0) + 1
        rows, texts, vecs = [], [], []
        for rowid, (node, vec) in enumerate(new, first):
            row = self._row(namespace, node)
            rows.append((rowid, *row))
            _side_rows(texts, vecs, rowid, namespace, node, row[3], vec)
            stored[node.id] = (rowid, node.kind)
        cur.executemany(
            "INSERT INTO nodes (rowid, namespace, id, kind, status, session_id, category, seq, created_at, updated_at,"
            " access_count, last_accessed_at, data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        self._write_sides(cur, texts, vecs)

    def _write_sides(self, cur: sqlite3.Cursor, texts: list[tuple], vecs: list[tuple]) -> None:
        """Rows' full-text and vector rows (``_side_rows``)."""
        cur.executemany("INSERT INTO fts (rowid, scope, body) VALUES (?, ?, ?)", texts)
        cur.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", vecs)
        if self._next is not None and vecs:  # the text may have changed: a re-embedding's vector is due again
            cur.executemany("DELETE FROM vectors_next WHERE rowid = ?", [(rowid,) for rowid, _ in vecs])

    def _put_one(self, cur: sqlite3.Cursor, namespace: str, node: Node, vec: np.ndarray | None,
                 rowid: int | None) -> int:
        """One node written (``rowid``: its row, where it is stored already); its rowid."""
        if rowid is None:
            stored: dict[str, tuple[int, str]] = {}
            self._insert(cur, namespace, [(node, vec)], stored)
            rowid = stored[node.id][0]
        else:
            values = self._row(namespace, node)
            cur.execute(
                "UPDATE nodes SET namespace=?, id=?, kind=?, status=?, session_id=?, category=?, seq=?, created_at=?,"
                " updated_at=?, access_count=?, last_accessed_at=?, data=? WHERE rowid=?",
                (*values, rowid),
            )
            cur.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            self._access.discard(namespace, [node.id])
            texts: list[tuple] = []
            vecs: list[tuple] = []
            _side_rows(texts, vecs, rowid, namespace, node, values[3], vec)
            self._write_sides(cur, texts, vecs)
        if node.kind == "entity":
            cur.execute("DELETE FROM names WHERE namespace = ? AND entity_id = ?", (namespace, node.id))
            for name in entity_norms(node):
                cur.execute("INSERT OR IGNORE INTO names VALUES (?, ?, ?)", (namespace, name, node.id))
        return rowid


def _side_rows(texts: list[tuple], vecs: list[tuple], rowid: int, namespace: str, node: Node, status: str | None,
               vec: np.ndarray | None) -> None:
    """A node's full-text row (where it has text) and vector row (where it has a vector), added
    to ``texts`` and ``vecs``."""
    text = node_text(node)
    if text:
        texts.append((rowid, scope_token(namespace, node.kind, status), index_terms(text)))
    if vec is not None:
        vecs.append((rowid, vec.astype(np.float32).tobytes()))
