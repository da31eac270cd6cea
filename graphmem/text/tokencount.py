"""Token counting for context budgets.

``ApproxTokenCounter`` needs no model: it follows how byte-level BPE tokenizers of the
Qwen2.5 family split text (digits one by one, punctuation apart, common English words
whole, about 1.4 Chinese characters a token). tests/test_tokencount.py checks it stays
within 10 % of the real Qwen2.5 tokenizer (a vocab-only llama.cpp load of the extraction
model) on English, Chinese and mixed text.
"""

from __future__ import annotations

import math
import re
from typing import Protocol, runtime_checkable

from .tokens import _CJK

_CJK_CHAR = re.compile(rf"[{_CJK}]")
_LETTER = r"[^\W\d_]"
# A text splits into runs, each taking the first of these that matches where it starts:
#   cjk [CJK]+ | digits \d+ | word [^\W\d_]+ | space \s+ | other [^\w\s]+ or _+
# so a run of letters is a CJK piece up to its first other letter and a word from there on
# (a word runs on through CJK: "abc中文"). The counts below add up the same pieces without a
# Python loop over them (tests/test_tokencount.py checks both readings agree).
_WORD = re.compile(rf"[^\W\d_{_CJK}]{_LETTER}*")
_DIGIT = re.compile(r"\d")
_OTHER = re.compile(r"[^\w\s]|_")
_SPACE_BEFORE_CJK = re.compile(rf"\s(?=[{_CJK}])")


@runtime_checkable
class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class ApproxTokenCounter:
    """A fast estimate of a BPE tokenizer's count; see the module docstring. The rates were
    fitted on LoCoMo (English) and MemoryBank (Chinese) turns against the Qwen2.5 tokenizer."""

    def __init__(self, tokens_per_cjk_char: float = 0.53, whole_word_chars: int = 8, chars_per_extra_token: float = 12.0) -> None:
        self.cjk = tokens_per_cjk_char
        self.whole = whole_word_chars
        self.extra = chars_per_extra_token
        self._beyond_whole = re.compile(rf"(?<!\S)\S{{{whole_word_chars}}}(\S+)")

    def count(self, text: str) -> int:
        """Digits one token each, punctuation one a character, a word one token (a leading
        space merges into it) plus one per ``chars_per_extra_token`` letters beyond
        ``whole_word_chars``, a CJK character ``tokens_per_cjk_char``, a newline one, and a
        space before a CJK character one (it does not merge into Chinese)."""
        words = _WORD.findall(text)
        joined = " ".join(words)
        total = ((len(_CJK_CHAR.findall(text)) - len(_CJK_CHAR.findall(joined))) * self.cjk
                 + len(_DIGIT.findall(text))
                 + len(words) + sum(map(len, self._beyond_whole.findall(joined))) / self.extra
                 + text.count("\n") + len(_SPACE_BEFORE_CJK.findall(text))
                 + len(_OTHER.findall(text)))
        return math.ceil(total)
