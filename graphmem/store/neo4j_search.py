"""The Neo4j store's searches (a mixin of ``Neo4jStore``): tenant-correct vector top-k over the
shared HNSW indexes, BM25 inside Lucene with the tenant's scope tokens, entities by name, the
nodes that mention entities, cosines of given nodes, and the kinds a namespace holds."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import numpy as np

from ..models import LAYERS, Entity, Node, NodeKind, Status
from ..text import MAX_QUERY_TERMS, normalise_name, query_terms
from .base import VECTOR_KINDS, first_named, named_lists, scope_token, unit_query
from .cypher import LABELS
from .neo4j_rows import READ_CHUNK as _READ_CHUNK
from .neo4j_rows import chunks as _chunks
from .neo4j_rows import lucene_term as _lucene_term

_LABEL_COUNT_TTL = 10.0
_MAX_CANDIDATES = 5000  # the most HNSW candidates asked before an exact scan of the namespace


class SearchMixin:
    def _label_count(self, label: str) -> int:
        now = time.monotonic()
        cached = self._label_counts.get(label)
        if cached is None or now - cached[0] > _LABEL_COUNT_TTL:
            cached = (now, int(self._read("label_count", _ids={"label": label})[0]["n"]))
            self._label_counts[label] = cached
        return cached[1]

    def vector_search(
        self, namespace: str, kind: NodeKind, vector: np.ndarray, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        """Tenant-correct top-k. The HNSW index is global, so ``db.index.vector.queryNodes``
        returns the top-k of all tenants: its answer is only a list of candidates.

        - A kind with fewer than ``exact_below`` nodes in the whole database is scanned exactly.
        - Otherwise the index is asked for ``oversample * k`` candidates (at least 100); the
          namespace's own, of the asked statuses, are rescored exactly.
        - If fewer than k survive while the index had more to give, the share of survivors
          sizes a second, larger ask (up to ``_MAX_CANDIDATES``); a namespace with no survivor,
          or still short, is scanned exactly.
        So recall never returns another tenant's node nor silently fewer than the tenant has;
        a large namespace gets HNSW's approximate top-k, rescored exactly."""
        q = unit_query(vector, self.dim)
        if k <= 0:
            return []
        status_values = [Status(s).value for s in statuses]
        label = LABELS[kind]
        qlist = q.tolist()
        if kind in VECTOR_KINDS and self._label_count(label) >= self.exact_below:
            candidates = max(100, self.oversample * k)
            while True:
                row = self._read(
                    "vector_ann", index=f"{kind}_{self._prop}", candidates=candidates, vector=qlist,
                    namespace=namespace, statuses=status_values, prop=self._prop,
                )[0]
                scored = sorted(((i, 2.0 * s - 1.0) for i, s in row["scored"]), key=lambda t: (-t[1], t[0]))
                if len(scored) >= k or row["seen"] < candidates:
                    return scored[:k]  # enough, or the index holds nothing more
                if not scored or candidates >= _MAX_CANDIDATES:
                    break
                share = len(scored) / row["seen"]
                candidates = min(_MAX_CANDIDATES, max(2 * candidates, int(2 * k / share)))
        rows = self._rows(
            "vector_exact", _ids={"label": label}, namespace=namespace, statuses=status_values, vector=qlist, k=k,
            prop=self._prop,
        )
        return [(node_id, 2.0 * score - 1.0) for node_id, score in rows]

    def keyword_search(
        self, namespace: str, kind: NodeKind, text: str, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        terms = query_terms(text)[:MAX_QUERY_TERMS]
        if not terms or k <= 0:
            return []
        scopes = " ".join(scope_token(namespace, kind, Status(s).value) for s in statuses)
        # scope tokens filter (boost 0: they add nothing to BM25); terms are quoted phrases
        lucene = f"+({scopes})^0 +({' '.join(_lucene_term(t) for t in terms)})"
        return [(node_id, float(score)) for node_id, score in self._rows("keyword_search", query=lucene, k=k,
                                                                           namespace=namespace)]

    def kinds_held(self, namespace: str) -> set[str]:
        (row,) = self._read("namespace_kinds", namespace=namespace)
        return {kind for kind in LAYERS if row[kind]}

    def find_entities(self, namespace: str, names: Iterable[str]) -> dict[str, Entity]:
        return first_named(self.entities_named(namespace, names))

    def entities_named(self, namespace: str, names: Iterable[str]) -> dict[str, list[Entity]]:
        norms = sorted({normalise_name(n) for n in names} - {""})
        hits: dict[str, list[str]] = {}
        entities: dict[str, Node] = {}
        for chunk in _chunks(norms, _READ_CHUNK):
            (row,) = self._read("entity_names_find", namespace=namespace, norms=chunk)
            for norm, entity_id in row["hits"]:
                hits.setdefault(norm, []).append(entity_id)
            entities.update((n.id, n) for n in self._hydrate(row["rows"], namespace))
        return named_lists(hits, entities)  # type: ignore[arg-type]

    def mentioned_by(
        self, namespace: str, entity_ids: Sequence[str], kind: NodeKind, statuses: Sequence[Status], limit: int
    ) -> list[tuple[str, str]]:
        if not entity_ids or limit <= 0:
            return []
        rows = self._rows(
            "mentioned_by", namespace=namespace, ids=list(entity_ids), kind=kind,
            statuses=[Status(s).value for s in statuses], limit=limit,
        )
        return [(node_id, entity_id) for node_id, entity_id in rows]

    def vector_scores(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> dict[str, float]:
        if not ids:
            return {}
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        q = (q / (np.linalg.norm(q) or 1.0)).tolist()
        rows = self._rows("vector_scores", namespace=namespace, kind=kind, ids=list(ids), vector=q, prop=self._prop)
        return {node_id: 2.0 * score - 1.0 for node_id, score in rows}

    def get_scored(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> tuple[list[Node], dict[str, float]]:
        q = unit_query(vector, self.dim).tolist()
        found: dict[str, Node] = {}
        sims: dict[str, float] = {}
        for chunk in _chunks(list(dict.fromkeys(ids)), _READ_CHUNK):
            (row,) = self._read("nodes_get_scored", namespace=namespace, ids=chunk, kind=kind, vector=q, prop=self._prop)
            found.update((n.id, n) for n in self._hydrate(row["rows"], namespace))
            sims.update((node_id, 2.0 * score - 1.0) for node_id, score in row["sims"])
        return [found[i] for i in ids if i in found], {i: s for i, s in sims.items() if i in found}
