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
_PIECE = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<digits>\d+)|(?P<word>[^\W\d_]+)|(?P<space>\s+)|(?P<other>[^\w\s]+|_+)")


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

    def count(self, text: str) -> int:
        total = 0.0
        for m in _PIECE.finditer(text):
            kind = m.lastgroup
            n = len(m.group(0))
            if kind == "cjk":
                total += n * self.cjk
            elif kind == "digits":
                total += n  # Qwen2.5 splits numbers into single digits
            elif kind == "word":  # a leading space merges into the word
                total += 1 + max(0, n - self.whole) / self.extra
            elif kind == "space":
                # newlines are tokens; a space merges into a following word but not into Chinese
                nxt = text[m.end() : m.end() + 1]
                total += m.group(0).count("\n") + (1 if nxt and _CJK_CHAR.match(nxt) else 0)
            else:
                total += n
        return math.ceil(total)
