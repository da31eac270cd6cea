"""AsyncMemory: every public method of Memory, awaitable, the same results, and many awaits in
flight at once on one instance (pytest's anyio plugin runs the coroutines)."""

from __future__ import annotations

import asyncio
import inspect
import io
import threading

import pytest

from graphmem import AsyncMemory, Memory, NotFoundError
from graphmem.engine.async_memory import PUBLIC

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_every_public_method_of_memory_is_awaitable_with_its_signature():
    public = {n for n, _ in inspect.getmembers(Memory, inspect.isfunction) if not n.startswith("_")} - {"close"}
    assert set(PUBLIC) == public and {"get_session", "add_entity", "recall"} <= public and len(public) >= 40
    for name in public:
        method = getattr(AsyncMemory, name)
        assert inspect.iscoroutinefunction(method), name
        assert inspect.signature(method) == inspect.signature(getattr(Memory, name)), name
        assert method.__doc__ == getattr(Memory, name).__doc__


async def test_the_same_results_off_the_event_loop(tmp_path):
    loop_thread = threading.get_ident()
    async with await AsyncMemory.open(tmp_path / "a.db") as mem:
        turns = await mem.add_messages("s1", [{"role": "user", "content": "I moved to Lisbon and I prefer green tea",
                                               "speaker": "Ana"}])
        tea = await mem.remember("Ana prefers green tea", subject="Ana", predicate="prefers_drink", object="green tea")
        oolong = await mem.update(tea.id, text="Ana prefers oolong", reason="changed her mind")
        assert [m.id for m in (await mem.history(oolong.id)).supersedes] == [tea.id]
        hits = await mem.recall("what does Ana drink?", k=3)
        assert hits[0].item.id == oolong.id and turns[0].id in {h.id for h in await mem.recall("Lisbon")}
        ctx = await mem.context("Ana's drinks", budget=200)
        assert "oolong" in ctx.text
        buf = io.StringIO()
        assert await mem.export(buf) > 3 and '"namespace": "default"' in buf.getvalue()
        with pytest.raises(NotFoundError):
            await mem.get("mem_missing")  # graphmem's errors arrive as they are
        threads = set()

        def lines():  # read by import_ wherever it runs
            threads.add(threading.get_ident())
            yield from buf.getvalue().splitlines()

        assert (await mem.import_(lines(), namespace="copy"))["nodes"] > 3
        assert threads and loop_thread not in threads  # the work ran in the pool, not on the loop


async def test_many_concurrent_awaits_on_one_instance(tmp_path):
    async with await AsyncMemory.open(tmp_path / "c.db", max_workers=8) as mem:
        writes = [mem.add_messages(f"s{i % 4}", [f"turn {i}: note about topic {i}"]) for i in range(40)]
        facts = [mem.remember(f"fact {i} about topic {i}", subject=f"user{i}") for i in range(20)]
        done = await asyncio.gather(*writes, *facts)
        assert len({m.id for batch in done[:40] for m in batch}) == 40
        reads = await asyncio.gather(*[mem.recall(f"topic {i}", k=3) for i in range(30)])
        assert all(r for r in reads)
        sessions = await asyncio.gather(*[mem.get_session(f"s{i}") for i in range(4)])
        assert sum(s.message_count for s in sessions) == 40
        for s in sessions:  # each session's turns numbered without gaps or doubles
            seqs = sorted(m.seq for m in await mem.list("message", session_id=s.id, limit=100))
            assert seqs == list(range(s.message_count))
        assert (await mem.stats())["memory"] == 20


async def test_wrapping_a_memory_you_have(tmp_path):
    sync = Memory(tmp_path / "w.db")
    mem = AsyncMemory(memory=sync)
    await mem.remember("Bo likes chess")
    assert [m.text for m in sync.list("memory")] == ["Bo likes chess"]
    await mem.close()
