"""Small parts of recall: a candidate as a pass ranks it, the in-turn executor, question
detection, the rest of a question once its names are out, and the feedback pass's cap."""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..models import ScoredItem
from ..store.views import record_of
from ..text import keywords, without_names

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
