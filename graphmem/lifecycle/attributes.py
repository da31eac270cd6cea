"""Which attribute a memory states, read by meaning rather than by its predicate's name: the
model names one attribute many ways ("Nadia cycles to work" under ``hobbies``, "Nadia takes the
bus to work" under ``commutes``; "Aisha is vegan" and "Aisha eats fish again" under ``diet``),
so two memories of one person about the same attribute held one at a time are found by the
embedder's similarity to a few phrasings of each such attribute, in English and Chinese.

An attribute a person holds several of at once (hobbies, languages being learned, family) is
listed too, so that a memory nearer to one of those is never read as a one-value attribute:
"Nadia does the crossword every night" must not replace "Nadia plays chess online".
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..embed import Embedder

# attributes held one value at a time: a new value replaces the old one
ONE_VALUE: dict[str, tuple[str, ...]] = {
    "commute": ("goes to work by bus", "cycles to work", "takes the train to work", "drives to work every day",
                "每天坐地铁上班", "骑车上班", "开车上班"),
    "diet": ("is vegan", "is vegetarian", "eats meat", "doesn't eat fish", "吃素", "不吃肉"),
    "groceries": ("buys groceries at the supermarket", "does the food shopping at Tesco", "在超市买菜"),
    "morning drink": ("drinks coffee every morning", "has tea in the morning", "早上喝咖啡", "每天早上喝茶"),
    "car": ("drives a Toyota", "owns a car", "开一辆丰田车"),
    "home": ("lives in London", "moved to Paris", "住在北京", "搬到了上海"),
    "employer": ("works at Google", "is an engineer at a company", "在腾讯工作", "在公司上班"),
    "job": ("works as a nurse", "is a teacher", "是一名老师", "当医生"),
    "partner": ("is dating Anna", "has a boyfriend", "her girlfriend is Mia", "男朋友是", "和女朋友在一起"),
    "bedtime": ("goes to bed at ten", "sleeps after midnight", "晚上十点睡觉"),
    "smoking": ("smokes cigarettes", "抽烟"),
}
# attributes held several at once: a memory nearest to one of these replaces nothing by meaning
MANY_VALUES: dict[str, tuple[str, ...]] = {
    "hobby": ("plays chess", "enjoys hiking", "likes jazz", "hobby is painting", "爱好是钓鱼", "喜欢爬山", "周末去钓鱼",
              "plays the cello in an orchestra"),
    "learning": ("is learning Spanish", "studies Italian", "takes a course", "在学日语", "goes to a yoga class"),
    "family": ("has a son", "her husband teaches", "has a dog", "养了一只猫", "女儿七岁"),
}
MIN_COS = 0.40  # a memory this close to an attribute's phrasings states it (set reading batch 3's misses: a fit there)

_exemplars: dict[str, tuple[list[str], np.ndarray]] = {}
_lock = threading.Lock()


class Attributes:
    """``of(text)``: the one-value attribute a memory's text states, or None (several-valued,
    or near none). One per batch of decisions: it keeps the texts it has read."""

    def __init__(self, embedder: Embedder, min_cos: float = MIN_COS) -> None:
        self.embedder, self.min_cos = embedder, min_cos
        self._seen: dict[str, str | None] = {}

    def _table(self) -> tuple[list[str], np.ndarray]:
        key = getattr(self.embedder, "name", type(self.embedder).__name__)
        with _lock:
            if key not in _exemplars:
                names = [g for table in (ONE_VALUE, MANY_VALUES) for g, ex in table.items() for _ in ex]
                texts = [x for table in (ONE_VALUE, MANY_VALUES) for ex in table.values() for x in ex]
                _exemplars[key] = (names, self.embedder.embed(texts))
            return _exemplars[key]

    def of(self, text: str) -> str | None:
        if text not in self._seen:
            names, vectors = self._table()
            sims = vectors @ self.embedder.embed([text])[0]
            best = int(np.argmax(sims))
            self._seen[text] = names[best] if sims[best] >= self.min_cos and names[best] in ONE_VALUE else None
        return self._seen[text]
