"""The approximate token counter against the real Qwen2.5 tokenizer (vocab-only llama.cpp load)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem import Memory
from graphmem.extract import LlamaTokenCounter, default_model_path
from graphmem.settings import Settings
from graphmem.text import ApproxTokenCounter

SAMPLES = (Path(__file__).parent / "data" / "token_samples.txt").read_text(encoding="utf-8").splitlines()
EN, ZH, MIXED = SAMPLES[:10], SAMPLES[10:20], SAMPLES[20:]


@pytest.fixture(scope="module")
def real() -> LlamaTokenCounter:
    return LlamaTokenCounter(default_model_path(Settings().cache_dir / "models"))


@pytest.mark.parametrize("name,lines", [("english", EN), ("chinese", ZH), ("mixed", MIXED), ("all", SAMPLES)])
def test_approximation_within_ten_percent_of_the_real_tokenizer(real, name, lines):
    block = "\n".join(lines)
    exact = real.count(block)
    approx = ApproxTokenCounter().count(block)
    assert abs(approx - exact) / exact <= 0.10, (name, approx, exact)


def test_context_stays_within_budget_by_the_real_tokenizer(real, tmp_path):
    with Memory(tmp_path / "t.db", token_counter=real) as mem:
        mem.add_messages("s", [{"content": line, "speaker": "Ann"} for line in SAMPLES])
        mem.set_soul("You are a careful assistant. 请用中文或英文回答。")
        for budget in (40, 120, 400):
            ctx = mem.context("what is planned next month? 下个月有什么安排？", budget=budget, session_id="s")
            assert ctx.tokens == real.count(ctx.text) <= budget
            assert ctx.text.startswith("## Identity")


def _piece_by_piece(text: str) -> int:
    """The counter's rule read one run at a time (the reference its vectorised form must equal)."""
    import math
    import re

    from graphmem.text.tokens import _CJK

    total = 0.0
    for m in re.finditer(rf"(?P<cjk>[{_CJK}]+)|(?P<digits>\d+)|(?P<word>[^\W\d_]+)|(?P<space>\s+)|(?P<other>[^\w\s]+|_+)", text):
        n = len(m.group(0))
        if m.lastgroup == "cjk":
            total += n * 0.53
        elif m.lastgroup == "word":
            total += 1 + max(0, n - 8) / 12.0
        elif m.lastgroup == "space":
            total += m.group(0).count("\n") + bool(re.match(rf"[{_CJK}]", text[m.end():m.end() + 1]))
        else:
            total += n
    return math.ceil(total)


def test_the_counter_adds_up_the_same_pieces_as_a_run_by_run_reading():
    import random

    rng = random.Random(7)
    alphabet = [*"abcdefghij ABCé", *"中文字词语", *"0123456789", *" \n\t.,!?_-'\"", "ß", "²", "\u0301", "ｱ", "한", "😀"]
    texts = SAMPLES + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(20000)]
    counter = ApproxTokenCounter()
    assert [counter.count(t) for t in texts] == [_piece_by_piece(t) for t in texts]
