"""Whether a word written in one script is named in a text written in the other, for the
grounding check of extracted facts (a Chinese window's fact written in English, an English
window's fact that writes a place in Chinese). Three sources, tried in order:

- pinyin: a Chinese name or place written in Latin letters ("Zhou Min" for 周敏, "Shanghai" for
  上海, "Jing'an" for 静安区), and back (周敏 for "Zhou Min");
- glosses: months, weekdays and small numbers, which have one meaning in both languages
  (一月份 / January, 周五 / Friday, 两个 / two / 2);
- meaning: for the rest, the embedder's cross-lingual similarity between the word and the
  text's words of the other script (数据 / data 0.93, 大会 / conference 0.73; a made-up
  "teacher" against a window about tea and Shanghai stays under 0.3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from .tokens import keywords

if TYPE_CHECKING:
    from ..embed import Embedder

HAN = re.compile(r"[\u3400-\u9fff]+")
_LATIN = re.compile(r"[a-z]+")
MEANING_MIN_COS = 0.70  # one word against one word; a true translation measured 0.72-0.94, a guess 0.29-0.56

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTHS_SHORT = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUMBER = re.compile(r"[零〇一二两三四五六七八九十]+|\d+")
_ZH_MONTH = re.compile(r"([一二三四五六七八九十]{1,3}|\d{1,2})月")
_ZH_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_PLACE_ENDS = ("省", "市", "区", "县", "镇", "路", "街")


def _zh_number(text: str) -> int | None:
    """一 .. 九十九 (and digits) as a number; None for anything else."""
    if text.isdigit():
        return int(text)
    if "十" not in text:
        return _ZH_DIGITS.get(text) if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1 or (tens and tens not in _ZH_DIGITS) or (ones and ones not in _ZH_DIGITS):
        return None
    return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)


def glosses(text: str) -> set[str]:
    """The months, weekdays and numbers a text names, as symbols both languages share
    ("month:1" for 一月份, "January" and "Jan"; "day:5" for 周五 and "Friday"; "n:2" for 两个,
    "two" and 2)."""
    out: set[str] = set()
    low = text.casefold()
    for m in _ZH_MONTH.finditer(text):
        n = _zh_number(m.group(1))
        if n and 1 <= n <= 12:
            out.add(f"month:{n}")
    for m in _ZH_WEEKDAY.finditer(text):
        out.add(f"day:{'一二三四五六'.index(m.group(1)) + 1 if m.group(1) in '一二三四五六' else 7}")
    for m in _ZH_NUMBER.finditer(_ZH_WEEKDAY.sub(" ", _ZH_MONTH.sub(" ", text))):  # 一月's 一 is no number
        n = _zh_number(m.group(0))
        if n is not None:
            out.add(f"n:{n}")
    for w in _LATIN.findall(low):
        if w in _MONTHS or (w in _MONTHS_SHORT and w != "may"):
            out.add(f"month:{(_MONTHS.index(w) if w in _MONTHS else _MONTHS_SHORT.index(w)) + 1}")
        elif w in _WEEKDAYS:
            out.add(f"day:{_WEEKDAYS.index(w) + 1}")
        elif w in _NUMBERS:
            out.add(f"n:{_NUMBERS.index(w)}")
    return out


@lru_cache(maxsize=4096)
def syllables(han: str) -> tuple[str, ...]:
    """The pinyin of a run of Chinese characters, without tones ("上海" -> shang, hai)."""
    from pypinyin import lazy_pinyin  # a 0.2 s import, paid only when a fact crosses scripts

    return tuple(s for s in lazy_pinyin(han, errors="ignore") if s.isalpha())


def _spells(word: str, pieces: tuple[str, ...], single: bool) -> bool:
    """Whether consecutive pieces, joined, spell ``word`` exactly; one piece alone only when
    ``single`` (a one-syllable word like "min" is a name's part, not a match for any 敏)."""
    for i in range(len(pieces)):
        joined = ""
        for j in range(i, len(pieces)):
            joined += pieces[j]
            if len(joined) >= len(word):
                if joined == word and (single or j > i):
                    return True
                break
    return False


class Window:
    """A window's text read for words of the other script: its Chinese runs as pinyin, its
    Latin words, its glosses and its keywords of each script."""

    def __init__(self, text: str) -> None:
        low = text.casefold()
        self.runs = [syllables(r) for r in HAN.findall(text)]
        self.latin = tuple(re.sub(r"['’-]", "", w) for w in re.findall(r"[a-z]+(?:['’-][a-z]+)*", low))
        self.glosses = glosses(text)
        kws = keywords(text)
        self.han_words = sorted({k for k in kws if HAN.search(k)})
        self.latin_words = sorted({k for k in kws if not HAN.search(k) and _LATIN.search(k)})


class Across:
    """Finds a word of a fact in a window written in the other script (see the module). One per
    batch of facts: it keeps the windows read and the words embedded."""

    def __init__(self, embedder: Embedder | None = None, min_cos: float = MEANING_MIN_COS) -> None:
        self.embedder, self.min_cos = embedder, min_cos
        self._windows: dict[str, Window] = {}
        self._vectors: dict[str, np.ndarray] = {}

    def window(self, text: str) -> Window:
        if text not in self._windows:
            self._windows[text] = Window(text)
        return self._windows[text]

    def finds(self, word: str, window_text: str, name: bool = False) -> bool:
        """Whether ``word`` (a keyword of a fact; ``name`` when it is part of a capitalised name)
        is named in the window in the other script."""
        w = self.window(window_text)
        if HAN.search(word):
            if not w.latin:
                return False
            spellings = [word, word[:-1]] if len(word) > 2 and word.endswith(_PLACE_ENDS) else [word]  # 静安区: Jing'an
            if any(_spells("".join(syllables(s)), w.latin, single=True) for s in spellings if syllables(s)):
                return True
            others = w.latin_words
        else:
            if not w.runs:
                return False
            letters = re.sub(r"[^a-z]", "", word.casefold())
            if letters and any(_spells(letters, run, single=name) for run in w.runs):
                return True
            others = w.han_words
        if glosses(word) & w.glosses:
            return True
        return bool(others) and self._near(word, others)

    def _near(self, word: str, others: Iterable[str]) -> bool:
        if self.embedder is None:
            return False
        others = list(others)
        missing = [t for t in [word, *others] if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self.embedder.embed(missing)))
        mine = self._vectors[word]
        return max(float(self._vectors[t] @ mine) for t in others) >= self.min_cos
