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

_PIECE = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<digits>\d+)|(?P<word>[^\W\d_]+)|(?P<space>\s+)|(?P<other>[^\w\s]+|_+)")


@runtime_checkable
class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class ApproxTokenCounter:
    """A fast estimate of a BPE tokenizer's count; see the module docstring."""

    def __init__(self, chars_per_cjk_token: float = 1.4, chars_per_word_token: float = 4.2) -> None:
        self.cjk = chars_per_cjk_token
        self.word = chars_per_word_token

    def count(self, text: str) -> int:
        total = 0.0
        for m in _PIECE.finditer(text):
            kind = m.lastgroup
            piece = m.group(0)
            if kind == "cjk":
                total += math.ceil(len(piece) / self.cjk)
            elif kind == "digits":
                total += len(piece)
            elif kind == "word":
                total += 1 if len(piece) <= 7 else math.ceil(len(piece) / self.word)
            elif kind == "space":
                total += piece.count("\n")  # a space before a word merges into it
            else:
                total += len(piece) if len(piece) < 3 else math.ceil(len(piece) / 2)
        return int(total)
