"""The contract every Store backend passes (parametrised over conftest.BACKENDS, and the
embedded store again with its vector searches forced through the HNSW graph)."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from graphmem.errors import ConfigurationError, ConflictError, ValidationError
from graphmem.models import (
    Edge, EdgeType, Entity, Episode, MemoryRecord, Message, Procedure, Relation, Session, Status, Step, utcnow,
)

from .conftest import BACKENDS, DIM, make_store, serve_backend, unit

NAN = np.full(DIM, np.nan, dtype=np.float32)


@pytest.fixture(params=[*BACKENDS, "embedded-ann"] if "embedded" in BACKENDS else BACKENDS)
def backend(request) -> str:
    return serve_backend(request, request.param)


def mem(text: str, ns: str = "a", **kw) -> MemoryRecord:
    return MemoryRecord(namespace=ns, text=text, **kw)


def test_put_get_roundtrip_every_kind(store):
    now = utcnow()
    nodes = [
        Session(id="s1", namespace="a", title="t", summary="sum"),
        Message(namespace="a", session_id="s1", content="hello there", speaker="Ann", seq=0),
        mem("Ann likes tea", subject="Ann", predicate="likes", object="tea", valid_at=now, source_message_ids=["x"]),
        Entity(namespace="a", name="Ann", type="person", aliases=["Annie"]),
        Episode(namespace="a", summary="Ann talked about tea", session_id="s1"),
        Procedure(namespace="a", task="brew tea", steps=[Step(text="boil water"), Step(text="steep 3 min")]),
    ]
    vecs = np.stack([NAN, unit(1), unit(0, 1), NAN, unit(1, 1), unit(0, 0, 1)])
    store.put("a", nodes, vecs)
    got = store.get("a", [n.id for n in reversed(nodes)] + ["missing"])
    assert [g.id for g in got] == [n.id for n in reversed(nodes)]
    for original in nodes:
        again = next(g for g in got if g.id == original.id)
        assert again.model_dump() == original.model_dump()
    assert set(store.vectors("a", [n.id for n in nodes])) == {nodes[i].id for i in (1, 2, 4, 5)}


def assert_view_reads_as_record(view, rec) -> None:
    """A view of a record (``Store.views``, what recall scores) reads as the record: each field it
    holds, ``value_of`` of each of the kind's fields, the text fields and ``said``; ``record_of``
    gives the record."""
    from graphmem.models import NODE_TYPES
    from graphmem.store.views import record_of

    held = [name for name in vars(view) if not name.startswith("_")] if not isinstance(view, type(rec)) else []
    for name in held:
        assert getattr(view, name) == getattr(rec, name), (rec.kind, name)
    for name in [*NODE_TYPES[rec.kind].model_fields, "no_such_field"]:
        assert view.value_of(name) == rec.value_of(name), (rec.kind, name)
    for name in ("content", "text", "summary", "said", "keywords"):
        assert getattr(view, name, None) == getattr(rec, name, None), (rec.kind, name)
    assert record_of(view) == rec


def test_a_view_of_each_layer_reads_as_its_record(store):
    """Recall scores candidates from ``Store.views``; a view with an access still buffered
    and a turn that states a superseded value read as ``get`` reads them."""
    from graphmem.models import SupersededBy, Trace

    old = utcnow() - timedelta(days=400)
    memory = mem("Ann lives in Oslo", importance=0.8, confidence=0.7, valid_at=old, said_at=old, user_id="u1",
                 keywords=["ann", "oslo"], subject="Ann", predicate="lives_in", object="Oslo")
    nodes = [
        memory,
        Message(namespace="a", session_id="s1", content=" I moved to Bergen ", speaker="Ann", seq=2,
                superseded_by=SupersededBy(memory_id=memory.id, at=old, text="Ann lives in Oslo")),
        Episode(namespace="a", summary="Ann talked about moving", session_id="s1", start_at=old, end_at=utcnow()),
        Procedure(namespace="a", task="brew tea", steps=[Step(text="boil water")]),
        Trace(namespace="a", task="brew tea", session_id="s1"),
    ]
    store.put("a", nodes, np.stack([unit(1), unit(0, 1), unit(1, 1), unit(0, 0, 1), NAN]))
    store.record_access("a", [memory.id], utcnow())
    ids = [n.id for n in nodes]
    views = store.views("a", [*ids, "missing"])
    assert [v.id for v in views] == ids
    for view, rec in zip(views, store.get("a", ids)):
        assert_view_reads_as_record(view, rec)
    assert views[0].access_count == 1 and views[1].value_of("superseded_by").memory_id == memory.id
    found, sims = store.get_scored("a", "message", [ids[1]], unit(0, 1))
    assert [f.id for f in found] == [ids[1]] and sims[ids[1]] == pytest.approx(1.0, abs=1e-3)


def test_namespaces_are_isolated_everywhere(store):
    a = mem("the secret of tenant a", ns="a")
    b = mem("the secret of tenant b", ns="b")
    ea, eb = Entity(namespace="a", name="Zed"), Entity(namespace="b", name="Zed")
    store.put("a", [a, ea], np.stack([unit(1), NAN]))
    store.put("b", [b, eb], np.stack([unit(1), NAN]))
    store.add_edges("a", [Edge(namespace="a", source=a.id, type=EdgeType.MENTIONS, target=ea.id)])
    assert store.get("a", [b.id]) == []
    assert [n.id for n in store.query("a", "memory")] == [a.id]
    assert [i for i, _ in store.vector_search("a", "memory", unit(1), 10, [Status.active])] == [a.id]
    assert [i for i, _ in store.keyword_search("a", "memory", "secret tenant", 10, [Status.active])] == [a.id]
    assert store.find_entities("a", ["zed"])["zed"].id == ea.id
    assert store.edges("b", [a.id], direction="both") == []
    assert sorted(store.namespaces()) == ["a", "b"]
    with pytest.raises(ValidationError):
        store.put("a", [mem("x", ns="b")])
    with pytest.raises(ValidationError):  # an edge may not point into another namespace
        store.add_edges("a", [Edge(namespace="a", source=a.id, type=EdgeType.MENTIONS, target=eb.id)])


def test_bad_vectors_and_batches_write_nothing(store):
    good, bad = mem("good"), mem("bad")
    with pytest.raises(ValidationError):
        store.put("a", [good, bad], np.stack([unit(1), np.full(DIM, np.inf)]))
    with pytest.raises(ValidationError):
        store.put("a", [good], np.ones((1, DIM + 1), dtype=np.float32))
    with pytest.raises(ValidationError):
        store.put("a", [good], np.zeros((1, DIM), dtype=np.float32))
    with pytest.raises(ValidationError):  # dangling edge: the whole batch is rolled back
        store.put("a", [good], np.stack([unit(1)]),
                  [Edge(namespace="a", source=good.id, type=EdgeType.DERIVED_FROM, target="msg_nope")])
    assert store.get("a", [good.id, bad.id]) == []
    assert store.keyword_search("a", "memory", "good", 5, [Status.active]) == []
    assert store.vector_search("a", "memory", unit(1), 5, [Status.active]) == []


def test_a_batch_keeps_each_node_with_its_own_text_and_vector(store):
    """New nodes, a node written twice, an entity between them and a node already stored, in
    one batch: each is found by its own words and vector, the twice-written one by its second
    text only; a batch that would give a stored id another kind writes nothing."""
    keeper = Message(namespace="a", session_id="s1", content="the lighthouse keeper waved", speaker="Ann", seq=0)
    stored = mem("Ann rows to the island at dawn")
    store.put("a", [stored], np.stack([unit(0, 0, 0, 1)]))
    violin = Message(namespace="a", session_id="s1", content="a violin played on the pier", speaker="Bo", seq=1)
    again = keeper.model_copy(update={"content": "the harbour master waved"})
    tunes = mem("Bo tunes the violin weekly")
    ann = Entity(namespace="a", name="Ann Lind", type="person")
    store.put("a", [keeper, violin, again, ann, tunes, stored.model_copy(update={"importance": 0.9}), tunes],
              np.stack([unit(1), unit(0, 1), unit(1, 0, 0, 0, 1), NAN, unit(0, 0, 1), unit(0, 0, 0, 1), unit(0, 0, 1)]))
    got = {n.id: n for n in store.get("a", [keeper.id, ann.id, violin.id, tunes.id, stored.id])}
    assert got[keeper.id].content == "the harbour master waved" and got[stored.id].importance == 0.9
    assert len(got) == 5

    def words(kind, text):
        return [i for i, _ in store.keyword_search("a", kind, text, 5, [Status.active])]
    assert words("message", "lighthouse") == []
    assert words("message", "harbour") == [keeper.id]
    assert words("message", "violin") == [violin.id]
    assert words("memory", "violin") == [tunes.id]
    assert words("memory", "island") == [stored.id]
    assert store.vector_search("a", "memory", unit(0, 0, 1), 1, [Status.active])[0][0] == tunes.id
    assert store.vector_search("a", "memory", unit(0, 0, 0, 1), 1, [Status.active])[0][0] == stored.id
    assert store.vector_search("a", "message", unit(0, 1), 1, [Status.active])[0][0] == violin.id
    assert store.vector_search("a", "message", unit(1, 0, 0, 0, 1), 1, [Status.active])[0][0] == keeper.id
    assert [e.id for e in store.entities_named("a", ["ann lind"])["ann lind"]] == [ann.id]

    tide = Message(namespace="a", session_id="s1", content="a quiet evening tide", seq=2)
    with pytest.raises(ValidationError, match="already a message"):
        store.put("a", [tide, mem("not a turn", id=keeper.id)], np.stack([unit(1, 1), unit(1, 1, 1)]))
    assert store.get("a", [tide.id]) == [] and words("message", "tide") == []
    assert store.get("a", [keeper.id])[0].content == "the harbour master waved"


def test_a_conditional_write_is_made_only_over_what_it_read(store):
    first = mem("first version")
    store.put("a", [first], np.stack([unit(1)]), expect={first.id: None})  # new: must not exist yet
    read = store.get("a", [first.id])[0]
    second = read.model_copy(update={"text": "second version", "updated_at": read.updated_at + timedelta(seconds=1)})
    store.put("a", [second], np.stack([unit(2)]), expect={first.id: read.updated_at})
    other = mem("written alongside")
    for stale in ({first.id: read.updated_at}, {first.id: None}, {"mem_missing": read.updated_at}):
        with pytest.raises(ConflictError):  # another writer changed it (or it is not there): nothing written
            store.put("a", [read.model_copy(update={"text": "lost update"}), other], expect=stale)
    assert store.get("a", [first.id])[0].text == "second version" and store.get("a", [other.id]) == []


def test_vector_search_is_exact_and_filters_status(store):
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(300, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    nodes = [mem(f"m{i}", status=Status.superseded if i % 3 == 0 else Status.active) for i in range(300)]
    store.put("a", nodes, vecs)
    q = unit(1, 2, 3)
    hits = store.vector_search("a", "memory", q, 10, [Status.active])
    sims = vecs @ q
    active = [i for i in range(300) if i % 3]
    expect = sorted(active, key=lambda i: -sims[i])[:10]
    assert [h[0] for h in hits] == [nodes[i].id for i in expect]
    assert np.allclose([h[1] for h in hits], sims[expect], atol=1e-5)
    both = store.vector_search("a", "memory", q, 300, [Status.active, Status.superseded])
    assert len(both) == 300
    # a status change is seen by the next search
    top = nodes[expect[0]].model_copy(update={"status": Status.archived})
    store.put("a", [top])
    assert nodes[expect[0]].id not in [h[0] for h in store.vector_search("a", "memory", q, 10, [Status.active])]
    with pytest.raises(ValidationError):
        store.vector_search("a", "memory", np.full(DIM, np.nan), 3, [Status.active])


def test_fetch_with_cosines_and_the_kinds_a_namespace_holds(store):
    assert store.kinds_held("a") == set()
    m1, m2 = mem("tea"), mem("coffee")
    ep = Episode(namespace="a", summary="a talk about drinks")
    store.put("a", [m1, m2, ep], np.vstack([unit(1, 0), NAN, unit(0, 1)]))
    assert store.kinds_held("a") == {"memory", "episode"} and store.kinds_held("b") == set()
    found, sims = store.get_scored("a", "memory", [m2.id, "nope", ep.id, m1.id], unit(1, 1))
    assert [n.id for n in found] == [m2.id, ep.id, m1.id]  # as get: in the order asked, unknown ids left out
    assert set(sims) == {m1.id} and sims[m1.id] == pytest.approx(np.sqrt(0.5), abs=1e-4)  # its kind, with a vector
    # several kinds' cosines in one read: each id under its own kind, none without a vector or of another kind
    many = store.vector_scores_of("a", {"memory": [m1.id, m2.id, ep.id], "episode": [ep.id, m1.id, "nope"]}, unit(1, 1))
    assert many == pytest.approx({m1.id: np.sqrt(0.5), ep.id: np.sqrt(0.5)}, abs=1e-4)
    assert store.vector_scores_of("a", {"memory": [m1.id]}, unit(1)) == pytest.approx({m1.id: 1.0}, abs=1e-4)
    assert store.vector_scores_of("a", {"memory": [], "episode": []}, unit(1)) == {}
    assert store.vector_scores_of("b", {"memory": [m1.id]}, unit(1)) == {}  # another tenant's ids find nothing


def test_one_layer_searched_in_one_call(store):
    """``search_layer``: vector and keyword top-k of the asked statuses, graph hits ring by ring
    with their evidence and cosines (none from an entity of weight 0), records of the
    candidates; nothing of another tenant, whose nodes look the same."""
    from graphmem.store.layers import LayerAsk

    for ns in ("a", "b"):
        ann, tea, cup = (Entity(namespace=ns, name=n) for n in ("Ann", "Tea", "Cup"))
        near, far, kw, old, other = (mem(t, ns, **kw) for t, kw in (
            ("Ann drinks green tea", {}), ("Ann owns a red cup", {}), ("oolong tastes sweet", {}),
            ("Ann drank black tea", {"status": Status.superseded}), ("the weather", {})))
        edges = [Edge(namespace=ns, source=m.id, type=EdgeType.MENTIONS, target=e.id)
                 for m, e in ((near, ann), (near, tea), (far, cup), (old, ann), (other, cup))]
        store.put(ns, [ann, tea, cup, near, far, kw, old, other],
                  np.vstack([NAN, NAN, NAN, unit(1, 0.2), unit(0, 1), unit(0.3, 0, 1), unit(1), unit(0, 0, 0, 1)]), edges)
        if ns == "a":
            a = (ann, tea, cup, near, far, kw, old, other)
    ann, tea, cup, near, far, kw, old, other = a
    ask = LayerAsk("memory", (Status.active,), vector_k=2, keyword_k=5, rings=((ann.id,), (cup.id, tea.id)),
                   weights={ann.id: 1.0, cup.id: 0.6, tea.id: 0.0}, graph_k=5, rescore=5)
    hits = store.search_layer("a", ask, unit(1), "oolong")
    assert [i for i, _ in hits.vector] == [near.id, kw.id] and hits.vector[0][1] == pytest.approx(1 / np.sqrt(1.04), abs=1e-4)
    assert [i for i, _ in hits.keyword] == [kw.id]
    assert {i: (g, e) for i, (g, _, e) in hits.graph.items()} == {near.id: (1.0, ann.id), far.id: (0.6, cup.id),
                                                                  other.id: (0.6, cup.id)}
    assert hits.graph[far.id][1] == pytest.approx(0.0, abs=1e-4) and hits.graph[near.id][1] == hits.vector[0][1]
    assert list(hits.graph)[0] == near.id  # evidence + cosine, best first
    assert set(hits.nodes) <= {near.id, far.id, kw.id, other.id}  # a store may read the records too; only a's
    assert all(hits.sims[i] == pytest.approx(float(unit(1) @ store.vectors("a", [i])[i]), abs=1e-4) for i in hits.sims)
    # the question without its names: a store that reads records returns their cosines to it
    # for the graph's hits (recall asks the rest of what it needs)
    rest = unit(0, 1, 1)
    hits = store.search_layer("a", replace(ask, rest=rest), unit(1), "oolong")
    assert set(hits.rest) <= set(hits.nodes)
    assert all(hits.rest[i] == pytest.approx(float(rest @ store.vectors("a", [i])[i]), abs=1e-4) for i in hits.rest)
    # the pool: the vector hits after the top-k, best first, ids and cosines only (not b's, not superseded)
    q = unit(1, 0, 0, 0.2)
    pooled = store.search_layer("a", replace(ask, pool=5), q, "oolong")
    assert [i for i, _ in pooled.vector] == [near.id, kw.id] and hits.pool == []
    assert [i for i, _ in pooled.pool] == [other.id, far.id]
    assert pooled.pool[0][1] == pytest.approx(float(q @ store.vectors("a", [other.id])[other.id]), abs=1e-4)
    plain = store.search_layer("a", LayerAsk("memory", (Status.active, Status.superseded), 5, 5), unit(1), "")
    assert plain.graph == {} and plain.keyword == [] and old.id in dict(plain.vector)


def test_the_graph_walk_from_the_names_a_query_holds(store):
    """``walk``: the oldest entity of each name (not a rejected one), rings of relations either
    way up to the depth and the entity limit, and the first ring's relations that still hold."""
    from graphmem.store.layers import walk as composed

    ann, bob, cat, dan, eve = (Entity(namespace="a", name=n) for n in ("Ann", "Bob", "Cat", "Dan", "Eve"))
    twin = Entity(namespace="a", name="Ann")  # younger: the walk starts from the first
    nope = Entity(namespace="a", name="Zed", feedback="rejected")
    store.put("a", [ann, bob, cat, dan, eve, twin, nope])
    rels = [Relation(namespace="a", source_id=ann.id, predicate="manages", target_id=bob.id).to_edge(),
            Relation(namespace="a", source_id=cat.id, predicate="mentors", target_id=ann.id).to_edge(),
            Relation(namespace="a", source_id=ann.id, predicate="knew", target_id=cat.id, invalid_at=utcnow()).to_edge(),
            Relation(namespace="a", source_id=bob.id, predicate="likes", target_id=dan.id).to_edge(),
            Relation(namespace="a", source_id=dan.id, predicate="knows", target_id=eve.id).to_edge(),
            Relation(namespace="a", source_id=nope.id, predicate="knows", target_id=eve.id).to_edge()]
    store.add_edges("a", rels)
    for w in (store.walk("a", ["ann", "zed", "nobody"], 2, 100), composed(store, "a", ["ann", "zed"], 2, 100)):
        assert [e.id for e in w.entities] == [ann.id]
        assert w.hops == {ann.id: 0, bob.id: 1, cat.id: 1, dan.id: 2}
        assert w.first == {bob.id: (ann.id, "manages", True), cat.id: (ann.id, "mentors", False)}  # "knew" ended
    assert store.walk("a", ["ann"], 3, 100).hops[eve.id] == 3
    assert store.walk("a", ["ann"], 3, 3).hops.keys() == {ann.id, bob.id, cat.id}  # the limit counts the named
    assert store.walk("a", ["ann"], 0, 100).hops == {ann.id: 0}
    assert store.walk("b", ["ann"], 2, 100) == composed(store, "b", ["ann"], 2, 100) and not store.walk("b", ["ann"], 2, 100).entities


def test_the_walk_starts_from_the_longest_names_the_query_holds(store):
    """A name inside a longer one the query names is not a second start: "Alice Chen" is not
    also the Alice Wang whose alias "alice" is, nor the Quinn Chen of "chen"; a rejected
    entity's name hides none."""
    from graphmem.store.layers import walk as composed
    from graphmem.text.entities import name_grams

    wang = Entity(namespace="a", name="Alice Wang", aliases=["Alice", "Wang"])  # the oldest "alice"
    chen = Entity(namespace="a", name="Alice Chen", aliases=["Chen"])
    quinn = Entity(namespace="a", name="Quinn Chen", aliases=["Quinn"])
    bob, cat = Entity(namespace="a", name="Bob"), Entity(namespace="a", name="Cat")
    nope = Entity(namespace="a", name="Does Alice", feedback="rejected")
    store.put("a", [wang, chen, quinn, bob, cat, nope])
    store.add_edges("a", [Relation(namespace="a", source_id=chen.id, predicate="manages", target_id=bob.id).to_edge(),
                          Relation(namespace="a", source_id=wang.id, predicate="manages", target_id=cat.id).to_edge()])
    for walk in (store.walk, lambda *a: composed(store, *a)):
        w = walk("a", name_grams("What does Alice Chen prefer?"), 2, 100)
        assert [e.id for e in w.entities] == [chen.id] and w.hops == {chen.id: 0, bob.id: 1}
        w = walk("a", name_grams("Does Alice know Quinn?"), 2, 100)
        assert {e.id for e in w.entities} == {wang.id, quinn.id} and cat.id in w.hops and bob.id not in w.hops


def test_mention_counts_say_how_much_of_the_namespace_is_about_an_entity(store):
    """MENTIONS into the entity and SAID out of it, whatever the node's kind; the walk carries
    the counts of the entities named."""
    from graphmem.store.layers import walk as composed

    ann, bob, cat = (Entity(namespace="a", name=n) for n in ("Ann", "Bob", "Cat"))
    turns = [Message(namespace="a", session_id="s", seq=i, content=f"turn {i}", speaker="Ann") for i in range(3)]
    notes = [mem(f"note {i}") for i in range(2)]
    edges = [Edge(namespace="a", source=ann.id, type=EdgeType.SAID, target=t.id) for t in turns]
    edges += [Edge(namespace="a", source=n.id, type=EdgeType.MENTIONS, target=ann.id) for n in notes]
    edges += [Edge(namespace="a", source=notes[0].id, type=EdgeType.MENTIONS, target=bob.id),
              Relation(namespace="a", source_id=ann.id, predicate="knows", target_id=bob.id).to_edge()]
    store.put("a", [ann, bob, cat, *turns, *notes], edges=edges)
    assert store.mention_counts("a", [ann.id, bob.id, cat.id, "ent_missing"]) == {ann.id: 5, bob.id: 1}
    assert store.mention_counts("b", [ann.id]) == {} and store.mention_counts("a", []) == {}
    for w in (store.walk("a", ["ann"], 1, 100), composed(store, "a", ["ann"], 1, 100)):
        assert w.mentions == {ann.id: 5}


def test_turns_beside_the_given_ones_with_cosines(store):
    msgs = [Message(namespace="a", session_id="s1", seq=i, content=f"turn {i}") for i in range(5)]
    edges = [Edge(namespace="a", source=msgs[i].id, type=EdgeType.NEXT, target=msgs[i + 1].id) for i in range(4)]
    store.put("a", msgs, np.vstack([unit(1, i) for i in range(5)]), edges)
    found, sims = store.turns_beside("a", [msgs[2].id], unit(1), exclude={msgs[1].id})
    assert [n.id for n in found] == [msgs[3].id] and sims[msgs[3].id] == pytest.approx(1 / np.sqrt(10), abs=1e-4)
    found, _ = store.turns_beside("a", [msgs[0].id, msgs[4].id], unit(1), exclude=set())
    assert {n.id for n in found} == {msgs[1].id, msgs[3].id}
    assert store.turns_beside("b", [msgs[2].id], unit(1), exclude=set()) == ([], {})


def test_keyword_search_english_stems_and_chinese_words(store):
    en = mem("Alice prefers TypeScript for tooling")
    zh = mem("我对花生过敏，不能吃花生酱")
    store.put("a", [en, zh])
    assert [i for i, _ in store.keyword_search("a", "memory", "preferring typescript", 5, [Status.active])] == [en.id]
    assert [i for i, _ in store.keyword_search("a", "memory", "花生", 5, [Status.active])] == [zh.id]
    assert [i for i, _ in store.keyword_search("a", "memory", "她对什么过敏", 5, [Status.active])] == [zh.id]


@pytest.mark.parametrize("payload", [
    '"', "'", "AND", "NOT tea", "NEAR(a b)", "scope:x", "a*", "body: x", '") OR 1=1 --', "'; DROP TABLE nodes; --",
    "\\", "{}", "^start", "tea + coffee",
])
def test_keyword_search_treats_syntax_as_data(store, payload):
    m = mem(f"drinks tea and coffee {payload}")
    store.put("a", [m])
    store.keyword_search("a", "memory", payload, 5, [Status.active])  # never raises
    assert store.get("a", [m.id])  # and nothing was harmed


def test_delete_leaves_no_orphans(store):
    e1, e2 = Entity(namespace="a", name="Ann"), Entity(namespace="a", name="Tea")
    m = mem("Ann likes tea")
    edges = [
        Edge(namespace="a", source=m.id, type=EdgeType.MENTIONS, target=e1.id, key="subject"),
        Relation(namespace="a", source_id=e1.id, predicate="likes", target_id=e2.id, memory_id=m.id).to_edge(),
    ]
    store.put("a", [m, e1, e2], np.stack([unit(1), NAN, NAN]), edges)
    assert store.neighbours("a", [e1.id], 1) == {e1.id: 0, e2.id: 1}
    assert store.delete("a", [m.id, "unknown"]) == 1
    assert store.get("a", [m.id]) == []
    assert store.edges("a", [m.id, e1.id, e2.id], direction="both") == []  # relation derived from m went too
    assert store.neighbours("a", [e1.id], 1) == {e1.id: 0}
    assert store.keyword_search("a", "memory", "likes tea", 5, [Status.active]) == []
    assert store.vector_search("a", "memory", unit(1), 5, [Status.active]) == []
    assert store.vectors("a", [m.id]) == {}
    store.delete("a", [e1.id])
    assert store.find_entities("a", ["ann"]) == {}
    assert store.count("a") == {"entity": 1, "edges": 0}


def test_entities_found_by_normalised_name_and_alias(store):
    e = Entity(namespace="a", name="The Northwind Co", aliases=["NW", "北风"])
    store.put("a", [e])
    found = store.find_entities("a", ["northwind co", "nw", "北风", "nobody"])
    assert {k: v.id for k, v in found.items()} == {"northwind co": e.id, "nw": e.id, "北风": e.id}


def test_neighbours_follow_relations_both_ways_up_to_depth(store):
    ents = [Entity(namespace="a", name=n) for n in "ABCD"]
    store.put("a", ents)
    rel = [Relation(namespace="a", source_id=ents[i].id, predicate="knows", target_id=ents[i + 1].id).to_edge()
           for i in range(3)]
    store.add_edges("a", rel)
    ids = [e.id for e in ents]
    assert store.neighbours("a", [ids[1]], 1) == {ids[1]: 0, ids[0]: 1, ids[2]: 1}
    assert store.neighbours("a", [ids[0]], 2) == {ids[0]: 0, ids[1]: 1, ids[2]: 2}
    store.delete_edges("a", [rel[0]])
    assert store.neighbours("a", [ids[0]], 3) == {ids[0]: 0}


def test_query_filters_and_order(store):
    base = utcnow() - timedelta(days=10)
    msgs = [Message(namespace="a", session_id="s1" if i < 3 else "s2", content=f"m{i}", created_at=base + timedelta(days=i))
            for i in range(5)]
    mems = [mem("active one", category="fact"), mem("old one", status=Status.superseded, category="preference")]
    store.put("a", msgs + mems)
    assert [m.content for m in store.query("a", "message", session_id="s1")] == ["m2", "m1", "m0"]
    assert [m.content for m in store.query("a", "message", newest_first=False, limit=2, offset=1)] == ["m1", "m2"]
    assert [m.content for m in store.query("a", "message", since=base + timedelta(days=3))] == ["m4", "m3"]
    assert [m.content for m in store.query("a", "message", until=base + timedelta(days=1))] == ["m0"]
    assert [m.text for m in store.query("a", "memory", statuses=[Status.superseded])] == ["old one"]
    assert [m.text for m in store.query("a", "memory", category="fact")] == ["active one"]
    assert store.query("a", "memory", ids=[]) == []
    ann = Entity(namespace="a", name="Ann")
    store.put("a", [ann], edges=[Edge(namespace="a", source=mems[1].id, type=EdgeType.MENTIONS, target=ann.id)])
    assert [m.text for m in store.query("a", "memory", mentions=ann.id)] == ["old one"]
    assert store.query("a", "memory", mentions=ann.id, statuses=[Status.active]) == []
    assert store.query("b", "memory", mentions=ann.id) == []
    counts = store.count("a")
    assert counts["message"] == 5 and counts["memory:superseded"] == 1 and counts["memory:active"] == 1


def test_access_is_visible_at_once_and_durable(backend, tmp_path):
    s = make_store(backend, tmp_path)
    m = mem("remember me")
    s.put("a", [m])
    at = utcnow()
    s.record_access("a", [m.id, m.id], at)
    got = s.get("a", [m.id])[0]
    assert got.access_count == 2 and abs((got.last_accessed_at - at).total_seconds()) < 1e-3
    s.close()
    s = make_store(backend, tmp_path)
    assert s.get("a", [m.id])[0].access_count == 2
    s.close()


def test_reopen_restores_everything(backend, tmp_path):
    s = make_store(backend, tmp_path)
    e = Entity(namespace="a", name="Ann")
    m = mem("Ann drinks oolong tea")
    s.put("a", [m, e], np.stack([unit(1), NAN]),
          [Edge(namespace="a", source=m.id, type=EdgeType.MENTIONS, target=e.id)])
    s.set_meta("a", "soul", "be kind")
    s.close()
    s = make_store(backend, tmp_path)
    assert s.get("a", [m.id])[0].text == m.text
    assert s.vector_search("a", "memory", unit(1), 1, [Status.active])[0][0] == m.id
    assert s.keyword_search("a", "memory", "oolong", 1, [Status.active])[0][0] == m.id
    assert s.edges("a", [m.id])[0].target == e.id
    assert s.get_meta("a", "soul") == "be kind"
    s.close()


def test_init_refuses_another_embedder(backend, tmp_path):
    make_store(backend, tmp_path).close()
    with pytest.raises(ConfigurationError):
        make_store(backend, tmp_path, dim=DIM * 2)


def test_second_connection_sees_writes(backend, tmp_path):
    writer = make_store(backend, tmp_path)
    reader = make_store(backend, tmp_path)
    first = mem("first")
    writer.put("a", [first], np.stack([unit(1)]))
    assert reader.vector_search("a", "memory", unit(1), 5, [Status.active])[0][0] == first.id  # index now cached
    second = mem("second")
    writer.put("a", [second], np.stack([unit(1, 0.1)]))
    hits = [i for i, _ in reader.vector_search("a", "memory", unit(1), 5, [Status.active])]
    assert set(hits) == {first.id, second.id}  # the cached index noticed the other connection's write
    writer.delete("a", [first.id])
    assert [i for i, _ in reader.vector_search("a", "memory", unit(1), 5, [Status.active])] == [second.id]
    writer.close()
    reader.close()


def test_concurrent_readers_and_a_writer(store):
    store.put("a", [mem(f"seed {i}") for i in range(20)], np.stack([unit(1, i) for i in range(20)]))
    errors: list[BaseException] = []

    def read():
        try:
            for _ in range(50):
                assert store.vector_search("a", "memory", unit(1), 5, [Status.active])
                store.keyword_search("a", "memory", "seed", 5, [Status.active])
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised below
            errors.append(exc)

    def write():
        try:
            for i in range(50):
                store.put("a", [mem(f"new {i}")], np.stack([unit(0, 1, i)]))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(3)] + [threading.Thread(target=write)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.count("a")["memory"] == 70


def test_delete_namespace_removes_only_it(store):
    store.put("a", [mem("a1")], np.stack([unit(1)]))
    store.put("b", [mem("b1", ns="b")], np.stack([unit(1)]))
    assert store.delete_namespace("a") == 1
    assert not store.has_namespace("a") and store.has_namespace("b")
    assert store.vector_search("a", "memory", unit(1), 5, [Status.active]) == []
    assert len(store.vector_search("b", "memory", unit(1), 5, [Status.active])) == 1


def test_keyword_search_ranks_rare_terms_first_and_still_serves_common_ones(store):
    common = [mem(f"the team drinks coffee every day, note {i}") for i in range(400)]
    rare = [mem(f"Zorblat drinks coffee with oat milk, note {i}") for i in range(3)]
    store.put("a", common + rare)
    top = [i for i, _ in store.keyword_search("a", "memory", "zorblat coffee", 3, [Status.active])]
    assert set(top) == {m.id for m in rare}
    assert len(store.keyword_search("a", "memory", "coffee", 50, [Status.active])) == 50


def test_messages_of_a_session_by_seq_range(store):
    base = utcnow()
    # created_at out of order on purpose: windows follow seq, not time
    msgs = [Message(namespace="a", session_id="s", content=f"m{i}", seq=i, created_at=base - timedelta(minutes=i))
            for i in range(10)]
    store.put("a", msgs)
    got = store.query("a", "message", session_id="s", seq_range=(4, 8), newest_first=False)
    assert [m.seq for m in got] == [4, 5, 6, 7]
