"""The Neo4j store's searches (a mixin of ``Neo4jStore``): tenant-correct vector top-k (filtered
inside the index on Neo4j 2026.x, over the shared HNSW indexes on 5.26), BM25 inside Lucene with
the tenant's scope tokens, entities by name, the nodes that mention entities, cosines of given
nodes, and the kinds a namespace holds."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..models import LAYERS, Entity, Node, NodeKind, Status
from ..text import MAX_QUERY_TERMS, query_terms
from ..text.entities import Normalised, normalised
from .base import VECTOR_KINDS, first_named, named_lists, scope_token, unit_query
from .cypher import LABELS
from .layers import LayerAsk, LayerHits, Walked, evidence, first_step, named_longest, rank_graph
from .neo4j_rows import READ_CHUNK as _READ_CHUNK
from .neo4j_rows import chunks as _chunks
from .neo4j_rows import lucene_term as _lucene_term
from .views import RecordView

_LABEL_COUNT_TTL = 10.0
TIE_SLACK = 16  # Lucene hits read beyond k, so that tied scores are cut at k in the embedded store's order
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
        """Tenant-correct top-k. On Neo4j 2026.x the index filters by namespace inside its
        search (``cypher/parts/ann_filtered.cypher``): every candidate is the tenant's. On 5.26
        the HNSW index is global, so ``db.index.vector.queryNodes`` returns the top-k of all
        tenants: its answer is only a list of candidates (``ann_global.cypher``).

        - A kind with fewer than ``exact_below`` nodes in the whole database is scanned exactly.
        - Otherwise the index is asked for ``oversample * k`` candidates (at least
          ``min_candidates``, 100 by default, which an HNSW search also needs for its own
          recall); the namespace's own, of the asked statuses, are rescored exactly.
        - If fewer than k survive while the index had more to give, the share of survivors
          sizes a second, larger ask (up to ``_MAX_CANDIDATES``); a namespace with no survivor,
          or still short, is scanned exactly. The share is remembered per namespace and kind,
          so the tenant's next search asks for enough at once.
        So recall never returns another tenant's node nor silently fewer than the tenant has;
        a large namespace gets HNSW's approximate top-k, rescored exactly."""
        q = unit_query(vector, self.dim)
        if k <= 0:
            return []
        status_values = [Status(s).value for s in statuses]
        label = LABELS[kind]
        qlist = q.tolist()
        candidates = self._ann_candidates(namespace, kind, k)
        while candidates:
            row = self._read(
                "vector_ann", _ids=self._ann_ids(kind), ann=candidates, vector=qlist,
                namespace=namespace, statuses=status_values,
            )[0]
            scored = sorted(_cosines(row["scored"]), key=lambda t: (-t[1], t[0]))
            if len(scored) >= k or row["seen"] < candidates:
                self._seen_share(namespace, kind, len(scored), row["seen"])
                return scored[:k]  # enough, or the index holds nothing more
            candidates = self._wider(namespace, kind, k, candidates, len(scored), row["seen"])
        return _cosines(self._rows(
            "vector_exact", _ids={"label": label, "vector": self._prop}, namespace=namespace, statuses=status_values,
            vector=qlist, k=k,
        ))

    def _ann_ids(self, kind: NodeKind) -> dict[str, str]:
        """The slots of a query that asks the vector index: this line's part, the index, the label."""
        return {"ann": "filtered" if self.filtered_vectors else "global", "index": f"{kind}_{self._prop}",
                "label": LABELS[kind], "vector": self._prop}

    def _ann_candidates(self, namespace: str, kind: NodeKind, k: int) -> int:
        """HNSW candidates to ask for a top-k: ``oversample * k`` (at least ``min_candidates``), more where the
        tenant's share of the candidates was small last time; 0 when the kind is small enough
        (all tenants) to be scanned exactly."""
        if kind not in VECTOR_KINDS or self._label_count(LABELS[kind]) < self.exact_below:
            return 0
        ask = max(self.min_candidates, self.oversample * k)
        share = self._shares.get((namespace, kind))
        return min(_MAX_CANDIDATES, max(ask, int(2 * k / share))) if share else ask

    def _seen_share(self, namespace: str, kind: NodeKind, own: int, seen: int) -> None:
        if seen:
            self._shares[(namespace, kind)] = max(own, 1) / seen

    def _wider(self, namespace: str, kind: NodeKind, k: int, asked: int, own: int, seen: int) -> int:
        """The next ask after ``own`` of ``seen`` candidates were the tenant's, too few for k:
        sized by that share (up to ``_MAX_CANDIDATES``); 0 (an exact scan) when none was or
        the most was asked."""
        self._seen_share(namespace, kind, own, seen)
        if not own or asked >= _MAX_CANDIDATES:
            return 0
        return min(_MAX_CANDIDATES, max(2 * asked, int(2 * k * seen / own)))

    def keyword_search(
        self, namespace: str, kind: NodeKind, text: str, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        lucene = _lucene(namespace, kind, text, statuses)
        if lucene is None or k <= 0:
            return []
        return [(node_id, float(score)) for node_id, score in self._rows("keyword_search", query=lucene, k=k,
                                                                           pool=k + TIE_SLACK, namespace=namespace)]

    def search_layer(self, namespace: str, ask: LayerAsk, vector: np.ndarray, text: str) -> LayerHits:
        """One query (``recall_layer.cypher``) where the store's single calls would take five
        to seven round trips. A namespace whose share of the HNSW candidates is too small for
        the top-k (a small tenant among large ones) is asked again as ``vector_search`` widens
        its ask (``_wider``)."""
        k = ask.vector_k
        ann = self._ann_candidates(namespace, ask.kind, k)
        ann = max(ann, k + ask.pool) if ann else 0  # the pool is the HNSW's next best: no oversampling for it
        q = unit_query(vector, self.dim).tolist()
        while True:
            (row,) = self._read(
                "recall_layer", _ids=self._ann_ids(ask.kind), namespace=namespace, kind=ask.kind,
                statuses=[Status(s).value for s in ask.statuses], vector=q, ann=ann, vector_k=k,
                pool=ask.pool, query=_lucene(namespace, ask.kind, text, ask.statuses),
                keyword_k=ask.keyword_k, keyword_pool=ask.keyword_k + TIE_SLACK, rings=[list(ring) for ring in ask.rings],
                weights=dict(ask.weights),
                pair_limit=ask.pair_limit, rescore=ask.rescore if ask.graph_k else 0, graph_k=ask.graph_k,
                rest=None if ask.rest is None else unit_query(ask.rest, self.dim).tolist(),
            )
            if not ann or row["own"] >= k or row["seen"] < ann:
                if ann:
                    self._seen_share(namespace, ask.kind, row["own"], row["seen"])
                break  # enough, an exact scan, or the index holds nothing more
            ann = self._wider(namespace, ask.kind, k, ann, row["own"], row["seen"])
        by_vector, pool, rescored = _cosines(row["top"]), _cosines(row["pool"]), dict(_cosines(row["rescored"]))
        top = dict(by_vector)
        graph = evidence([(node_id, entity_id) for node_id, entity_id in row["pairs"]], ask.weights)
        nodes = {n.id: n for n in self._hydrate(row["rows"], namespace, RecordView)}  # records only for what is shown
        read = top | dict(pool) | rescored | dict(_cosines(row["sims"]))  # every cosine the query computed
        return LayerHits(
            vector=by_vector, keyword=[(node_id, float(score)) for node_id, score in row["keyword"]],
            graph=rank_graph(graph, {i: top[i] for i in graph if i in top} | rescored, ask.graph_k)
            if ask.graph_k else {}, nodes=nodes,
            sims={node_id: read[node_id] for node_id in nodes if node_id in read},
            pool=pool, rest={i: sim for i, sim in _cosines(row["rest"]) if i in nodes},
        )

    def walk(self, namespace: str, names: Iterable[str], depth: int, limit: int) -> Walked:
        """One query (``recall_walk.cypher``) for the names, up to three rings and the first
        ring's relations: three to five round trips as single calls, the first ones on a
        recall's critical path."""
        norms = _norms(names)
        if not norms:
            return Walked([], {}, {})
        (row,) = self._read("recall_walk", namespace=namespace, norms=norms, depth=depth, limit=limit)
        by_id = {e.id: e for e in self._hydrate(row["rows"], namespace)}
        kept = named_longest({norm: by_id[i] for norm, i in row["hits"] if i in by_id})
        entities = [e for e in by_id.values() if e.feedback != "rejected"]
        if {e.id for e in entities} != {e.id for e in kept.values()}:  # a name inside a longer one: the walk again
            return self.walk(namespace, Normalised(kept), depth, limit) if kept else Walked([], {}, {})
        hops = {e.id: 0 for e in entities}
        for hop, ring in enumerate(row["rings"], start=1):
            hops.update((e, hop) for e in ring if e not in hops)
        first: dict[str, tuple[str, str, bool]] = {}
        for there, here, predicate, key, forward in row["first"]:
            first_step(first, there, here, predicate, key, forward)
        return Walked(entities, hops, first, {e: n for e, n in row["mentions"] if n})  # type: ignore[arg-type]

    def turns_beside(self, namespace: str, ids: Sequence[str], vector: np.ndarray, exclude: set[str]
                     ) -> tuple[list[Node], dict[str, float]]:
        if not ids:
            return [], {}
        (row,) = self._read("turns_beside", _ids={"vector": self._prop}, namespace=namespace, ids=list(ids),
                            exclude=sorted(exclude), vector=unit_query(vector, self.dim).tolist())
        nodes = self._hydrate(row["rows"], namespace, RecordView)
        return nodes, dict(_cosines(row["sims"]))

    def kinds_held(self, namespace: str) -> set[str]:
        (row,) = self._read("namespace_kinds", namespace=namespace)
        return {kind for kind in LAYERS if row[kind]}

    def find_entities(self, namespace: str, names: Iterable[str]) -> dict[str, Entity]:
        return first_named(self.entities_named(namespace, names))

    def entities_named(self, namespace: str, names: Iterable[str]) -> dict[str, list[Entity]]:
        return self._named(namespace, (self._read("entity_names_find", namespace=namespace, norms=chunk)[0]
                                       for chunk in _chunks(_norms(names), _READ_CHUNK)))

    def _named(self, namespace: str, rows: Iterable[Any]) -> dict[str, list[Entity]]:
        """Names -> entities from ``entity_names_find`` rows (each: its hits and their records)."""
        hits: dict[str, list[str]] = {}
        entities: dict[str, Node] = {}
        for row in rows:
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

    def mention_counts(self, namespace: str, entity_ids: Sequence[str]) -> dict[str, int]:
        if not entity_ids:
            return {}
        return dict(self._rows("mention_counts", namespace=namespace, ids=list(entity_ids)))

    def vector_scores(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> dict[str, float]:
        return self.vector_scores_of(namespace, {kind: ids}, vector)

    def vector_scores_of(
        self, namespace: str, ids: Mapping[NodeKind, Sequence[str]], vector: np.ndarray
    ) -> dict[str, float]:
        """One read for every kind (a feedback pass scores each layer's candidates again: one
        round trip instead of one per layer)."""
        wanted = list(dict.fromkeys(i for kind_ids in ids.values() for i in kind_ids))
        if not wanted:
            return {}
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        q = (q / (np.linalg.norm(q) or 1.0)).tolist()
        return dict(_cosines(self._rows("vector_scores", _ids={"vector": self._prop}, namespace=namespace,
                                        kinds=[k for k in ids if ids[k]], ids=wanted, vector=q)))

    def get_scored(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> tuple[list[Node], dict[str, float]]:
        q = unit_query(vector, self.dim).tolist()
        found: dict[str, Node] = {}
        sims: dict[str, float] = {}
        for chunk in _chunks(list(dict.fromkeys(ids)), _READ_CHUNK):
            (row,) = self._read("nodes_get_scored", _ids={"vector": self._prop}, namespace=namespace, ids=chunk,
                                kind=kind, vector=q)
            found.update((n.id, n) for n in self._hydrate(row["rows"], namespace, RecordView))
            sims.update(_cosines(row["sims"]))
        return [found[i] for i in ids if i in found], {i: s for i, s in sims.items() if i in found}


def _cosines(rows: Iterable[Sequence]) -> list[tuple[str, float]]:
    """Rows of [id, ..., Neo4j cosine] as (id, cosine): ``vector.similarity.cosine`` is (1 + cos) / 2."""
    return [(row[0], 2.0 * row[-1] - 1.0) for row in rows]


def _norms(names: Iterable[str]) -> list[str]:
    """The normalised names an entity lookup asks for, without blanks, in a stable order."""
    return sorted(normalised(names))


def _lucene(namespace: str, kind: NodeKind, text: str, statuses: Sequence[Status]) -> str | None:
    """The full-text query of a keyword search: the namespace's scope tokens as a filter (boost
    0: they add nothing to BM25) and the query's terms as quoted phrases; None without terms."""
    terms = query_terms(text)[:MAX_QUERY_TERMS]
    if not terms:
        return None
    scopes = " ".join(scope_token(namespace, kind, Status(s).value) for s in statuses)
    return f"+({scopes})^0 +({' '.join(_lucene_term(t) for t in terms)})"
