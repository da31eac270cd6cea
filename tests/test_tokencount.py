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
