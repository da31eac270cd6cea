"""Small parts of recall: a candidate as a pass ranks it, the in-turn executor, question
detection, the rest of a question once its names are out, the steps of the path a question
follows, and the feedback pass's cap."""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..models import ScoredItem
from ..store.views import record_of
from ..text import keywords, normalise_name, without_names
from ..text.relations import RELATIONS, relation_of
from .walk import linked, record_text

if TYPE_CHECKING:
    from .scoring import Factors
    from .walk import Walk


@dataclass(slots=True)
class Ranked:
    """An item as a pass of recall ranks it: ``ScoredItem``'s fields, unchecked (the item may be a
    view, ``Store.views``; a recall ranks hundreds, a ``ScoredItem`` costs ~2 us to check and
    ``model_construct`` more), its factors too (``scoring.Factors``). ``scored`` makes the ones
    returned ``ScoredItem``s."""

    layer: str
    item: Any
    score: float
    factors: "Factors"
    matched_by: list[str]
    matched_step: int | None = None

    def scored(self) -> ScoredItem:
        return ScoredItem(layer=self.layer, item=record_of(self.item), score=self.score,
                          breakdown=self.factors.breakdown(), matched_by=self.matched_by,
                          matched_step=self.matched_step)


class InTurn:
    """An executor that runs each job when it is submitted (the ``ThreadPoolExecutor`` calls
    recall makes, for a store whose reads do not overlap)."""

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        done: Future = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future, as a pool does
            done.set_exception(exc)
        return done

    def shutdown(self, wait: bool = True) -> None:
        pass


def rest_parts(query: str, walk: "Walk") -> tuple[str | None, frozenset[str], list[str]]:
    """The question without the names the walk matched (None where that leaves it as written:
    its vector is the query's), its keywords that are no name's, and those names."""
    names = [n for e in walk.named for n in (e.name, *e.aliases)]
    text = without_names(query, names)
    own = None if text == " ".join(query.split()) else text
    return own, frozenset(keywords(text)) - {t for n in names for t in keywords(n)}, names


def path_steps(ask: Any, kept: dict[str, tuple[Any, float]]) -> set[str]:
    """The items that only state a step of the relation path the question follows: a relation
    word of the path right beside a name the walk knows ("My sister is Olga Berg", "王磊的姐姐是
    李娜") and none of the question's other words. They are how the answer was reached, not
    the answer: "What pet does Marek's sister's husband have?" ranked both steps, their
    memories and the window that said them above Henrik's "Our pet is a tortoise"
    (relationship set with extraction). A memory about a person the path passes through
    ("Marek Nowak's pet is a beagle") is not the answer either. A question that asks for the
    person ("Who is Marek's sister?") asks for the step itself: nothing is lowered."""
    if not ask.walked_path or ask.rest is None or ask.walk is None:
        return set()
    words = {w for step in ask.rest.path for w in (step, *RELATIONS.get(relation_of(step) or "", ()))}
    # what the question asks beside its people and its path: "pet" stays, even where the model
    # made it an entity ("Olga Berg is a pet owner"), which the rest of the question leaves out
    people = {t for e in ask.walk.named if getattr(e, "type", None) == "person" for n in (e.name, *e.aliases)
              for t in keywords(n)}
    content = set(keywords(ask.query)) - people - {t for w in words for t in keywords(w)}
    if not content:
        return set()  # "Who is Marek's sister?": the step is the answer
    names = tuple(n for e in ask.walk.load(list(ask.walk.hops) + list(ask.walk.bridged)).values()
                  for n in (e.name, *e.aliases))
    waypoints = {normalise_name(n) for e in ask.walk.load(ask.walk.waypoints).values() for n in (e.name, *e.aliases)}
    reached = [n.casefold() for e in ask.walk.load(ask.walk.frontier).values() for n in (e.name, *e.aliases)]
    return {i for i, (rec, _) in kept.items()
            if normalise_name(getattr(rec, "subject", None) or "") in waypoints
            or (rec.kind == "episode" and _tells_of(record_text(rec), waypoints, reached))
            or (not content & set(rec.keywords) and any(linked(record_text(rec), w, names) for w in words))}


def _tells_of(text: str, waypoints: set[str], reached: list[str]) -> bool:
    """An episode that names a person the path passes through and none it reached ("Marek Nowak's
    favourite sport is tennis; ..." for Marek's sister's sport): a summary of the waypoint's
    window, not the answer."""
    low = text.casefold()
    named = normalise_name(text)
    return bool(reached) and not any(n in low for n in reached) and any(w and w in named for w in waypoints)


def capped(items: list[Ranked], seed: Ranked) -> list[Ranked]:
    """A feedback pass's items with its seed scored no higher than the first pass scored it."""
    out = [seed if s.item.id == seed.item.id and s.score > seed.score else s for s in items]
    return sorted(out, key=lambda s: (-s.score, s.item.id))


_QUESTION = re.compile(
    r"^\s*(what|who|whom|whose|where|when|which|why|how|did|do|does|is|are|was|were|can|could|would|will|has|have)\b"
    r"|什么|谁|哪|几|多少|怎么|怎样|为什么|是否|吗\s*$|呢\s*$", re.IGNORECASE)


def is_question(text: str) -> bool:
    """Whether a turn (or a query) asks something: a question mark, an interrogative start, or
    a Chinese question word or particle."""
    return "?" in text or "？" in text or bool(_QUESTION.search(text))


def within(rec: Any, span: tuple[datetime, datetime]) -> bool:
    at = rec.value_of("valid_at") or rec.value_of("start_at") or rec.created_at
    return span[0] <= at < span[1]
