"""The five-factor score, as plain functions shared by every backend.

``total = w.relevance*relevance + w.importance*importance + w.confidence*confidence
+ w.recency*recency + w.frequency*frequency``, each factor in 0..1."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from ..models import Scorable, ScoreBreakdown
from ..settings import RecallOptions, RelevanceWeights

_DAY = 86_400.0
_Item = TypeVar("_Item")  # a ScoredItem, or recall's Ranked


def held_at(item: Scorable, at: datetime) -> bool:
    """Whether an item held (memories: valid_at <= at < invalid_at) or existed (the other
    layers: created by then) at time ``at``."""
    start = item.value_of("valid_at") or item.created_at
    end = item.value_of("invalid_at")
    return start <= at and (end is None or end > at)


def stated_at(item: Scorable) -> datetime:
    """When what an item says was said: a memory's source turns (``said_at``), the end of an
    episode's stretch of conversation, else when it was created. A memory extracted today from
    last year's conversation is as old as that conversation, not new."""
    said = item.value_of("said_at") or item.value_of("end_at")
    return min(said, item.created_at) if said is not None else item.created_at


def recency(item: Scorable, now: datetime, half_life_days: float) -> float:
    """Exponential decay from the item's last use (its last access, else when it was said):
    1.0 now, 0.5 after one half-life. Edits do not refresh it: a correction is a new record."""
    last = max(t for t in (item.last_accessed_at, stated_at(item)) if t is not None)
    age_days = max(0.0, (now - last).total_seconds() / _DAY)
    return 0.5 ** (age_days / half_life_days)


def frequency(access_count: int, saturation: float) -> float:
    """Saturating use count: 0 unused, 0.63 at ``saturation`` accesses, towards 1 after."""
    return 1.0 - math.exp(-access_count / saturation)


SPECIFICITY_FLOOR = 0.15
SPECIFICITY_PRIOR = 50  # nodes that mention nothing added to every namespace: a small one is no evidence of a hub


def specificity(mentions: int, size: int) -> float:
    """How much naming an entity tells about an item, from how much of the namespace is about
    it (an IDF scaled to 0..1): 1.0 for an entity few of ``size`` nodes mention, falling to
    ``SPECIFICITY_FLOOR`` for one nearly every node mentions or said (in a chat between two
    people, each of them): graph evidence that would lift everything lifts nothing. In a
    namespace of a few dozen nodes everything mentions someone; ``SPECIFICITY_PRIOR`` keeps
    that from reading as a hub."""
    if mentions <= 0:
        return 1.0
    size += SPECIFICITY_PRIOR
    return max(SPECIFICITY_FLOOR, min(1.0, math.log((size + 1) / (mentions + 1)) / math.log(size + 1)))


def relevance(semantic: float, keyword: float, graph: float, weights: RelevanceWeights,
              rest: float | None = None) -> float:
    """Text relevance (semantic and keyword blended) raised by graph evidence in proportion to
    what the text says (``text * (1 + weights.graph * graph)``), so a graph hit breaks near ties
    and lifts related items but never outranks a much better semantic and keyword match. An
    item the text barely matches is raised as if it matched at ``weights.graph_floor``: what
    only the graph can find (a multi-hop answer) still surfaces. ``rest``: for an item that
    matches nothing of the question but the names the graph matched, how well its text matches
    the rest of the question; it is raised in proportion to that alone (a turn Marek said about
    his garage door gains nothing from being his when the question asks what sport his sister
    plays)."""
    total = weights.semantic + weights.keyword
    if total <= 0:
        return 0.0
    text = (weights.semantic * semantic + weights.keyword * keyword) / total
    basis = max(text, weights.graph_floor) if rest is None else rest
    return min(1.0, max(0.0, text + weights.graph * graph * basis))


@dataclass(frozen=True, slots=True)
class Factors:
    """What ``ScoreBreakdown`` holds, unchecked: recall scores hundreds of candidates a pass and
    returns ~10 (a checked breakdown each cost ~30 % of scoring). ``relevance``, ``semantic`` and
    ``total`` are rounded as the breakdown's are (recall compares and sorts by them); the rest
    are rounded when the breakdown is made."""

    relevance: float
    importance: float
    confidence: float
    recency: float
    frequency: float
    semantic: float
    keyword: float
    graph: float
    context: float
    total: float

    def breakdown(self) -> ScoreBreakdown:
        return ScoreBreakdown(
            relevance=self.relevance, importance=self.importance, confidence=self.confidence,
            recency=round(self.recency, 6), frequency=round(self.frequency, 6), semantic=self.semantic,
            keyword=round(self.keyword, 6), graph=round(self.graph, 6), context=round(self.context, 6), total=self.total,
        )


def standing(item: Scorable, now: datetime, options: RecallOptions) -> tuple[float, float]:
    """An item's recency and frequency at ``now``: what its score does not owe to the query, the
    same in every pass of a recall."""
    return (recency(item, now, options.recency_half_life_days),
            frequency(item.access_count, options.frequency_saturation))


def factors(
    item: Scorable, *, semantic: float, keyword: float, graph: float, now: datetime, options: RecallOptions,
    context: float = 0.0, damp: float = 1.0, rest: float | None = None, stand: tuple[float, float] | None = None,
) -> Factors:
    """``score``'s factors, unchecked; ``stand``: the item's ``standing`` where it is known."""
    w = options.weights
    own = relevance(semantic, keyword, graph, options.relevance, rest)
    rel = min(1.0, own + context * (1.0 - own)) * damp  # context fills the headroom the item's own match leaves
    rec, freq = stand if stand is not None else standing(item, now, options)
    total = (
        w.relevance * rel
        + w.importance * item.importance
        + w.confidence * item.confidence
        + w.recency * rec
        + w.frequency * freq
    )
    return Factors(round(rel, 6), item.importance, item.confidence, rec, freq, round(semantic, 6), keyword, graph,
                   context, round(total, 6))


def score(
    item: Scorable, *, semantic: float, keyword: float, graph: float, now: datetime, options: RecallOptions,
    context: float = 0.0, damp: float = 1.0, rest: float | None = None,
) -> ScoreBreakdown:
    """``context`` is relevance from the conversation around a turn; ``damp`` scales the
    relevance of a turn or episode that states a superseded value; ``rest``: see ``relevance``."""
    return factors(item, semantic=semantic, keyword=keyword, graph=graph, now=now, options=options, context=context,
                   damp=damp, rest=rest).breakdown()


def keyword_signal(bm25: float, top_bm25: float, query_terms: set[str], item_terms: Sequence[str]) -> float:
    """Keyword relevance in 0..1: 0.7 BM25 relative to the best hit of the recall, 0.3 the
    share of the query's keywords the item contains (tuned on LoCoMo 0-4). BM25 alone,
    scaled by the best hit, rates a weak match of one common word as highly as a match of
    the whole query."""
    if bm25 <= 0 or top_bm25 <= 0:
        return 0.0
    coverage = len(query_terms & set(item_terms)) / len(query_terms) if query_terms else 0.0
    return 0.7 * (bm25 / top_bm25) + 0.3 * coverage


def merge_layers(by_layer: dict[str, list[_Item]], k: int) -> list[_Item]:
    """The k best overall, but each layer's best item is kept when it has one, so that a
    layer with many strong items (say, raw messages) cannot crowd out the others. Items are
    ``ScoredItem``s or what recall ranks before it returns them (``recall_parts.Ranked``)."""
    if k <= 0:
        return []
    chosen: dict[str, _Item] = {}
    heads = sorted((items[0] for items in by_layer.values() if items), key=lambda s: -s.score)
    for head in heads[:k]:
        chosen[head.item.id] = head
    rest = sorted((s for items in by_layer.values() for s in items[1:]), key=lambda s: (-s.score, s.item.id))
    for s in rest:
        if len(chosen) >= k:
            break
        chosen[s.item.id] = s
    return sorted(chosen.values(), key=lambda s: (-s.score, s.item.id))
