"""Hybrid recall: vector, keyword and graph candidates per layer, the five-factor score,
then a merge that keeps every layer in view."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any
from datetime import datetime

import numpy as np

from ..embed import Embedder
from ..models import ScoredItem, Status, utcnow
from ..models.records import SCOPE_FIELDS
from ..settings import RecallFilter, RecallOptions
from ..store import Store
from ..store.layers import LayerAsk, LayerHits, rescored
from ..text import keywords, name_grams, normalise_name, possessed, time_span
from .conversation import Candidate, conversation_context, found_by_steps
from .recall_parts import InTurn, Ranked, capped, is_question, path_steps, rest_parts, within
from .scoring import factors, held_at, keyword_signal, merge_layers, relevance, standing
from .walk import Walk, person_relations

log = logging.getLogger(__name__)

_BRIDGE_FROM = 10  # the best hits of the first pass a multi-hop step may go through
_GRAPH_ENTITY_LIMIT = 100  # entities a query may expand to
_GRAPH_PAIR_LIMIT = 1000  # (node, entity) pairs read per layer before ranking
_GRAPH_RESCORE = 3  # graph candidates' cosines computed: this many times graph_candidates, the nearest in the graph
_FEEDBACK_MIN_RELEVANCE = 0.5  # the best hit's relevance from which feedback moves the query towards it
_REST_COS = 0.15  # a graph hit's cosine to the rest of the question from which it matches more than a name
_SIZE_TTL_S = 300.0  # a namespace's node count (for entity specificity) is read again after this


@dataclass(frozen=True)
class _Pass:
    """What every search and scoring pass of one recall shares."""

    namespace: str
    query: str
    k: int
    q_terms: set[str]
    statuses: dict[str, tuple[Status, ...]]  # layer -> the statuses it admits
    walk: "Walk | None"
    speakers: dict[str, str]  # normalised name -> the query's entity name
    asks: bool
    feeds: bool  # the query may be moved towards its best hit (``_may_feed_back``)
    options: RecallOptions
    filter: RecallFilter
    now: datetime
    span: tuple[datetime, datetime] | None
    rest: "_Rest | None" = None  # the question once the names the walk matched are taken out
    seed: tuple[str, float] | None = None  # a feedback pass's seed and its cosine to the query as asked
    walked_path: bool = False  # the relation path has been followed: its steps and waypoints rank below the answer
    standing: dict[str, tuple[float, float]] = field(default_factory=dict)  # id -> ``scoring.standing``, for every pass


@dataclass(frozen=True)
class _Rest:
    """What a question asks besides the names it matched: its keywords and its vector (the
    query's own when taking the names out left the text as it was)."""

    terms: frozenset[str]
    vector: np.ndarray
    path: tuple[str, ...]  # the relations it follows from a name ("Marek's *sister*"; ``person_relations``)
    text: str | None = None  # the question without those names, where taking them out changed it
    sims: dict[str, float] = field(default_factory=dict)  # records' cosines to ``vector``, as read


_Found = dict[str, tuple[LayerHits, dict[str, Any]]]  # layer -> its hits and the records read for them


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
        self._sizes: dict[str, tuple[float, int]] = {}  # namespace -> (when read, nodes that can mention)
        # keyword and vector searches of every layer run side by side where the store's reads
        # overlap (a server's round trips); on the embedded store they run one after another:
        # its reads share one connection, and threads on 2 cores made context slower (100k
        # memories: p50/p95 54.6/66.7 ms side by side, 48.7/57.4 ms in turn)
        concurrent = getattr(getattr(store, "capabilities", None), "concurrent_reads", False)
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graphmem-search") if concurrent \
            else InTurn()

    def close(self) -> None:
        self._pool.shutdown(wait=True)

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
        if any(t is not None and t.tzinfo is None for t in (filter.asked_at, filter.as_of)):
            # ``model_copy(update=...)``, the documented way to set them, skips validation: a
            # naive time is read as UTC here as everywhere (it raised a naive-vs-aware TypeError)
            filter = RecallFilter.model_validate(filter.model_dump())
        statuses = filter.statuses()
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        # on a server the layers held and the graph walk (entity names, relation hops) are read
        # while the query is embedded; only the layer searches need the vector
        q_terms = set(keywords(query))
        held = self._pool.submit(self.store.kinds_held, namespace)
        walked = self._pool.submit(self._walk, namespace, query, options)
        qvec, rest_vec, parts = query_vector, None, None
        if qvec is None:
            # a walk read in turn (the embedded store's) is known already: the rest of the
            # question (``_rest``) is embedded with the query, in one call
            walk_now = walked.result()[1] if walked.done() else None
            parts = rest_parts(query, walk_now) if walk_now is not None else None
            own = parts[0] if parts is not None and parts[1] else None
            vecs = self.embedder.embed([query] if own is None else [query, own], query=True)
            qvec, rest_vec = vecs[0], (vecs[1] if own is not None else None)
        timings["embed"] = (time.perf_counter() - t0) * 1000
        layers = [layer for layer in filter.layers if layer in held.result()]  # a kind the tenant lacks costs nothing

        # The log stays searchable: a message whose window was extracted is archived and steps
        # back behind the memories (its importance and confidence are lower) but is not lost,
        # so a detail the model dropped can still be found.
        layer_statuses = {
            layer: tuple(dict.fromkeys([*statuses, Status.archived])) if layer == "message" else tuple(statuses)
            for layer in layers
        }
        t1 = time.perf_counter()
        entities, walk = walked.result()
        timings["graph"] = (time.perf_counter() - t1) * 1000
        asks = is_question(query)
        # every pass ranks at least _BRIDGE_FROM items (a hop starts from them); k are kept at the end
        ask = _Pass(namespace=namespace, query=query, k=max(k, _BRIDGE_FROM), q_terms=q_terms,
                    statuses=layer_statuses, walk=walk, speakers={normalise_name(name): name for name in entities},
                    asks=asks, options=options,
                    feeds=self._may_feed_back(query, q_terms, asks, options),
                    filter=filter, now=now,
                    span=time_span(query, filter.asked_at or now) if options.time_boost else None,
                    rest=self._rest(query, walk, qvec, parts, rest_vec) if walk is not None else None)
        items, per_layer, found = self._rank(ask, qvec, timings)
        if walk is not None and options.hop_decay and options.graph_depth and ask.rest is not None and ask.rest.path:
            t5 = time.perf_counter()
            # one step per relation the question follows, in its order ("Marek's sister's
            # husband": sister, then husband); a step that finds no one ends the path
            for relation in ask.rest.path[: options.graph_depth + 1]:
                bridged = self._bridged(ask, items, per_layer, found, relation)
                if bridged is None:
                    break
                items, per_layer, found = self._rank(ask, qvec, timings, before=bridged)
            if options.path_statements < 1.0:
                # the path's steps are where each hop starts from, so they rank as they are until
                # the last hop; then below the answer (``recall_parts.path_steps``)
                ask = replace(ask, walked_path=True)
                items, per_layer, found = self._rank(ask, qvec, timings, before=found)
            timings["hops"] = (time.perf_counter() - t5) * 1000
        seed = self._seed(ask, items)
        if seed is not None:
            # pseudo-relevance feedback (Rocchio): the best hit's vector joins the query's and
            # every layer is searched and scored again. An answer often shares no word and
            # little meaning with its question; it shares much with the best hit's turn or fact
            # (LoCoMo 0-4 at 10 turns 0.742 -> 0.751, multi-hop 0.435 -> 0.468; 5-9 0.719 ->
            # 0.722, 0.401 -> 0.434). Only meaning is searched again, and only among the query's
            # nearest (``feedback_pool``; 400 reads 0.757 / 0.724 but costs Neo4j ~40 ms more):
            # the first pass's keyword and graph hits and records stand, with their cosines to
            # the moved query.
            # The seed (``_seed``) keeps its cosine to the query as asked in the second pass (its
            # cosine to the moved query is mostly its similarity to itself: a deploy memory lifted
            # by Greta's name went 0.34 -> 0.82 and outranked the Kotlin memory "Which programming
            # language does Greta like?" asked for) and never scores above its first pass.
            t4 = time.perf_counter()
            top = self.store.vectors(namespace, [seed.item.id]).get(seed.item.id)
            if top is not None:
                moved = qvec + options.feedback * np.asarray(top, dtype=np.float32)
                items, per_layer, _ = self._rank(replace(ask, seed=(seed.item.id, seed.factors.semantic)),
                                                 moved / np.linalg.norm(moved), timings, before=found)
                items = capped(items, seed)
            timings["feedback"] = (time.perf_counter() - t4) * 1000
        by_layer: dict[str, list[Ranked]] = {}
        for s in items:
            by_layer.setdefault(s.layer, []).append(s)
        # as merged from the whole lists: they hold each layer's best
        items = [s.scored() for s in merge_layers(by_layer, k)]
        if walk is not None:
            self._explain_paths(items, per_layer, walk)
        if items and filter.record_access:
            self.store.record_access(namespace, [s.item.id for s in items], now)
        timings["total"] = (time.perf_counter() - t0) * 1000
        return RecallResult(items=items, timings_ms=timings, query_entities=list(entities))

    @staticmethod
    def _may_feed_back(query: str, q_terms: set[str], asks: bool, options: RecallOptions) -> bool:
        """Whether a query may be moved towards its best hit (known before the search, which
        then also returns the vector pool the feedback pass ranks): feedback on, a query that
        asks something (a statement looks for the one item that says it), one question (moved
        towards the answer of one, it leaves the other's: the demo's "她出差去哪里？喜欢喝什么？"
        lost its oolong tea memory for a deploy procedure), of two keywords or more (without
        it, a fragment query, MemoryBank's " would like to c", lost its item from the top 10)."""
        return (bool(options.feedback) and (asks or options.neighbour_mode == "all") and len(q_terms) >= 2
                and query.count("?") + query.count("？") < 2)

    @staticmethod
    def _seed(ask: "_Pass", items: list[Ranked]) -> Ranked | None:
        """The hit feedback moves the query towards: of a query that may be moved
        (``_may_feed_back``), the best hit when its relevance is 0.5 or more (without a gate, a
        Chinese question whose best hit was a weak near tie, relevance 0.11, was moved towards
        the wrong turn). Its graph evidence counts only as far as its text matches the rest of
        the question (``_name_only``), so a hit raised by a name alone is no seed. Seeding by
        text alone (meaning and keywords, no graph or context) cost LoCoMo 0.758 -> 0.751 on
        0-4 and 0.723 -> 0.721 on 5-9. A gate on the best hit's margin over the next instead
        cost LoCoMo (0.736 -> 0.732 at a margin of 0.02, 0.729 at 0.05)."""
        if ask.feeds and items and items[0].factors.relevance >= _FEEDBACK_MIN_RELEVANCE:
            return items[0]
        return None

    def _rest(self, query: str, walk: "Walk", qvec: np.ndarray, parts: tuple | None,
              embedded: np.ndarray | None) -> "_Rest | None":
        """The question once the names of the entities it matched are taken out; None when
        nothing is left to match (the question is only a name). ``parts`` and ``embedded``:
        ``rest_parts`` and its vector where they came with the query's embedding."""
        own, terms, names = parts if parts is not None else rest_parts(query, walk)
        if not terms:
            return None
        if own is None:
            vector = qvec
        else:
            vector = embedded if embedded is not None else self.embedder.embed([own], query=True)[0]
        return _Rest(terms, vector, person_relations(possessed(query, names), self.embedder), own)

    def _rank(self, ask: "_Pass", qvec: np.ndarray, timings: dict[str, float], before: "_Found | None" = None
              ) -> tuple[list[Ranked], dict[str, dict[str, "Candidate"]], "_Found"]:
        """One search and scoring of every layer for the query vector ``qvec``: the k best
        items, each layer's candidates, and each layer's hits with the records read. ``before``:
        an earlier pass's, whose keyword and graph hits and records stand (``_again``)."""
        namespace, options, statuses = ask.namespace, ask.options, ask.statuses
        t2 = time.perf_counter()
        if before is None:
            rest = ask.rest.vector if ask.rest is not None else None
            # a question that follows a relation from a name asks about someone else: the
            # name's words are the waypoint's, not the answer's (every turn Marek said is found
            # by his name; on Neo4j they outranked his sister's answer: relationship set en 2 / 3
            # hops 0.792 / 0.562 -> 1.000 / 1.000 with the step per relation below)
            follows = bool(ask.rest is not None and ask.rest.path)
            words = ask.rest.text if follows and ask.rest.text else ask.query
            searches = {layer: self._pool.submit(self.store.search_layer, namespace, self._ask(
                layer, statuses[layer], ask.walk, options, options.feedback_pool if ask.feeds else 0, rest, follows),
                qvec, words) for layer in statuses}
            hits_of = {layer: job.result() for layer, job in searches.items()}
            for hits in hits_of.values() if ask.rest is not None else ():  # cosines to the rest, read with the search
                ask.rest.sims.update(hits.rest | (hits.sims if ask.rest.vector is qvec else {}))  # qvec: no name taken out
        else:
            hits_of = self._again(ask, qvec, before)
        per_layer: dict[str, dict[str, Candidate]] = {}
        for layer, hits in hits_of.items():
            cands: dict[str, Candidate] = {}
            by_query = {i for i, _ in (before[layer][0] if before else hits).vector}
            for node_id, sim in hits.vector:
                c = cands.setdefault(node_id, Candidate())
                c.semantic = max(0.0, sim)
                c.via.append("vector" if node_id in by_query else "feedback")
            for node_id, bm25 in hits.keyword:
                c = cands.setdefault(node_id, Candidate())
                c.keyword_raw = bm25
                c.via.append("keyword")
            for node_id, (g, sim, entity_id) in hits.graph.items():
                c = cands.setdefault(node_id, Candidate())
                c.graph, c.entity = g, entity_id
                c.semantic = max(0.0, sim)
                c.via.append("graph")
            if layer == "procedure" and cands:  # steps are searched only where there are procedures at all
                step_jobs = [self._pool.submit(search, namespace, "step", *args, statuses[layer])
                             for search, args in ((self.store.vector_search, (qvec, options.vector_candidates)),
                                                  (self.store.keyword_search, (ask.query, options.keyword_candidates)))]
                found_by_steps(self.store, namespace, cands, *(job.result() for job in step_jobs))
            if len(cands) > options.max_candidates:
                ranked = sorted(cands.items(), key=lambda kv: -(kv[1].semantic or 0) - kv[1].graph - (kv[1].keyword_raw > 0))
                cands = dict(ranked[: options.max_candidates])
            per_layer[layer] = cands
        timings["candidates"] = timings.get("candidates", 0.0) + (time.perf_counter() - t2) * 1000

        t3 = time.perf_counter()
        scored_by_layer: dict[str, list[Ranked]] = {}
        as_of = ask.filter.as_of

        def fetch(layer: str, cands: dict[str, Candidate]) -> dict[str, Any]:
            hits = hits_of[layer]
            records = {i: hits.nodes[i] for i in cands if i in hits.nodes}  # read with the search (a server's)
            sims = {i: hits.sims[i] for i in records if i in hits.sims}
            missing = [i for i in cands if i not in records]
            if missing and all(cands[i].semantic is not None for i in missing):
                records.update((r.id, r) for r in self.store.views(namespace, missing))
            elif missing:
                found, more = self.store.get_scored(namespace, layer, missing, qvec)  # one read: fetch and rescore
                records.update((r.id, r) for r in found)
                sims |= more
            for node_id, sim in sims.items():
                if cands[node_id].semantic is None:
                    cands[node_id].semantic = max(0.0, sim)
            return records

        scope = [(f, getattr(ask.filter, f)) for f in SCOPE_FIELDS if getattr(ask.filter, f) is not None]

        def admitted(layer: str, rec: Any) -> bool:
            if rec is None or rec.kind != layer or rec.status not in statuses[layer]:
                return False  # a graph hit of another kind, superseded, or deleted meanwhile
            if layer == "message" and (ask.filter.session_id not in (None, rec.session_id) or not rec.said.strip()):
                return False  # another session's turn, or an empty turn (kept in the log; it answers nothing)
            if any(getattr(rec, f, None) not in (None, want) for f, want in scope):
                return False  # another user's, agent's or run's (a shared record, owned by none, stays)
            return as_of is None or held_at(rec, as_of)

        fetched = {layer: self._pool.submit(fetch, layer, cands) for layer, cands in per_layer.items() if cands}
        # BM25 scaled by the best keyword hit of the whole recall, not of each layer: every
        # layer's BM25 comes from one index (one IDF, one average length), and a layer whose best
        # match is one common word must not rate it as highly as the turn that has the whole
        # query (LoCoMo conversation 1 with extraction: 0.639 -> 0.717 at 10 turns)
        top_kw = max((c.keyword_raw for cands in per_layer.values() for c in cands.values()), default=0.0)
        # a stale turn or episode never reads as more relevant than the memory that replaced it,
        # when that memory is a candidate too (memories are scored first to know)
        current: dict[str, float] = {}
        for layer in sorted(per_layer, key=lambda name: name != "memory"):
            cands = per_layer[layer]
            if not cands:
                continue
            records = fetched[layer].result()
            kept = {}
            for node_id, c in cands.items():
                rec = records.get(node_id)
                if not admitted(layer, rec):
                    continue
                said = ask.speakers.get(normalise_name(rec.speaker)) if layer == "message" else None
                if said is not None and options.speaker_match:
                    # the graph's SAID edge: a turn by a person the query names. Not weighed by
                    # specificity (measured: on LoCoMo, where each speaker said half the turns,
                    # that cost extraction mode 0.08 recall and gave turns mode 0.003); a waypoint
                    # of the question's path (Marek in "Marek's sister") has none: his own turns
                    # are not what is asked (the turn that names his sister keeps hers)
                    match = options.speaker_match * (0.0 if ask.walk.is_waypoint(said) else 1.0)
                    if match > c.graph:
                        c.graph, c.entity, c.said = match, None, said
                if ask.seed is not None and node_id == ask.seed[0]:
                    c.semantic = ask.seed[1]
                kept[node_id] = (rec, keyword_signal(c.keyword_raw, top_kw, ask.q_terms, rec.keywords))
            steps = path_steps(ask, kept) if layer in ("memory", "message", "episode") else set()
            rest = self._name_only(ask, layer, {i: rec for i, (rec, _) in kept.items() if cands[i].graph > 0})
            for i in rest:
                cands[i].name_only = True
            base = {i: relevance(cands[i].semantic or 0.0, kw, cands[i].graph, options.relevance, rest.get(i))
                    for i, (_, kw) in kept.items()}
            context = conversation_context(self.store, namespace, kept, base, cands, qvec, admitted, options, ask.asks) \
                if layer == "message" else {}
            scored: list[Ranked] = []
            for node_id, (rec, kw) in kept.items():
                c = cands[node_id]
                extra = context.get(node_id, 0.0)
                if ask.span is not None and within(rec, ask.span):
                    extra += options.time_boost
                mark = rec.value_of("superseded_by")
                # a corrected value ranks below the correction; the model's inference only annotates
                stale = mark is not None and not mark.inferred and as_of is None
                damp = (options.superseded_turns if stale else 1.0) * (options.path_statements if node_id in steps else 1.0)
                stand = ask.standing.get(node_id)
                if stand is None:
                    stand = ask.standing[node_id] = standing(rec, ask.now, options)
                got = factors(rec, semantic=c.semantic or 0.0, keyword=kw, graph=c.graph, now=ask.now, options=options,
                              context=extra, damp=damp, rest=rest.get(node_id), stand=stand)
                cap = current.get(mark.memory_id) if stale else None
                if cap is not None and got.relevance > cap:
                    got = factors(rec, semantic=c.semantic or 0.0, keyword=kw, graph=c.graph, now=ask.now,
                                  options=options, context=extra, damp=damp * cap / got.relevance,
                                  rest=rest.get(node_id), stand=stand)
                if layer == "memory":
                    current[node_id] = got.relevance
                if got.relevance < options.min_relevance:
                    continue
                scored.append(Ranked(layer, rec, got.total, got, list(dict.fromkeys(c.via)), c.step))
            scored.sort(key=lambda s: (-s.score, s.item.id))
            scored_by_layer[layer] = scored
        timings["score"] = timings.get("score", 0.0) + (time.perf_counter() - t3) * 1000
        return merge_layers(scored_by_layer, ask.k), per_layer, {
            layer: (hits_of[layer], fetched[layer].result() if layer in fetched else {}) for layer in hits_of}

    def _bridged(self, ask: "_Pass", items: list[Ranked], per_layer: dict[str, dict[str, "Candidate"]],
                 found: "_Found", relation: str) -> "_Found | None":
        """The last pass's hits with one more hop along the question's own path
        (``Walk.bridge``), taken from its best hits that the query's entities (or the people the
        last hop reached) said or are named in and that match more of the question than a name;
        a waypoint's own items lose their graph evidence. None when that adds nothing."""
        walk = ask.walk
        named = {e.id: e.name for e in walk.named}
        ids = {e.name: e.id for e in walk.named}
        starts = []
        for s in items[:_BRIDGE_FROM]:
            c = per_layer.get(s.layer, {}).get(s.item.id)
            if c is None or c.name_only or s.layer not in ("memory", "message", "episode"):
                continue
            if c.said:
                starts.append((s.item, f"{c.said} -said->", ids.get(c.said, "")))
            elif c.entity in named:
                starts.append((s.item, f"{named[c.entity]} <-mentions-", c.entity))
            elif c.entity in walk.bridged:
                starts.append((s.item, walk.bridge_path(s.item.id, c.entity), c.entity))
        before = set(walk.waypoints)
        adds = walk.bridge(starts, {layer: ask.statuses[layer] for layer in found}, relation)
        if not adds:
            return None
        out = dict(found)
        fresh = walk.waypoints - before
        for layer in found:
            hits, records = found[layer]
            graph = {i: (0.0 if e in fresh else g, sim, e) for i, (g, sim, e) in hits.graph.items()}
            graph.update((node, (g, 0.0, e)) for node, (g, e) in adds.get(layer, {}).items()
                         if g > graph.get(node, (0.0,))[0])
            out[layer] = (replace(hits, graph=graph), records)
        return out

    def _name_only(self, ask: "_Pass", layer: str, graphed: dict[str, Any]) -> dict[str, float]:
        """The graph hits that match nothing of the question but the names the walk matched
        (none of the rest's keywords, a cosine to the rest's vector below ``_REST_COS``) ->
        how well they match the rest all the same (text relevance of that cosine): graph
        evidence raises them only in proportion to it. "Which sport does Marek's sister play?"
        ranked a turn Marek said about his garage door (graph 1.0, "said by Marek") level with
        Olga's volleyball turn; now it gains 0.01 instead of 0.15."""
        if ask.rest is None or not graphed:
            return {}
        sims = ask.rest.sims  # read with the search where the store could; the rest asked once a recall
        missing = [i for i in graphed if i not in sims]
        if missing:
            found = self.store.vector_scores(ask.namespace, layer, missing, ask.rest.vector)
            sims.update((i, found.get(i, 0.0)) for i in missing)
        return {i: relevance(max(0.0, sims.get(i, 0.0)), 0.0, 0.0, ask.options.relevance)
                for i, rec in graphed.items()
                if sims.get(i, 0.0) < _REST_COS and not ask.rest.terms & set(rec.keywords)}

    def _again(self, ask: "_Pass", qvec: np.ndarray, before: "_Found") -> dict[str, LayerHits]:
        """Every layer searched again by meaning alone (a feedback pass): the earlier vector hits
        and their pool ranked by their cosines to ``qvec``, the best ``vector_candidates`` kept (a
        shortlist, not a second scan: at 100k memories a scan cost the pass 9.6 of its 16 ms);
        the earlier keyword and graph hits and records kept, with their cosines to it. One read
        for all layers."""
        near = {layer: [i for i, _ in (*hits.vector, *hits.pool)] for layer, (hits, _) in before.items()}
        sims = self.store.vector_scores_of(ask.namespace, {
            layer: list(dict.fromkeys([*near[layer], *records, *hits.graph, *(i for i, _ in hits.keyword)]))
            for layer, (hits, records) in before.items()}, qvec)
        return {layer: rescored(hits, records, near[layer], sims, ask.options.vector_candidates)
                for layer, (hits, records) in before.items()}

    def _walk(self, namespace: str, query: str, options: RecallOptions) -> tuple[dict[str, str], "Walk | None"]:
        """The query's entities (name -> id) and their relation neighbourhood. Every 1-4 word
        n-gram of the query (as tokens, and as written, so "Jean-Luc" and "北京大学" match too)
        is looked up by normalised name and alias: one indexed read, no NER model on the read
        path; a server reads the walk in the same query."""
        if not options.graph_candidates:
            return {}, None
        walked = self.store.walk(namespace, name_grams(query), options.graph_depth, _GRAPH_ENTITY_LIMIT)
        if not walked.entities:
            return {}, None
        return {e.name: e.id for e in walked.entities}, Walk(self.store, namespace, walked, query,
                                                              self._size(namespace), options.hop_decay,
                                                              self.embedder)

    def _size(self, namespace: str) -> int:
        """The namespace's memories, turns, episodes and procedures (what can mention an
        entity), read at most every few minutes: specificity needs its order of magnitude."""
        at, size = self._sizes.get(namespace, (-_SIZE_TTL_S, 0))
        if time.monotonic() - at >= _SIZE_TTL_S:
            counts = self.store.count(namespace, edges=False)
            size = sum(counts.get(kind, 0) for kind in ("memory", "message", "episode", "procedure"))
            self._sizes[namespace] = (time.monotonic(), size)
        return size

    @staticmethod
    def _ask(layer: str, statuses: tuple[Status, ...], walk: "Walk | None", options: RecallOptions, pool: int,
             rest: np.ndarray | None, follows: bool = False) -> LayerAsk:
        """What recall asks of a layer. The graph: memories by the query's own entities first,
        then each ring outwards; turns and episodes only by the query's own entities (rings of a
        hub reach thousands of memories' edges to read past for a handful of turns, and a turn
        two relations away is weak evidence). A turn that names a person is weaker evidence
        (``turn_mentions``): turns name the person they are addressed to. Procedures and traces
        are found by meaning and words. ``pool``: the vector hits after the top-k a feedback
        pass may rank again; ``rest``: the question's vector without its names (``_name_only``).
        A question that ``follows`` a relation from a name ("Marek's son's sport") asks about the
        people its own relations reach, not those the name's other relations do (his sister's
        sport is no evidence)."""
        plain = LayerAsk(layer, statuses, options.vector_candidates, options.keyword_candidates, pool=pool, rest=rest)
        if walk is None or layer in ("procedure", "trace"):
            return plain
        hops = sorted(set(walk.hops.values())) if layer == "memory" else [0]
        rings = tuple(tuple(e for e, h in walk.hops.items() if h == hop and not (follows and h and walk.score[e] < 1.0))
                      for hop in hops)
        weights = dict(walk.score)
        if layer == "message" and options.turn_mentions < 1:
            for e in rings[0]:
                if getattr(walk.entities.get(e), "type", None) == "person":
                    weights[e] *= options.turn_mentions
        return replace(plain, rings=rings, weights=weights, pair_limit=_GRAPH_PAIR_LIMIT,
                       graph_k=options.graph_candidates, rescore=_GRAPH_RESCORE * options.graph_candidates)

    def _explain_paths(self, items: list[ScoredItem], per_layer: dict[str, dict[str, Candidate]], walk: "Walk"
                       ) -> None:
        """Each graph hit's breakdown names the path that found it ("Alice -manager-> Bob")."""
        found = {s.item.id: per_layer[s.layer][s.item.id] for s in items if s.item.id in per_layer.get(s.layer, {})}
        reached = {c.entity for c in found.values() if c.entity and c.entity not in walk.bridged}
        paths = walk.paths(reached)
        for s in items:
            c = found.get(s.item.id)
            if c is None or not (c.entity or c.said):
                continue
            via = f"said by {c.said}" if c.said else walk.bridge_path(s.item.id, c.entity) or \
                f"mentions {paths.get(c.entity, '?')}"
            s.breakdown = s.breakdown.model_copy(update={"path": via})
