"""The embedded store's read path at scale: the indexes recall's graph step reads through,
including on a file written before they existed."""

from __future__ import annotations

import sqlite3

from graphmem.models import Edge, EdgeType, Entity, Message, MemoryRecord, Status
from graphmem.store import EmbeddedStore


def _indexes(path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_mentions_are_read_through_covering_indexes_also_on_an_older_file(tmp_path):
    path = tmp_path / "s.db"
    s = EmbeddedStore(path)
    s.init(embedder="test-embedder", dim=4)
    ann = Entity(namespace="a", name="Ann", type="person")
    mems = [MemoryRecord(namespace="a", text=f"Ann fact {i}") for i in range(3)]
    mems[2].status = Status.superseded
    s.put("a", [ann, *mems], edges=[Edge(namespace="a", source=m.id, type=EdgeType.MENTIONS, target=ann.id)
                                    for m in mems])
    s.close()
    with sqlite3.connect(path) as conn:  # the file as the graphmem before these indexes left it
        conn.executescript("DROP INDEX edges_by_target_source; DROP INDEX nodes_by_id_scope; "
                           "CREATE INDEX edges_by_target ON edges (namespace, target, type);")

    s = EmbeddedStore(path)
    s.init(embedder="test-embedder", dim=4)
    assert {"edges_by_target_source", "nodes_by_id_scope"} <= _indexes(path)
    assert "edges_by_target" not in _indexes(path)  # replaced: the new one serves every read it did
    statements: list[str] = []
    reader = s._reader()  # recall reads mentions on the thread's own connection
    reader.set_trace_callback(statements.append)
    try:
        pairs = s.mentioned_by("a", [ann.id], "memory", [Status.active], 10)
    finally:
        reader.set_trace_callback(None)
    assert sorted(pairs) == sorted((m.id, ann.id) for m in mems[:2])
    assert s.mentioned_by("a", [ann.id], "message", [Status.active], 10) == []
    sql = next(q for q in statements if "MENTIONS" in q)
    plan = " | ".join(row[-1] for row in s.conn.execute("EXPLAIN QUERY PLAN " + sql))
    # an edge's source and a node's kind and status come from the indexes, not the rows
    # (at 100k memories: 2.9 -> 0.8 ms for 1,000 pairs)
    assert "COVERING INDEX edges_by_target_source" in plan and "COVERING INDEX nodes_by_id_scope" in plan, plan
    s.close()


def test_a_field_of_some_kinds_reads_as_none_on_the_others():
    turn = Message(namespace="a", session_id="s", role="user", content="hi")
    memory = MemoryRecord(namespace="a", text="Ann likes tea")
    assert turn.value_of("session_id") == "s" and memory.value_of("session_id") is None
    assert memory.value_of("text") == "Ann likes tea"
    assert turn.value_of("superseded_by") is None and turn.value_of("no_such_field") is None


def test_a_name_everywhere_is_searched_with_its_other_terms_together(tmp_path, monkeypatch):
    from graphmem.store import embedded_parts

    monkeypatch.setattr(embedded_parts, "KEYWORD_DOC_BUDGET", 20)  # at 100k memories a first name is ~5,000
    s = EmbeddedStore(tmp_path / "s.db")
    s.init(embedder="test-embedder", dim=4)
    texts = ([f"Alice Smith booked room {i}" for i in range(60)] + [f"Bob Chen filed report {i}" for i in range(80)]
             + [f"Carol Diaz planted tree {i}" for i in range(300)] + [f"Alice Chen wrote note {i}" for i in range(5)])
    recs = [MemoryRecord(namespace="a", text=t) for t in texts]
    s.put("a", recs)
    both = {r.id for r in recs[-5:]}
    top3 = s.keyword_search("a", "memory", "Alice Chen", 3, [Status.active])
    assert {i for i, _ in top3} <= both  # the two names together, not any of the 65 Alices alike
    top10 = s.keyword_search("a", "memory", "Alice Chen", 10, [Status.active])
    assert {i for i, _ in top10[:5]} == both and len(top10) == 10  # then the rarest name's
    assert {i for i, _ in top10[5:]} <= {r.id for r in recs[:60]}
    scores = [score for _, score in top10]
    assert scores == sorted(scores, reverse=True)
    s.close()


def test_a_name_in_more_documents_than_the_budget_costs_what_the_budget_would(tmp_path, monkeypatch):
    """Where even the rarest term matches more than the budget: the rarest terms together
    first, then all but the commonest of them while two are left ("Priya Yilmaz" where none
    says "prefer"), then the rarest term's newest documents, never all of them."""
    from graphmem.store import embedded_parts

    monkeypatch.setattr(embedded_parts, "KEYWORD_DOC_BUDGET", 20)
    s = EmbeddedStore(tmp_path / "s.db")
    s.init(embedder="test-embedder", dim=4)
    texts = ([f"Omar Yilmaz filed report {i}" for i in range(105)] + [f"Priya Yilmaz wrote note {i}" for i in range(5)]
             + [f"Carol Diaz prefers tea {i}" for i in range(150)] + [f"Dan Ito planted tree {i}" for i in range(125)]
             + [f"Priya Smith booked room {i}" for i in range(115)])
    recs = [MemoryRecord(namespace="a", text=t) for t in texts]
    s.put("a", recs)
    top5 = s.keyword_search("a", "memory", "What does Priya Yilmaz prefer?", 5, [Status.active])
    assert {i for i, _ in top5} == {r.id for r in recs[105:110]}  # no memory says all three words
    newest = {r.id for r in recs[-20:]}  # of the 120 that say "Priya"
    top10 = s.keyword_search("a", "memory", "Priya", 10, [Status.active])
    assert len(top10) == 10 and {i for i, _ in top10} <= newest
    s.close()


def test_a_kind_that_fills_the_file_is_ranked_without_its_scope_token(tmp_path, monkeypatch):
    """One tenant's memories are most of the file: their keyword top-k is read from the
    file-wide ranking (the scope token ANDed in walks a doclist as long as the kind), and is
    the scoped query's, hit for hit; where too few of the first are in scope (superseded
    ones crowd them out) the scoped query answers."""
    import numpy as np

    from graphmem.store import embedded_parts
    from graphmem.store.base import scope_token
    from graphmem.text import query_terms

    s = EmbeddedStore(tmp_path / "s.db")
    s.init(embedder="test-embedder", dim=4)
    rng = np.random.default_rng(5)
    words = ["tea", "coffee", "rust", "go", "oslo", "paris", "hiking", "chess"]
    recs = [MemoryRecord(namespace="a", text=" ".join(rng.choice(words, 4)) + f" note {i}") for i in range(300)]
    stale = [MemoryRecord(namespace="a", text=f"quartz garnet opal {i}", status=Status.superseded) for i in range(40)]
    recs += stale + [MemoryRecord(namespace="a", text="quartz ruby opal today")]
    s.put("a", recs, rng.normal(size=(len(recs), 4)).astype(np.float32))
    s.vector_search("a", "memory", np.ones(4, dtype=np.float32), 1, [Status.active])  # the kind's vectors are read

    answered = []
    real = embedded_parts._in_scope
    monkeypatch.setattr(embedded_parts, "_in_scope", lambda *a: answered.append((a[5], real(*a))) or answered[-1][1])
    scopes = [scope_token("a", "memory", Status.active.value)]
    for query, k in [("tea rust", 10), ("coffee oslo chess", 25), ("hiking", 50), ("paris go", 5), ("quartz opal", 3)]:
        terms = query_terms(query)
        scoped = embedded_parts.keyword_query(s.conn, terms, embedded_parts.doc_counts(s.conn, terms), scopes, "a", k)
        assert s.keyword_search("a", "memory", query, k, [Status.active]) == scoped, query
    store_calls = [hits for share, hits in answered if share > 0]  # the reference above asks with share 0
    assert len(store_calls) == 5 and all(hits is not None for hits in store_calls[:-1])  # the file-wide ranking
    assert store_calls[-1] is None  # 40 superseded "quartz opal" first: the scoped query answers
    assert s.keyword_search("a", "memory", "quartz opal", 3, [Status.active])[0][0] == recs[-1].id
    s.close()


def test_a_view_of_a_stored_record_reads_as_the_record_does(tmp_path):
    """Recall scores its candidates from light views (``Store.views``): every field a view
    holds, ``value_of`` of every field and ``said`` read as the validated record's, for each
    layer's kind, with accesses flushed and still buffered, and on a record written before
    some of its fields existed; the record it builds is the stored one."""
    from datetime import datetime, timezone

    from graphmem.models import Episode, Procedure, Step, SupersededBy, ToolCall, ToolFunction, Trace
    from graphmem.store.views import RecordView

    from .test_store_contract import assert_view_reads_as_record

    s = EmbeddedStore(tmp_path / "s.db")
    s.init(embedder="test-embedder", dim=4)
    early = datetime(1969, 7, 20, 20, 17, 40, 123456, tzinfo=timezone.utc)
    memory = MemoryRecord(namespace="a", text="Ann lives in Oslo", importance=0.8, confidence=0.7, valid_at=early,
                          said_at=datetime(2024, 3, 1, tzinfo=timezone.utc), user_id="u1", keywords=["ann", "oslo"],
                          entities=["Ann", "Oslo"], subject="Ann", predicate="lives_in", object="Oslo")
    turn = Message(namespace="a", session_id="s1", speaker="Ann", content="  I moved to Bergen ", seq=3,
                   superseded_by=SupersededBy(memory_id=memory.id, at=early, text="Ann lives in Oslo"))
    call = Message(namespace="a", session_id="s1", role="assistant", content="checking",
                   tool_calls=[ToolCall(id="c1", function=ToolFunction(name="weather", arguments={"city": "Oslo"}))])
    episode = Episode(namespace="a", summary="Ann talked about moving", session_id="s1", start_at=early,
                      end_at=datetime(2025, 1, 1, tzinfo=timezone.utc))
    procedure = Procedure(namespace="a", task="deploy the app", steps=[Step(text="build")])
    trace = Trace(namespace="a", task="deploy the app", session_id="s1")
    old = MemoryRecord(namespace="a", text="Bob likes tea")
    records = [memory, turn, call, episode, procedure, trace, old]
    s.put("a", records)
    with sqlite3.connect(tmp_path / "s.db") as conn:  # written before keywords and confidence existed
        conn.execute("UPDATE nodes SET data = json_remove(data, '$.keywords', '$.confidence') WHERE id = ?", (old.id,))
    s.record_access("a", [memory.id, turn.id], datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc))
    s._access.flush()
    s.record_access("a", [memory.id], datetime(2026, 2, 3, tzinfo=timezone.utc))  # still buffered
    ids = [r.id for r in records]
    views, stored = s.views("a", [*ids, "mem_missing"]), s.get("a", ids)
    assert [v.id for v in views] == ids and all(isinstance(v, RecordView) for v in views)
    for view, rec in zip(views, stored):
        assert_view_reads_as_record(view, rec)
    assert views[0].access_count == 2 and views[0].last_accessed_at == datetime(2026, 2, 3, tzinfo=timezone.utc)
    assert views[1].value_of("superseded_by").memory_id == memory.id and views[1].confidence == 1.0
    assert views[-1].keywords == [] and views[-1].confidence == 1.0  # the defaults, as the record reads them
    assert views[4].steps == procedure.steps  # a field the view does not hold: the record's
    s.close()


def test_terms_are_counted_again_only_when_the_full_text_index_changes(tmp_path):
    """FTS5's vocabulary counts a term's documents by reading them all; the counts are kept
    between searches until a write changes the index (an access count's write does not), and
    the ranking after a change uses the new counts."""
    s = EmbeddedStore(tmp_path / "s.db")
    s.init(embedder="test-embedder", dim=4)
    tea = MemoryRecord(namespace="a", text="Ana prefers green tea")
    s.put("a", [tea, MemoryRecord(namespace="a", text="Ana walks the dog")])
    vocab: list[str] = []
    s.conn.set_trace_callback(lambda sql: vocab.append(sql) if "fts_vocab" in sql else None)

    def search(text: str) -> list[str]:
        return [i for i, _ in s.keyword_search("a", "memory", text, 5, [Status.active])]
    try:
        assert search("green tea") == [tea.id]
        assert search("green tea") == [tea.id] and search("tea") == [tea.id]
        assert len(vocab) == 1  # the second search, and a term counted before, read no count
        s.record_access("a", [tea.id], tea.created_at)
        s._access.flush()
        assert search("green tea") == [tea.id] and len(vocab) == 1
        s.put("a", [tea.model_copy(update={"text": "Ana prefers oolong tea"})])  # as many words as before
        assert search("green tea") == [tea.id] and len(vocab) == 2
        assert search("green") == [] and search("oolong") == [tea.id]
        assert s._term_counts(["green", "tea", "oolong"]) == {"tea": 1, "oolong": 1}
    finally:
        s.conn.set_trace_callback(None)
        s.close()


def test_a_kept_view_is_read_again_once_its_record_changes(tmp_path):
    """Recall's candidate views are kept decoded between reads; every way a record changes
    (a put, a use counted and flushed, another process's write, a rolled-back block, a
    delete) shows in the next read."""
    from datetime import datetime, timezone

    import pytest

    path = tmp_path / "s.db"
    s = EmbeddedStore(path)
    s.init(embedder="test-embedder", dim=4)
    m = MemoryRecord(namespace="a", text="Ann likes tea")
    s.put("a", [m])

    def read():
        (view,) = s.views("a", [m.id])
        return view.text, view.status, view.access_count

    assert read() == ("Ann likes tea", Status.active, 0)
    assert read() == ("Ann likes tea", Status.active, 0)  # kept
    m.text = "Ann likes coffee"
    s.put("a", [m])
    assert read() == ("Ann likes coffee", Status.active, 0)
    at = datetime(2026, 12, 6, tzinfo=timezone.utc)
    s.record_access("a", [m.id], at)
    assert read() == ("Ann likes coffee", Status.active, 1)  # the pending use
    s._access.flush()
    assert read() == ("Ann likes coffee", Status.active, 1)  # the same use, now in the row
    assert s.views("a", [m.id])[0].last_accessed_at == at

    other = EmbeddedStore(path)  # another process's handle
    other.init(embedder="test-embedder", dim=4)
    m.text, m.status = "Ann likes cocoa", Status.superseded
    other.put("a", [m])
    other.close()
    assert read() == ("Ann likes cocoa", Status.superseded, s.get("a", [m.id])[0].access_count)  # as the row says

    with pytest.raises(RuntimeError):
        with s.atomic():
            m.text = "Ann likes juice"
            s.put("a", [m])
            assert read()[0] == "Ann likes juice"  # the block's own write
            raise RuntimeError("roll back")
    assert read()[0] == "Ann likes cocoa"
    assert s.views("a", [m.id, "no-such-id", m.id])[1].id == m.id  # in the order asked, the missing left out
    s.delete("a", [m.id])
    assert s.views("a", [m.id]) == []
    s.close()


def test_reads_run_beside_the_lock_and_an_atomic_block_reads_its_own_writes(tmp_path):
    """Recall's record and mention reads go through the thread's own read connection (the
    layers of a recall read at once); inside this thread's atomic() block they read the main
    connection, which holds the block's writes before they commit."""
    path = tmp_path / "s.db"
    s = EmbeddedStore(path)
    s.init(embedder="test-embedder", dim=4)
    ann = Entity(namespace="a", name="Ann", type="person")
    first = MemoryRecord(namespace="a", text="Ann likes tea")
    s.put("a", [ann, first], edges=[Edge(namespace="a", source=first.id, type=EdgeType.MENTIONS, target=ann.id)])
    on_main: list[str] = []
    s.conn.set_trace_callback(on_main.append)
    assert [v.id for v in s.views("a", [first.id])] == [first.id]
    assert s.mentioned_by("a", [ann.id], "memory", [Status.active], 5) == [(first.id, ann.id)]
    assert not [q for q in on_main if "FROM nodes WHERE namespace = 'a' AND id IN" in q or "MENTIONS" in q]

    second = MemoryRecord(namespace="a", text="Ann plays volleyball")
    with s.atomic():
        s.put("a", [second], edges=[Edge(namespace="a", source=second.id, type=EdgeType.MENTIONS, target=ann.id)])
        assert [v.text for v in s.views("a", [second.id])] == ["Ann plays volleyball"]
        assert sorted(s.mentioned_by("a", [ann.id], "memory", [Status.active], 5)) == sorted(
            [(first.id, ann.id), (second.id, ann.id)])
        assert [i for i, _ in s.keyword_search("a", "memory", "volleyball", 5, [Status.active])] == [second.id]
    s.conn.set_trace_callback(None)
    assert [v.text for v in s.views("a", [second.id])] == ["Ann plays volleyball"]
    s.close()


def test_maintain_merges_the_keyword_index_into_one_segment_with_the_same_hits(tmp_path):
    from graphmem import Memory
    from graphmem.settings import Settings

    def segments(path) -> int:
        with sqlite3.connect(path) as conn:
            return conn.execute("SELECT count(DISTINCT segid) FROM fts_idx").fetchone()[0]

    path = tmp_path / "m.db"
    s = EmbeddedStore(path)
    s.init(embedder="test-embedder", dim=4)
    for batch in range(6):  # each write leaves a segment of the full-text index
        s.put("a", [MemoryRecord(namespace="a", text=f"Ann {batch} likes green tea number {i}") for i in range(5)]
              + [MemoryRecord(namespace="a", text=f"Bo {batch} plays chess")])
    asked = [("green tea", 10), ("chess", 3), ("Ann tea", 4)]
    before = [s.keyword_search("a", "memory", q, k, [Status.active]) for q, k in asked]
    assert segments(path) > 1
    s.optimize()
    assert segments(path) == 1
    assert [s.keyword_search("a", "memory", q, k, [Status.active]) for q, k in asked] == before
    s.close()

    mem = Memory(tmp_path / "other.db", settings=Settings(extraction="off"))
    for text in ("Ann keeps bees in the garden", "Bo repairs old bicycles", "Cy sings in a choir"):
        mem.remember(text)
    mem.maintain(dry_run=True)
    assert segments(tmp_path / "other.db") > 1  # a dry run changes nothing
    mem.maintain()
    assert segments(tmp_path / "other.db") == 1
    mem.close()


def test_kept_views_are_the_ones_read_last_and_never_another_namespaces():
    from graphmem.store.views import DecodedViews, RecordView

    kept = DecodedViews(size=3)
    rows = {i: RecordView("memory", f'{{"text": "fact {i}"}}', i, 0, None, None) for i in "abcd"}
    kept.keep("x", [rows["a"], rows["b"], rows["c"]], since=kept.writes)
    found, missing = kept.views("x", ["a"], lambda ns, i: None)  # "a" read again: "b" is the oldest now
    assert [v.text for v in found.values()] == ["fact a"] and missing == []
    kept.keep("x", [rows["d"]], since=kept.writes)
    found, missing = kept.views("x", list("abcd"), lambda ns, i: None)
    assert sorted(found) == ["a", "c", "d"] and missing == ["b"]
    assert kept.views("y", ["a"], lambda ns, i: None) == ({}, ["a"])
    since = kept.writes
    kept.drop("x", ["z"])  # a write meanwhile: what was read before it is not kept
    kept.keep("x", [rows["b"]], since=since)
    assert kept.views("x", ["b"], lambda ns, i: (2, None))[1] == ["b"]
