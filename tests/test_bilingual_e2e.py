"""End to end in Chinese and English: write, recall, context."""

from __future__ import annotations

from graphmem import Memory

from .conftest import make_memory

CONVERSATION = [
    {"speaker": "Li Wei", "content": "我叫李伟，在深圳的腾讯做后端开发。"},
    {"speaker": "assistant", "content": "你好李伟！平时主要用什么语言？"},
    {"speaker": "Li Wei", "content": "主要用 Go，偶尔写 Python 脚本。我对芒果过敏。"},
    {"speaker": "Li Wei", "content": "Next week I'm flying to Singapore for a Kubernetes conference."},
    {"speaker": "Li Wei", "content": "我女儿下个月过生日，想送她一架电子琴。"},
    {"speaker": "Li Wei", "content": "My favourite food is hand-pulled noodles from Lanzhou."},
]


def _top(mem: Memory, query: str, k: int = 3) -> list[str]:
    return [s.text for s in mem.recall(query, k=k)]


def test_chinese_and_english_end_to_end(backend, tmp_path):
    with make_memory(backend, tmp_path) as mem:
        msgs = mem.add_messages("chat", CONVERSATION)
        assert any("腾讯" in t for t in _top(mem, "李伟在哪里工作？"))  # Chinese query, Chinese fact
        assert any("芒果" in t for t in _top(mem, "他对什么过敏"))  # no shared word but 过敏
        assert any("Singapore" in t for t in _top(mem, "下周他要去哪里开会？"))  # Chinese query, English fact
        assert any("电子琴" in t for t in _top(mem, "What present does he want for his daughter?"))  # and back
        assert any("Lanzhou" in t for t in _top(mem, "favourite food"))

        fact = mem.remember("李伟对芒果过敏", subject="李伟", predicate="过敏", object="芒果",
                            importance=0.95, source_message_ids=[msgs[2].id])
        assert "李伟" in fact.entities
        hood = mem.neighbourhood("李伟")
        assert [r.predicate for r in hood.relations] == ["过敏"]
        assert mem.recall("李伟 过敏", k=1)[0].item.id == fact.id

        ctx = mem.context("给李伟推荐一种水果", budget=200, session_id="chat")  # recommend him a fruit
        assert "芒果" in ctx.text and ctx.tokens <= 200
        ctx_en = mem.context("What should Li Wei avoid eating?", budget=200)
        assert "芒果" in ctx_en.text


def test_chinese_keyword_search_segments_words(tmp_path):
    with Memory(tmp_path / "kw.db") as mem:
        mem.add_messages("s", ["我们周末去北京的故宫参观", "上海的天气今天很热"])
        hits = mem.recall("故宫", k=1, layers=["message"])
        assert "故宫" in hits[0].text and "keyword" in hits[0].matched_by
