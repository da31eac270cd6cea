"""Hybrid recall: vector, keyword and graph candidates per layer, the five-factor score,
then a merge that keeps every layer in view."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from datetime import datetime

import numpy as np

from ..embed import Embedder
from ..models import ScoredItem, Status, utcnow
from ..settings import RecallFilter, RecallOptions
from ..store import Store
from ..text import keywords, segment
from .scoring import held_at, relevance, score

log = logging.getLogger(__name__)

# Graph score of a memory by how far the entity it mentions is from an entity in the query.
_HOP_SCORE = {0: 1.0, 1: 0.6, 2: 0.35, 3: 0.2}
_GRAPH_ENTITY_LIMIT = 100  # entities a query may expand to
_GRAPH_PAIR_LIMIT = 1000  # (memory, entity) pairs read before ranking
_MAX_NAME_WORDS = 4
_EDGE_PUNCT = "\"'“”‘’.,;:!?()[]{}<>「」『』，。；：！？（）"


@dataclass
class _Candidate:
    semantic: float | None = None
    keyword_raw: float = 0.0
    graph: float = 0.0
    via: list[str] = field(default_factory=list)


@dataclass
class RecallResult:
    items: list[ScoredItem]
    timings_ms: dict[str, float]
    query_entities: list[str]


class Recaller:
    """Runs recall against any ``Store``; holds no state of its own beyond its parts."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        # keyword search (SQLite, GIL released) overlaps the vector and graph work
        # keyword and vector searches of every layer run side by side (a server backend
        # overlaps their round trips; the embedded store serialises what must be serialised)
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graphmem-search")

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def query_entities(self, namespace: str, query: str) -> dict[str, str]:
        """Known entities named in the query -> their ids. Every 1-4 word n-gram of the query
        (as tokens, and as written, so "Jean-Luc" and "北京大学" match too) is looked up by
        normalised name and alias: one indexed query, no NER model on the read path."""
        names: set[str] = set()
        for words in (segment(query), [w.strip(_EDGE_PUNCT) for w in query.split()]):
            words = [w for w in words if w]
            for n in range(1, _MAX_NAME_WORDS + 1):
                for i in range(len(words) - n + 1):
                    names.add(" ".join(words[i : i + n]))
                    names.add("".join(words[i : i + n]))  # Chinese names that jieba split
        found = self.store.find_entities(namespace, names)
        return {e.name: e.id for e in found.values()}

    def recall(
        self,
        namespace: str,
        query: str,
        *,
        k: int,
        options: RecallOptions,
        filter: RecallFilter = RecallFilter.DEFAULT,
        now: datetime | None = None,
        query_vector: np.ndarray | None = None,
    ) -> RecallResult:
        now = now or utcnow()
        layers, statuses, session_id, as_of = filter.layers, filter.statuses(), filter.session_id, filter.as_of
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        qvec = query_vector if query_vector is not None else self.embedder.embed([query], query=True)[0]
        timings["embed"] = (time.perf_counter() - t0) * 1000

        # The log stays searchable: a message whose window was extracted is archived and steps
        # back behind the memories (its importance and confidence are lower) but is not lost,
        # so a detail the model dropped can still be found.
        layer_statuses = {
            layer: tuple(dict.fromkeys([*statuses, Status.archived])) if layer == "message" else tuple(statuses)
            for layer in layers
        }
        keyword_jobs = {
            layer: self._pool.submit(self.store.keyword_search, namespace, layer, query, options.keyword_candidates,
                                     layer_statuses[layer])
            for layer in layers
        }
        vector_jobs = {
            layer: self._pool.submit(self.store.vector_search, namespace, layer, qvec, options.vector_candidates,
                                     layer_statuses[layer])
            for layer in layers
        }
        t1 = time.perf_counter()
        entities = self.query_entities(namespace, query) if "memory" in layers and options.graph_candidates else {}
        graph_hits = (
            self._graph_candidates(namespace, list(entities.values()), qvec, statuses, options) if entities else {}
        )
        timings["graph"] = (time.perf_counter() - t1) * 1000

        t2 = time.perf_counter()
        per_layer: dict[str, dict[str, _Candidate]] = {}
        for layer in layers:
            cands: dict[str, _Candidate] = {}
            for node_id, sim in vector_jobs[layer].result():
                c = cands.setdefault(node_id, _Candidate())
                c.semantic = max(0.0, sim)
                c.via.append("vector")
            for node_id, bm25 in keyword_jobs[layer].result():
                c = cands.setdefault(node_id, _Candidate())
                c.keyword_raw = bm25
                c.via.append("keyword")
            if layer == "memory":
                for node_id, (g, sim) in graph_hits.items():
                    c = cands.setdefault(node_id, _Candidate())
                    c.graph = g
                    c.semantic = max(0.0, sim)
                    c.via.append("graph")
            if len(cands) > options.max_candidates:
                ranked = sorted(cands.items(), key=lambda kv: -(kv[1].semantic or 0) - kv[1].graph - (kv[1].keyword_raw > 0))
                cands = dict(ranked[: options.max_candidates])
            per_layer[layer] = cands
        timings["candidates"] = (time.perf_counter() - t2) * 1000

        t3 = time.perf_counter()

        scored_by_layer: dict[str, list[ScoredItem]] = {}
        q_terms = set(keywords(query))
        def fetch(layer: str, cands: dict[str, _Candidate]) -> dict[str, Any]:
            records = {r.id: r for r in self.store.get(namespace, list(cands))}
            missing = [i for i, c in cands.items() if c.semantic is None and i in records]
            if missing:
                for node_id, sim in self.store.vector_scores(namespace, layer, missing, qvec).items():
                    cands[node_id].semantic = max(0.0, sim)
            return records

        fetched = {layer: self._pool.submit(fetch, layer, cands) for layer, cands in per_layer.items() if cands}
        for layer, cands in per_layer.items():
            if not cands:
                continue
            records = fetched[layer].result()
            top_kw = max((c.keyword_raw for c in cands.values()), default=0.0)
            scored: list[ScoredItem] = []
            kept = {}
            for node_id, c in cands.items():
                rec = records.get(node_id)
                if rec is None or rec.kind != layer or rec.status not in layer_statuses[layer]:
                    continue  # a graph hit of another kind, superseded, or deleted meanwhile
                if session_id is not None and layer == "message" and rec.session_id != session_id:
                    continue
                if as_of is not None and not held_at(rec, as_of):
                    continue
                kept[node_id] = (rec, keyword_signal(c.keyword_raw, top_kw, q_terms, rec.keywords))
            borrowed = self._neighbour_relevance(kept, cands, options) if layer == "message" else {}
            for node_id, (rec, kw) in kept.items():
                c = cands[node_id]
                breakdown = score(rec, semantic=c.semantic or 0.0, keyword=kw, graph=c.graph, now=now, options=options,
                                  context=borrowed.get(node_id, 0.0))
                if breakdown.relevance < options.min_relevance:
                    continue
                scored.append(ScoredItem(layer=layer, item=rec, score=breakdown.total, breakdown=breakdown,
                                         matched_by=list(dict.fromkeys(c.via))))
            scored.sort(key=lambda s: (-s.score, s.item.id))
            scored_by_layer[layer] = scored
        items = merge_layers(scored_by_layer, k)
        timings["score"] = (time.perf_counter() - t3) * 1000
        if items and filter.record_access:
            self.store.record_access(namespace, [s.item.id for s in items], now)
        timings["total"] = (time.perf_counter() - t0) * 1000
        return RecallResult(items=items, timings_ms=timings, query_entities=list(entities))

    @staticmethod
    def _neighbour_relevance(kept: dict, cands: dict, options: RecallOptions) -> dict[str, float]:
        """A turn borrows a share of the relevance of the turn before or after it: the answer
        to a question often repeats none of its words."""
        if not options.neighbour_turns:
            return {}
        base = {i: relevance(cands[i].semantic or 0.0, kw, cands[i].graph, options.relevance) for i, (_, kw) in kept.items()}
        at = {(rec.session_id, rec.seq): i for i, (rec, _) in kept.items()}
        out = {}
        for i, (rec, _) in kept.items():
            near = [base[j] for d in (-1, 1) if (j := at.get((rec.session_id, rec.seq + d))) is not None]
            if near:
                out[i] = options.neighbour_turns * max(near)
        return out

    def _graph_candidates(
        self, namespace: str, entity_ids: list[str], qvec: np.ndarray, statuses: Sequence[Status], options: RecallOptions
    ) -> dict[str, tuple[float, float]]:
        """Memories that mention the query's entities or their neighbours -> (graph score,
        cosine). A hub entity can reach thousands: they are ranked by graph score plus
        similarity to the query and cut to ``graph_candidates``."""
        hops = self.store.neighbours(namespace, entity_ids, options.graph_depth, limit=_GRAPH_ENTITY_LIMIT)
        graph: dict[str, float] = {}
        budget = _GRAPH_PAIR_LIMIT
        for hop in sorted(set(hops.values())):  # the query's own entities first, then each ring outwards
            ring = [e for e, h in hops.items() if h == hop]
            pairs = self.store.mentioned_by(namespace, ring, "memory", statuses, budget)
            for node_id, _ in pairs:
                graph[node_id] = max(graph.get(node_id, 0.0), _HOP_SCORE.get(hop, 0.1))
            budget -= len(pairs)
            if budget <= 0:
                break
        sims = self.store.vector_scores(namespace, "memory", list(graph), qvec)
        ranked = sorted(graph, key=lambda i: -(graph[i] + sims.get(i, 0.0)))[: options.graph_candidates]
        return {i: (graph[i], sims.get(i, 0.0)) for i in ranked}


def keyword_signal(bm25: float, top_bm25: float, query_terms: set[str], item_terms: Sequence[str]) -> float:
    """Keyword relevance in 0..1: half BM25 relative to the best hit of the layer, half the
    share of the query's keywords the item contains. BM25 alone, scaled by the best hit,
    rates a weak match of one common word as highly as a match of the whole query."""
    if bm25 <= 0 or top_bm25 <= 0:
        return 0.0
    coverage = len(query_terms & set(item_terms)) / len(query_terms) if query_terms else 0.0
    return 0.5 * (bm25 / top_bm25) + 0.5 * coverage


def merge_layers(by_layer: dict[str, list[ScoredItem]], k: int) -> list[ScoredItem]:
    """The k best overall, but each layer's best item is kept when it has one, so that a
    layer with many strong items (say, raw messages) cannot crowd out the others."""
    if k <= 0:
        return []
    chosen: dict[str, ScoredItem] = {}
    heads = sorted((items[0] for items in by_layer.values() if items), key=lambda s: -s.score)
    for head in heads[:k]:
        chosen[head.item.id] = head
    rest = sorted((s for items in by_layer.values() for s in items[1:]), key=lambda s: (-s.score, s.item.id))
    for s in rest:
        if len(chosen) >= k:
            break
        chosen[s.item.id] = s
    return sorted(chosen.values(), key=lambda s: (-s.score, s.item.id))
