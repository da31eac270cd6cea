"""The embedded store's searches: vectors (exact, or through an HNSW graph once a kind is
large: ``embedded_ann``) and BM25 keywords over FTS5 (a mixin of ``EmbeddedStore``: it shares
the connection, the lock and the caches)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import get_args

import numpy as np

from ..models import LAYERS, Node, NodeKind, Status
from ..text import query_terms
from .base import scope_token, unit_query
from .embedded_ann import AnnState, ann_file, settle
from .embedded_parts import (
    LOAD_CHUNK, STATUS_CODE, VectorIndex, doc_counts, fts_rows, fts_version, keyword_query, tenant_counts,
)
from .layers import LayerAsk, LayerHits, Walked, search_layer, turns_beside, walk

_TERMS_KEPT = 4096  # terms whose document counts are kept between changes of the full-text index


class SearchMixin:
    def search_layer(self, namespace: str, ask: LayerAsk, vector: np.ndarray, text: str) -> LayerHits:
        return search_layer(self, namespace, ask, vector, text)  # in-process calls: nothing to save by one query

    def turns_beside(self, namespace: str, ids: Sequence[str], vector: np.ndarray, exclude: set[str]
                     ) -> tuple[list[Node], dict[str, float]]:
        return turns_beside(self, namespace, ids, vector, exclude)

    def walk(self, namespace: str, names: Sequence[str], depth: int, limit: int) -> Walked:
        return walk(self, namespace, names, depth, limit, relations=self._relation_ends)

    def settle(self) -> None:
        """Wait until the vector graphs due are built and merged (searches never wait for them)."""
        settle(self._vindex, self._lock)

    def _index(self, namespace: str, kind: str) -> VectorIndex:
        index = self._vindex.get((namespace, kind))
        if index is None:
            lock = threading.RLock()
            ann = AnnState(self.ann_threshold, ann_file(self._ann_root, namespace, kind) if self._ann_root else None,
                           lock) if self.ann_threshold else None
            index = VectorIndex(self._dim(), ann, lock)
            # the rows go into a matrix sized once, a chunk at a time: at 1M memories reading
            # them all as blobs, joined, then copied held three 2 GB copies at once
            index.reserve(self.conn.execute("SELECT count(*) FROM nodes WHERE namespace = ? AND kind = ?",
                                            (namespace, kind)).fetchone()[0])
            rows = self.conn.execute(
                "SELECT n.id, n.status, v.vec FROM nodes n JOIN vectors v ON v.rowid = n.rowid "
                "WHERE n.namespace = ? AND n.kind = ?",
                (namespace, kind),
            )
            while chunk := rows.fetchmany(LOAD_CHUNK):
                ids, statuses, blobs = zip(*chunk)
                index.upsert(ids, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), self.dim),
                             [STATUS_CODE.get(status, 0) for status in statuses])
            self._vindex[(namespace, kind)] = index
        return index

    def _holds(self, namespace: str, kind: str) -> bool:
        """Whether the namespace has any node of ``kind`` (cached until the next commit): a
        search of an empty kind costs nothing. Call with the lock held, after ``_sync``."""
        if self._kinds[0] != self._commits:
            self._kinds = (self._commits, {})
        held = self._kinds[1].get((namespace, kind))
        if held is None:
            held = self.conn.execute(
                "SELECT 1 FROM nodes WHERE namespace = ? AND kind = ? LIMIT 1", (namespace, kind)).fetchone() is not None
            self._kinds[1][(namespace, kind)] = held
        return held

    def get_scored(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> tuple[list[Node], dict[str, float]]:
        return self.views(namespace, ids), self.vector_scores(namespace, kind, ids, vector)

    def kinds_held(self, namespace: str) -> set[str]:
        with self._lock, self._guard():
            self._sync()
            return {kind for kind in LAYERS if self._holds(namespace, kind)}

    def vector_search(
        self, namespace: str, kind: NodeKind, vector: np.ndarray, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        q = unit_query(vector, self.dim)
        with self._lock, self._guard():
            self._sync()
            index = self._index(namespace, kind)
        return index.search(q, k, [STATUS_CODE[Status(s).value] for s in statuses])  # its own lock: beside the store's work

    def keyword_search(
        self, namespace: str, kind: NodeKind, text: str, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        terms = query_terms(text)
        if not terms or k <= 0:
            return []
        scopes = [scope_token(namespace, kind, Status(x).value) for x in statuses]
        with self._lock, self._guard():
            self._sync()
            if not self._holds(namespace, kind):
                return []
            df = self._term_counts(terms)
            tenant = self._tenant(namespace, terms, df)
            # about what part of the file the scopes hold: the kind's vectors (a guide only)
            index = self._vindex.get((namespace, kind))
            share = index.size / max(fts_rows(self.conn), 1) if index is not None and tenant is None else 0.0
        with self._reading() as conn:
            return keyword_query(conn, terms, df, scopes, namespace, k, tenant, share)

    def _term_counts(self, terms: list[str]) -> dict[str, int]:
        """Documents per term (the terms in some document only), kept until the full-text index
        changes: FTS5's vocabulary counts a term by reading its whole document list (a common
        word in 100k memories: ~1 ms), and questions repeat their words ("prefer", "work")."""
        version = fts_version(self.conn)
        if self._doc_counts[0] != version or len(self._doc_counts[1]) > _TERMS_KEPT:
            self._doc_counts = (version, {})
        known = self._doc_counts[1]
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        if missing:
            found = doc_counts(self.conn, missing)
            known.update((t, found.get(t, 0)) for t in missing)
        return {t: known[t] for t in terms if known[t]}

    def _tenant(self, namespace: str, terms: list[str], df: dict[str, int]) -> tuple[int, dict[str, int]] | None:
        """None where the file holds one namespace (FTS5's counts are its own), else the
        namespace's documents and the terms' counts among them, read once per commit (the
        documents) and per recall (the counts: the layers of one recall ask for the same terms)."""
        if self._tenants[0] != self._commits:
            many = self.conn.execute("SELECT count(*) > 1 FROM namespaces").fetchone()[0]
            self._tenants = (self._commits, {} if many else None, None)
        _, sizes, last = self._tenants
        if sizes is None:
            return None
        if namespace not in sizes:
            tokens = [scope_token(namespace, kind, status.value) for kind in get_args(NodeKind) for status in Status]
            sizes[namespace] = (tokens, sum(doc_counts(self.conn, tokens).values()))
        tokens, rows = sizes[namespace]
        if last is None or last[0] != (namespace, tuple(terms)):
            last = ((namespace, tuple(terms)), tenant_counts(self.conn, terms, df, tokens))
            self._tenants = (self._commits, sizes, last)
        return rows, last[1]

    def vector_scores_of(
        self, namespace: str, ids: Mapping[NodeKind, Sequence[str]], vector: np.ndarray
    ) -> dict[str, float]:
        return {i: sim for kind, kind_ids in ids.items() for i, sim in
                self.vector_scores(namespace, kind, kind_ids, vector).items()}

    def vector_scores(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> dict[str, float]:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        q = q / (np.linalg.norm(q) or 1.0)
        with self._lock, self._guard():
            self._sync()
            index = self._index(namespace, kind)
        return index.scores(ids, q)
