"""The LangGraph store and the LangChain components, against the real packages: LangGraph's own
InMemoryStore is the oracle for the key-value side (the same operations give the same
answers), graphmem's recall answers the semantic search, and both run inside a real compiled
LangGraph graph and a real LangChain retriever call."""

from __future__ import annotations

import asyncio
import json
import random
from typing import TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from graphmem import Memory
from graphmem.integrations.langchain import GraphMemChatMessageHistory, GraphMemRetriever
from graphmem.integrations.langgraph import GraphMemStore

NAMESPACES = [("users", "ana"), ("users", "bo"), ("users", "ana", "notes"), ("teams", "core"), ("cache", "v1")]


@pytest.fixture
def mem(tmp_path):
    with Memory(tmp_path / "lg.db") as m:
        yield m


def _view(items):
    return sorted((tuple(i.namespace), i.key, repr(sorted(i.value.items()))) for i in items)


def test_the_same_answers_as_langgraphs_in_memory_store(mem):
    ours, oracle = GraphMemStore(mem), InMemoryStore()
    rng = random.Random(3)
    for step in range(120):
        ns, key = rng.choice(NAMESPACES), f"k{rng.randrange(6)}"
        roll = rng.random()
        if roll < 0.55:
            value = {"text": f"note {step} about {rng.choice(['tea', 'chess', 'Lisbon'])}", "n": rng.randrange(5),
                     "kind": rng.choice(["a", "b"]), "nested": {"deep": [step, "x"]}}
            ours.put(ns, key, value)
            oracle.put(ns, key, value)
        elif roll < 0.7:
            ours.delete(ns, key)
            oracle.delete(ns, key)
        got, want = ours.get(ns, key), oracle.get(ns, key)
        assert (got is None) == (want is None), (step, ns, key)
        if want is not None:
            assert (got.namespace, got.key, got.value) == (want.namespace, want.key, want.value)
    for prefix in [(), ("users",), ("users", "ana"), ("teams",), ("nowhere",)]:
        for flt in [None, {"kind": "a"}, {"n": {"$gte": 2}}, {"kind": "b", "n": {"$lt": 3}}]:
            assert _view(ours.search(prefix, filter=flt, limit=1000)) == _view(oracle.search(prefix, filter=flt, limit=1000))
    for kwargs in [{}, {"prefix": ("users",)}, {"suffix": ("notes",)}, {"max_depth": 1}, {"prefix": ("users", "*")},
                   {"limit": 2, "offset": 1}]:
        assert ours.list_namespaces(**kwargs) == oracle.list_namespaces(**kwargs), kwargs


def test_semantic_search_is_graphmems_recall_within_the_prefix_and_filter(mem):
    store = GraphMemStore(mem, index_fields=["text"])
    mem.remember("Ana drinks mint tea after lunch")  # a memory of the same namespace that is not an item
    store.put(("users", "ana"), "drink", {"text": "Ana prefers green tea in the morning", "kind": "preference"})
    store.put(("users", "ana"), "home", {"text": "Ana moved to Lisbon last year", "kind": "fact"})
    store.put(("users", "bo"), "drink", {"text": "Bo drinks black coffee", "kind": "preference"})
    store.put(("users", "ana"), "secret", {"text": "Ana's locker code is 4412"}, index=False)  # stored, not searched
    hits = store.search(("users", "ana"), query="what does Ana drink?")
    assert hits[0].key == "drink" and hits[0].namespace == ("users", "ana") and hits[0].score > 0
    assert "mint" not in json.dumps([h.value for h in store.search((), query="mint tea after lunch")])
    assert all(h.namespace[:2] == ("users", "ana") for h in hits)
    assert [h.key for h in store.search(("users",), query="morning drink", filter={"kind": "fact"})] in (["home"], [])
    assert "secret" not in {h.key for h in store.search(("users", "ana"), query="locker code 4412")}
    assert store.get(("users", "ana"), "secret").value == {"text": "Ana's locker code is 4412"}
    # the items are graphmem memories: the graph names what they mention
    assert any(e.name == "Lisbon" for e in mem.find_entities("Lisbon"))  # graphmem's one default namespace
    created = store.get(("users", "ana"), "drink").created_at
    store.put(("users", "ana"), "drink", {"text": "Ana prefers oolong now", "kind": "preference"})
    again = store.get(("users", "ana"), "drink")
    assert again.value["text"] == "Ana prefers oolong now" and again.created_at == created and again.updated_at > created
    assert store.search(("users", "ana"), query="what does Ana drink?")[0].value["text"] == "Ana prefers oolong now"


def test_async_methods_and_a_reopened_store(tmp_path):
    async def run() -> None:
        with Memory(tmp_path / "a.db") as m:
            store = GraphMemStore(m)
            await asyncio.gather(*[store.aput(("u", str(i % 3)), f"k{i}", {"text": f"fact {i}"}) for i in range(12)])
            assert (await store.aget(("u", "1"), "k4")).value == {"text": "fact 4"}
            assert len(await store.asearch(("u",), limit=100)) == 12
            await store.adelete(("u", "1"), "k4")
            assert await store.aget(("u", "1"), "k4") is None
            assert await store.alist_namespaces() == [("u", "0"), ("u", "1"), ("u", "2")]

    asyncio.run(run())
    with Memory(tmp_path / "a.db") as m:  # persisted: a new process would see the same
        assert GraphMemStore(m).get(("u", "2"), "k5").value == {"text": "fact 5"}


def test_inside_a_compiled_langgraph_graph(mem):
    class State(TypedDict):
        user: str
        said: str
        recalled: list[str]

    def remember(state: State, *, store: BaseStore) -> dict:
        store.put(("users", state["user"]), state["said"][:40], {"text": state["said"]})
        return {}

    def recall(state: State, *, store: BaseStore) -> dict:
        found = store.search(("users", state["user"]), query="what is the user allergic to?")
        return {"recalled": [h.value["text"] for h in found]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=GraphMemStore(mem))
    app.invoke({"user": "ana", "said": "I'm allergic to peanuts", "recalled": []})
    out = app.invoke({"user": "ana", "said": "Book a table for Friday", "recalled": []})
    assert out["recalled"][0] == "I'm allergic to peanuts"
    other = app.invoke({"user": "bo", "said": "Hello", "recalled": []})
    assert "I'm allergic to peanuts" not in other["recalled"]  # another user's namespace


def test_langchain_retriever_and_chat_history(mem):
    history = GraphMemChatMessageHistory(mem, "chat-1", speaker="Ana")
    assert history.messages == []
    history.add_messages([HumanMessage("I moved to Lisbon and I prefer green tea"), AIMessage("Noted, Ana!")])
    history.add_message(ToolMessage("booked", tool_call_id="call_1"))
    assert [type(m).__name__ for m in history.messages] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert history.messages[0].content == "I moved to Lisbon and I prefer green tea"
    assert mem.get_session("chat-1").message_count == 3
    tea = mem.remember("Ana prefers green tea", subject="Ana", predicate="prefers_drink", object="green tea")

    retriever = GraphMemRetriever(memory=mem, k=3)
    docs = retriever.invoke("what does Ana drink?")
    assert docs[0].id == tea.id and docs[0].metadata["layer"] == "memory"
    assert {"relevance", "importance", "recency"} <= set(docs[0].metadata["factors"])
    turns = asyncio.run(GraphMemRetriever(memory=mem, layers=["message"]).ainvoke("Lisbon"))
    assert turns and all(d.metadata["layer"] == "message" for d in turns)
    assert GraphMemRetriever(memory=mem, namespace="empty").invoke("anything") == []
    history.clear()
    assert history.messages == [] and mem.get(tea.id).text == "Ana prefers green tea"  # memories stay
