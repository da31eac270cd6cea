"""A recall's reads as three store calls: ``Store.walk`` (the entities the query names and
their relation rings), ``Store.search_layer`` once per layer and ``Store.turns_beside``.

Recall asks each layer for its vector top-k, its keyword top-k and the nodes that mention the
graph walk's entities, with the cosines the ranking needs and the records of the candidates.
The functions named after the calls compose them from the store's single-purpose calls (the
embedded store, where a call is a function call); a server store answers each in one query
instead (``cypher/store/recall_walk.cypher``, ``recall_layer.cypher``, ``turns_beside.cypher``
on Neo4j). Both rank with the same functions here, so the two cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..models import EdgeType, Entity, Node, NodeKind, Status
from ..text.entities import longest_names

if TYPE_CHECKING:
    from .base import Store


@dataclass
class Walked:
    """Recall's graph walk: the entities the query names (rejected ones left out), every entity
    within the depth -> its hop (0: named), for the first ring the relation that reached it:
    entity -> (named entity, predicate, forward), over relations that still hold, and for the
    named entities the nodes that mention them or that they said (``Store.mention_counts``;
    not the rings': a hundred hubs' counts cost a 100k namespace 25 ms a recall)."""

    entities: list[Entity]
    hops: dict[str, int]
    first: dict[str, tuple[str, str, bool]]
    mentions: dict[str, int] = field(default_factory=dict)


def first_step(found: dict[str, tuple[str, str, bool]], there: str, here: str, predicate: str | None, key: str | None,
               forward: bool) -> None:
    """Keep the first relation that reaches ``there`` (relations come oldest first)."""
    if there not in found:
        found[there] = (here, str(predicate or key or "related"), forward)


def named_longest(named: Mapping[str, Entity]) -> dict[str, Entity]:
    """The entity each name found names (``Store.find_entities``: the oldest), where no longer
    name found holds the name (``longest_names``) and the entity is not rejected: "What does
    Alice Chen prefer?" names Alice Chen, not also the Alice Wang whose alias "alice" is, nor
    the Quinn Chen of "chen" (at 1M memories the three entities' relations tripled a walk's
    reads, and their memories got graph evidence for a question about someone else)."""
    first = {norm: e for norm, e in named.items() if e.feedback != "rejected"}
    kept = set(longest_names(first))
    return {norm: e for norm, e in first.items() if norm in kept}


# (source, target, key, predicate, invalid_at) of the relations at some entities, oldest first
RelationEnds = Callable[[str, Sequence[str]], Iterable[tuple[str, str, str, Any, Any]]]


def relation_ends(store: "Store") -> RelationEnds:
    """``RelationEnds`` from ``Store.edges``."""
    def ends(namespace: str, ids: Sequence[str]) -> Iterable[tuple[str, str, str, Any, Any]]:
        for e in store.edges(namespace, ids, types=[EdgeType.RELATES_TO], direction="both"):
            yield e.source, e.target, e.key, e.props.get("predicate"), e.props.get("invalid_at")
    return ends


def walk(store: "Store", namespace: str, names: Sequence[str], depth: int, limit: int,
         relations: RelationEnds | None = None) -> Walked:
    """``Store.walk`` from the store's single calls: the names, the rings, the relations
    (``relations``: a store's leaner read of them than whole edges)."""
    found = {e.id: e for e in named_longest(store.find_entities(namespace, names)).values()}
    if not found:
        return Walked([], {}, {})
    hops = store.neighbours(namespace, list(found), depth, limit=limit)
    targets = {e for e, h in hops.items() if h == 1}
    first: dict[str, tuple[str, str, bool]] = {}
    if targets:
        for source, target, key, predicate, invalid_at in (relations or relation_ends(store))(namespace, list(found)):
            forward = source in found
            here, there = (source, target) if forward else (target, source)
            if there in targets and not invalid_at:  # not a relation that ended
                first_step(first, there, here, predicate, key, forward)
    return Walked(list(found.values()), hops, first, store.mention_counts(namespace, list(found)))


@dataclass(frozen=True)
class LayerAsk:
    """What recall asks of one layer.

    ``rings``: the walk's entity ids, nearest first; nodes mentioning them are read ring by
    ring, at most ``pair_limit`` (node, entity) pairs in all. ``weights``: the graph evidence
    of mentioning each entity. A graph hit the vector search found has its cosine; of the
    rest, the ``rescore`` with the most evidence get theirs computed (a hub's ring has
    hundreds of nodes: computing every cosine is the slowest read on a server), and the
    ``graph_k`` best by evidence + cosine are the layer's graph candidates. ``pool``: the
    vector hits after the top ``vector_k`` returned as well, id and cosine only, for a feedback
    pass to rank again. ``rest``: the question's vector without the names it matched; a store
    that reads records with the search returns their cosines to it too (``LayerHits.rest``),
    so recall need not ask again which graph hits match only a name."""

    kind: NodeKind
    statuses: tuple[Status, ...]
    vector_k: int
    keyword_k: int
    rings: tuple[tuple[str, ...], ...] = ()
    weights: Mapping[str, float] = field(default_factory=dict)
    pair_limit: int = 1000
    graph_k: int = 0
    rescore: int = 0
    pool: int = 0
    rest: np.ndarray | None = field(default=None, compare=False)


@dataclass
class LayerHits:
    """A layer's candidates: ``vector`` and ``keyword`` as (id, score) best first, ``graph``
    node -> (evidence, cosine, the entity that reached it) for the graph's best, ``nodes``
    the records read with them (a store may read none; recall fetches what is missing) and
    ``sims`` the cosines of those records; ``pool`` the vector hits after ``vector``, best
    first (``LayerAsk.pool``); ``rest`` the cosines of the records read to ``LayerAsk.rest``."""

    vector: list[tuple[str, float]]
    keyword: list[tuple[str, float]]
    graph: dict[str, tuple[float, float, str]]
    nodes: dict[str, Node] = field(default_factory=dict)
    sims: dict[str, float] = field(default_factory=dict)
    pool: list[tuple[str, float]] = field(default_factory=list)
    rest: dict[str, float] = field(default_factory=dict)


def evidence(pairs: Sequence[tuple[str, str]], weights: Mapping[str, float]) -> dict[str, tuple[float, str]]:
    """node -> (its best evidence, the entity that gave it), for nodes with some evidence (an
    entity of weight 0 finds nothing); the first pair wins a tie."""
    out: dict[str, tuple[float, str]] = {}
    for node_id, entity_id in pairs:
        value = weights.get(entity_id, 0.0)
        if value > out.get(node_id, (0.0, ""))[0]:
            out[node_id] = (value, entity_id)
    return out


def to_rescore(graph: Mapping[str, tuple[float, str]], known: Mapping[str, float], n: int) -> list[str]:
    """The ``n`` nodes with the most evidence (ties by id) among those without a ``known``
    cosine: theirs are computed."""
    return sorted((i for i in graph if i not in known), key=lambda i: (-graph[i][0], i))[:n]


def rank_graph(graph: Mapping[str, tuple[float, str]], sims: Mapping[str, float], k: int
               ) -> dict[str, tuple[float, float, str]]:
    """The ``k`` best graph hits by evidence + cosine (a node without a computed cosine counts
    0), best first, ties by id."""
    ranked = sorted(graph, key=lambda i: (-(graph[i][0] + sims.get(i, 0.0)), i))[:k]
    return {i: (graph[i][0], sims.get(i, 0.0), graph[i][1]) for i in ranked}


def rescored(hits: LayerHits, records: dict[str, Node], near: Sequence[str], sims: Mapping[str, float], k: int
             ) -> LayerHits:
    """A layer's hits for a moved query (a feedback pass) from ``sims``, the cosines to it: the
    ``near`` ids (the earlier vector hits and their pool) ranked again and the best ``k`` kept;
    the keyword and graph hits and the records as they were, with their new cosines."""
    by_vector = sorted(((i, sims[i]) for i in near if i in sims), key=lambda hit: (-hit[1], hit[0]))
    return LayerHits(vector=by_vector[:k], keyword=hits.keyword, nodes=records,
                     graph={i: (g, sims.get(i, 0.0), e) for i, (g, _, e) in hits.graph.items()},
                     sims={i: sims[i] for i in records if i in sims})


def search_layer(store: "Store", namespace: str, ask: LayerAsk, vector: np.ndarray, text: str) -> LayerHits:
    """``Store.search_layer`` from the store's single-purpose calls."""
    by_vector = store.vector_search(namespace, ask.kind, vector, ask.vector_k + ask.pool, ask.statuses)
    by_vector, pool = by_vector[: ask.vector_k], by_vector[ask.vector_k :]
    by_keyword = store.keyword_search(namespace, ask.kind, text, ask.keyword_k, ask.statuses)
    pairs: list[tuple[str, str]] = []
    for ring in ask.rings:
        if len(pairs) >= ask.pair_limit:
            break
        pairs += store.mentioned_by(namespace, list(ring), ask.kind, ask.statuses, ask.pair_limit - len(pairs))
    graph = evidence(pairs, ask.weights)
    if not graph or not ask.graph_k:
        return LayerHits(by_vector, by_keyword, {}, pool=pool)
    known = dict(by_vector)
    sims = {i: known[i] for i in graph if i in known}
    sims |= store.vector_scores(namespace, ask.kind, to_rescore(graph, known, ask.rescore), vector)
    return LayerHits(by_vector, by_keyword, rank_graph(graph, sims, ask.graph_k), pool=pool)


def turns_beside(store: "Store", namespace: str, ids: Sequence[str], vector: np.ndarray, exclude: set[str]
                 ) -> tuple[list[Node], dict[str, float]]:
    """``Store.turns_beside`` from the store's single calls: the edges, then the turns."""
    near = {e.target if e.source in ids else e.source
            for e in store.edges(namespace, ids, types=[EdgeType.NEXT], direction="both")} - exclude
    return store.get_scored(namespace, "message", sorted(near), vector) if near else ([], {})
