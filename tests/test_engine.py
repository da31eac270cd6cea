"""The Memory facade: writes, recall, context, editing, history, export/import, bad input."""

from __future__ import annotations

import io
import json
import os
import signal
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from graphmem import (
    GraphMemError, ImportFormatError, Memory, NotFoundError, RecallOptions, ValidationError,
)
from graphmem import embed
from graphmem.models import EdgeType, Status
from graphmem.settings import ScoreWeights, Settings


def test_messages_are_searchable_at_once(mem):
    msgs = mem.add_messages("s1", [
        {"role": "user", "speaker": "Ann", "content": "My dentist appointment is on Friday at 3pm"},
        {"role": "assistant", "content": "I'll remind you on Thursday."},
        "I also need to buy oat milk",
    ])
    assert [m.seq for m in msgs] == [0, 1, 2] and msgs[2].role == "user"
    top = mem.recall("when is the dentist appointment?", k=1)[0]
    assert top.item.id == msgs[0].id and top.layer == "message"
    assert set(top.matched_by) >= {"vector", "keyword"}
    more = mem.add_messages("s1", ["one more turn"])
    assert more[0].seq == 3
    assert mem.get("s1").message_count == 4


def test_messages_with_known_ids_are_not_duplicated(mem):
    mem.add_messages("s", [{"id": "m1", "content": "hello world"}])
    assert mem.add_messages("s", [{"id": "m1", "content": "hello world"}]) == []
    assert mem.stats()["message"] == 1


def test_messages_are_tagged_with_entities_and_keywords(mem):
    m = mem.add_messages("s", ["Alice moved to Berlin to work for Google", "我的同事王小明在北京工作"])
    assert {"Alice", "Berlin", "Google"} <= set(m[0].entities)
    assert {"王小明", "北京"} <= set(m[1].entities)
    assert "berlin" in m[0].keywords and "北京" in m[1].keywords


def test_a_turn_is_a_sure_record_of_what_was_said(mem):
    # a memory read from a turn does not outrank the turn on confidence alone; a turn stored at
    # the old 0.5 reads the same
    said = mem.add_messages("s", [{"role": "user", "content": "I moved to Lyon"},
                                  {"role": "assistant", "content": "Lyon is lovely"}])
    assert [m.confidence for m in said] == [1.0, 1.0]
    assert [m.confidence for m in mem.store.get("default", [m.id for m in said])] == [1.0, 1.0]
    assert type(said[0]).model_validate({**said[0].model_dump(), "confidence": 0.5}).confidence == 1.0
    assert mem.add_episode("a chat about Lyon", message_ids=[said[0].id]).confidence == 1.0  # a person wrote it


def test_remember_builds_entities_relations_and_provenance(mem):
    msg = mem.add_messages("s", ["I'm Ann and I work at Initech"])[0]
    rec = mem.remember("Ann works at Initech", subject="Ann", predicate="works_at", object="Initech",
                       source_message_ids=[msg.id], source="inferred")
    assert rec.confidence == 0.7 and rec.source_message_ids == [msg.id]
    edges = mem.store.edges("default", [rec.id])
    assert {e.type for e in edges} == {EdgeType.MENTIONS, EdgeType.DERIVED_FROM}
    hood = mem.neighbourhood("ann")
    assert hood.entity.name == "Ann" and [e.name for e in hood.entities] == ["Initech"]
    assert [(r.predicate, r.memory_id) for r in hood.relations] == [("works_at", rec.id)]
    assert [m.id for m in hood.memories] == [rec.id]
    again = mem.remember("Ann likes Initech's cafeteria", entities=[{"name": "ANN"}, {"name": "Initech"}])
    assert mem.stats()["entity"] == 2  # names resolve to the same entities
    assert again.entities == ["ANN", "Initech"]


def test_remember_rejects_unknown_provenance_and_writes_nothing(mem):
    mem.add_messages("s", ["x y z"])
    with pytest.raises(NotFoundError):
        mem.remember("a fact", source_message_ids=["msg_missing"])
    assert mem.stats().get("memory", 0) == 0


def test_graph_expansion_reaches_multi_hop_facts(mem):
    mem.remember("Carol is Dave's manager", subject="Carol", predicate="manages", object="Dave")
    pref = mem.remember("Carol prefers green tea", subject="Carol", predicate="prefers", object="green tea")
    for i in range(30):  # distractors that look alike
        mem.remember(f"Employee number {i} drinks coffee every morning")
    hits = mem.recall("What does Dave's manager like to drink?", k=5)
    found = next(h for h in hits if h.item.id == pref.id)
    assert "graph" in found.matched_by and found.breakdown.graph > 0


def test_correction_supersedes_and_keeps_history(mem):
    old = mem.remember("Ann prefers tea", subject="Ann", predicate="prefers", object="tea", category="preference")
    new = mem.update(old.id, text="Ann prefers coffee", object="coffee", reason="changed her mind")
    assert new.id != old.id
    assert mem.get(old.id).status is Status.superseded and mem.get(old.id).invalid_at is not None
    ids = [s.item.id for s in mem.recall("what does Ann prefer to drink", k=10)]
    assert new.id in ids and old.id not in ids
    ids_all = [s.item.id for s in mem.recall("what does Ann prefer to drink", k=10, include_superseded=True)]
    assert old.id in ids_all
    h = mem.history(new.id)
    assert [m.id for m in h.supersedes] == [old.id] and h.superseded_by == [] and h.reasons[new.id] == "changed her mind"
    assert [m.id for m in mem.history(old.id).superseded_by] == [new.id]
    third = mem.update(new.id, text="Ann prefers matcha", object="matcha")
    assert [m.id for m in mem.history(third.id).supersedes] == [old.id, new.id]
    rels = {(r.target_id, r.invalid_at is None) for r in mem.neighbourhood("Ann").relations}
    assert sum(1 for _, open_ in rels if open_) == 1  # only the newest relation is still valid
    with pytest.raises(ValidationError):
        mem.update(old.id, text="editing a superseded version")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_corrected_text_changes_the_whole_fact_and_marks_the_turns_that_said_the_old_value(gmem, lang):
    said, old_text, new_text, value = {
        "en": ("I prefer green tea in the morning.", "Ana prefers green tea", "Ana prefers oolong now", "oolong"),
        "zh": ("我早上喜欢喝绿茶。", "安娜喜欢绿茶", "安娜现在喜欢乌龙茶", "乌龙茶"),
    }[lang]
    subject, obj = ("Ana", "green tea") if lang == "en" else ("安娜", "绿茶")
    turns = gmem.add_messages("s", [{"role": "user", "speaker": subject, "content": said},
                                    {"role": "user", "speaker": "Bo", "content": said}])  # Bo's stays his
    old = gmem.remember(old_text, subject=subject, predicate="prefers", object=obj)
    new = gmem.update(old.id, text=new_text)
    assert (new.subject, new.predicate, new.object) == (subject, "prefers", value)
    ana, bo = gmem.get(turns[0].id), gmem.get(turns[1].id)
    assert ana.superseded_by is not None and ana.superseded_by.memory_id == new.id and bo.superseded_by is None
    block = gmem.context("What does Ana drink?" if lang == "en" else "安娜喝什么？", budget=400).text
    assert new_text in block and all(f"{said}" not in line or "superseded" in line
                                     for line in block.splitlines() if subject in line), block
    gone = gmem.update(new.id, text="Ana stopped drinking tea" if lang == "en" else "安娜不喝茶了")
    assert gone.object is None and gone.predicate is None  # what the text no longer says is cleared
    set_by_hand = gmem.update(gone.id, object="water", predicate="drinks")
    assert (set_by_hand.subject, set_by_hand.predicate, set_by_hand.object) == (subject, "drinks", "water")


def test_update_in_place_for_scalar_fields(mem):
    rec = mem.remember("Ann's badge number is 42")
    same = mem.update(rec.id, importance=0.9, category="identity", metadata={"k": 1})
    assert same.id == rec.id and same.importance == 0.9 and same.category == "identity"
    assert mem.history(rec.id).supersedes == []
    archived = mem.update(rec.id, status="archived")
    assert archived.status is Status.archived
    assert rec.id not in [s.item.id for s in mem.recall("badge number", k=5)]
    assert rec.id in [s.item.id for s in mem.recall("badge number", k=5, include_archived=True)]
    with pytest.raises(ValidationError):
        mem.update(rec.id)
    with pytest.raises(ValidationError):
        mem.update(rec.id, importance=2.0)
    with pytest.raises(ValidationError):
        mem.update(rec.id, colour="red")


def test_forget_removes_everything(mem):
    rec = mem.remember("Zed owns a red bicycle", subject="Zed", predicate="owns", object="red bicycle")
    assert mem.forget(rec.id) == 1
    with pytest.raises(NotFoundError):
        mem.get(rec.id)
    assert rec.id not in [s.item.id for s in mem.recall("Zed red bicycle", k=10)]
    assert mem.store.edges("default", [rec.id], direction="both") == []
    with pytest.raises(NotFoundError):  # the entities only it named went with it
        mem.neighbourhood("Zed")
    with pytest.raises(NotFoundError):
        mem.forget(rec.id)


def test_recall_scores_carry_breakdown_and_weights_apply(mem):
    mem.remember("The launch is on May 3", importance=0.9)
    mem.remember("The launch party has pizza", importance=0.1)
    items = mem.recall("when is the launch", k=2)
    for s in items:
        b = s.breakdown
        w = ScoreWeights()
        expect = (w.relevance * b.relevance + w.importance * b.importance + w.confidence * b.confidence
                  + w.recency * b.recency + w.frequency * b.frequency)
        assert s.score == pytest.approx(expect, abs=1e-5) == pytest.approx(b.total, abs=1e-5)
        assert 0 <= b.relevance <= 1 and 0 <= b.recency <= 1 and 0 <= b.frequency < 1
    only_importance = RecallOptions(weights=ScoreWeights(relevance=0, importance=1, confidence=0, recency=0, frequency=0))
    ranked = mem.recall("launch", k=2, options=only_importance)
    assert [s.item.importance for s in ranked] == [0.9, 0.1]
    with pytest.raises(ValueError):
        ScoreWeights(relevance=0.9)


def test_recall_records_access(mem):
    rec = mem.remember("The wifi password is hunter2")
    for _ in range(3):
        mem.recall("wifi password", k=1)
    got = mem.get(rec.id)
    assert got.access_count == 3 and got.last_accessed_at is not None
    assert mem.recall("wifi password", k=1)[0].breakdown.frequency > 0


def test_layers_do_not_crowd_each_other_out(mem):
    mem.add_messages("s", [f"we talked about the garden project again, part {i}" for i in range(40)])
    ep = mem.add_episode("Planned the garden project: raised beds, tomatoes, drip irrigation", session_id="s")
    proc = mem.add_procedure("water the garden", ["check soil moisture", "run drip irrigation 20 minutes"])
    layers = {s.layer for s in mem.recall("garden project", k=5)}
    assert {"message", "episode", "procedure"} <= layers
    ids = [s.item.id for s in mem.recall("garden", k=5, layers=["episode", "procedure"])]
    assert set(ids) == {ep.id, proc.id}


def test_episodes_link_messages_memories_and_previous_episode(mem):
    msgs = mem.add_messages("s", ["we fixed the build", "and shipped 1.2"])
    fact = mem.remember("Version 1.2 shipped", source_message_ids=[msgs[1].id])
    first = mem.add_episode("Fixed the build", session_id="s", message_ids=[msgs[0].id])
    second = mem.add_episode("Shipped 1.2", session_id="s", message_ids=[msgs[1].id], memory_ids=[fact.id])
    assert second.previous_episode_id == first.id
    types = {(e.type, e.target) for e in mem.store.edges("default", [first.id, second.id])}
    assert (EdgeType.NEXT, second.id) in types and (EdgeType.PRODUCED, fact.id) in types
    assert (EdgeType.COVERS, msgs[0].id) in types
    with pytest.raises(NotFoundError):
        mem.add_episode("bad", message_ids=[fact.id])  # a memory is not a message


def test_list_filters(mem):
    a = mem.remember("Ann likes jazz", entities=[{"name": "Ann", "type": "person"}], category="preference")
    b = mem.remember("Bob likes rock", entities=[{"name": "Bob", "type": "person"}])
    mem.update(b.id, text="Bob likes metal")
    assert [m.id for m in mem.list(entity="Ann")] == [a.id]
    assert [m.text for m in mem.list(status="superseded")] == ["Bob likes rock"]
    assert [m.id for m in mem.list(category="preference")] == [a.id]
    future = datetime.now(timezone.utc) + timedelta(days=1)
    assert mem.list(since=future) == []
    assert len(mem.list(until=future)) == 3
    assert {e.name for e in mem.list("entity")} == {"Ann", "Bob"}
    with pytest.raises(ValidationError):
        mem.list("gizmo")
    with pytest.raises(ValidationError):
        mem.list(status="lost")
    with pytest.raises(NotFoundError):
        mem.list(entity="Nobody")


def test_context_order_budget_and_timings(mem):
    mem.set_soul("You are Ann's assistant.")
    mem.add_messages("chat", ["Let's plan the trip to Lisbon", "Sure, when do you want to go?", "In June, for a week"])
    mem.set_summary("chat", "Ann is planning a one-week trip to Lisbon in June.")
    mem.remember("Ann is afraid of flying", importance=0.9)
    mem.add_episode("Ann booked a hotel in Lisbon's Alfama district", session_id="old")
    mem.add_procedure("book a flight", ["compare prices", "pick an aisle seat", "pay with the travel card"])
    ctx = mem.context("help me book the Lisbon trip flight", budget=400, session_id="chat")
    names = [s.name for s in ctx.sections]
    assert names == ["soul", "memories", "episodes", "procedures", "recent", "summary"]
    order = [ctx.text.index(h) for h in ("## Identity", "## Memories", "## Episodes", "## Procedures",
                                         "## Recent conversation", "## Session summary")]
    assert order == sorted(order)
    assert ctx.tokens <= 400 and ctx.tokens == mem.counter.count(ctx.text)
    assert {"embed", "candidates", "score", "assemble", "total"} <= set(ctx.timings_ms)
    recent_ids = next(s for s in ctx.sections if s.name == "recent").item_ids
    assert not set(recent_ids) & {s.item.id for s in ctx.items}  # no turn twice
    small = mem.context("help me book the Lisbon trip flight", budget=40, session_id="chat")
    assert small.tokens <= 40 and small.text.startswith("## Identity")
    assert "## Recent" not in mem.context("x", session_id="nope").text  # a session not started yet: nothing recent
    with pytest.raises(ValidationError, match="not a session"):
        mem.context("x", session_id=mem.remember("a memory, not a session").id)


def test_unknown_ids_raise_clear_errors(mem):
    mem.remember("something")
    with pytest.raises(NotFoundError):
        mem.get("mem_nope")
    with pytest.raises(NotFoundError):
        mem.history("mem_nope")
    with pytest.raises(ValidationError):
        mem.recall("x", namespace="bad namespace!")


@pytest.mark.parametrize("bad", ["", "   ", "x" * 20_001, None, 5])
def test_bad_text_is_refused_and_nothing_is_written(mem, bad):
    if bad not in ("", "   ", None):  # an empty turn is a turn (kept as sent); an empty memory says nothing
        with pytest.raises(ValidationError):
            mem.add_messages("s", ["fine", {"content": bad}])
    with pytest.raises(ValidationError):
        mem.remember(bad)
    assert mem.namespaces() == []


def test_bad_inputs_more(mem):
    with pytest.raises(ValidationError):
        mem.add_messages("", ["x"])
    with pytest.raises(ValidationError):
        mem.add_messages("s", [])
    with pytest.raises(ValidationError):
        mem.add_messages("s", [{"content": "x", "role": "robot"}])
    with pytest.raises(ValidationError):
        mem.remember("x", importance=float("nan"))
    with pytest.raises(ValidationError):
        mem.remember("x", bogus=1)
    mem.remember("ok")
    with pytest.raises(ValidationError):
        mem.recall("")
    with pytest.raises(ValidationError):
        mem.recall("x", k=0)
    with pytest.raises(ValidationError):
        mem.recall("x", layers=["nope"])
    with pytest.raises(GraphMemError):  # every error is in graphmem's tree
        mem.context("x", budget=3)


def test_tenants_never_see_each_other(mem):
    mem.remember("Tenant A's launch code is 1234", namespace="tenant-a")
    mem.add_messages("s", ["tenant B talks about launch codes"], namespace="tenant-b")
    mem.remember("Tenant B's launch code is 9999", namespace="tenant-b")
    for ns, other in (("tenant-a", "9999"), ("tenant-b", "1234")):
        texts = " ".join(s.text for s in mem.recall("launch code", k=50, namespace=ns))
        assert other not in texts
        assert other not in mem.context("launch code", namespace=ns).text


def test_a_tenants_keyword_ranking_is_its_own(mem):
    # BM25 weighs a term by how rare it is among the tenant's own documents: another tenant
    # writing "orchid" a hundred times must not make it common here (FTS5's bm25() alone counts
    # the whole file)
    ids = {text: mem.remember(text, namespace="a", entities=[]).id
           for text in ("orchid ledger", "walnut ledger", "walnut harbour")}

    def ranked():
        return mem.store.keyword_search("a", "memory", "orchid walnut", 3, [Status.active])

    alone = ranked()
    assert alone[0][0] == ids["orchid ledger"]  # orchid is in one of three, walnut in two
    mem.remember_many([{"text": "orchid pebble", "entities": []}] * 100 + [{"text": "pebble gravel", "entities": []}] * 100,
                      namespace="b")  # two words each, as here: the length normalisation is file-wide
    beside = ranked()
    assert [i for i, _ in beside] == [i for i, _ in alone]
    assert [s for _, s in beside] == pytest.approx([s for _, s in alone], rel=1e-6)


def test_reopen_restores_recall(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path) as m:
        rec = m.remember("Ann's cat is called Miso", subject="Ann", predicate="has_cat", object="Miso")
        m.add_messages("s", ["Miso knocked over a plant"])
    with Memory(path) as m:
        assert m.recall("what is the name of Ann's cat", k=1)[0].item.id == rec.id
        assert m.neighbourhood("Miso").memories[0].id == rec.id


def test_export_import_round_trip_is_lossless(mem, tmp_path):
    msgs = mem.add_messages("s", ["Ann likes tea", "我喜欢喝茶"])
    old = mem.remember("Ann likes tea", subject="Ann", predicate="likes", object="tea", source_message_ids=[msgs[0].id])
    mem.update(old.id, text="Ann likes coffee", object="coffee")
    mem.add_episode("Talked about drinks", session_id="s", message_ids=[m.id for m in msgs])
    mem.add_procedure("make tea", ["boil", "steep"])
    mem.set_soul("be nice")
    mem.recall("tea", k=3)
    buf = io.StringIO()
    lines = mem.export(buf)
    dump = buf.getvalue()
    assert lines == len(dump.splitlines()) - 1
    with Memory(tmp_path / "copy.db") as other:
        report = other.import_(dump.splitlines())
        assert report["errors"] == []
        for kind in ("session", "message", "memory", "entity", "episode", "procedure"):
            a = [n.model_dump() for n in mem.list(kind, limit=1000)]
            b = [n.model_dump() for n in other.list(kind, limit=1000)]
            assert a == b, kind
        ids = [n.id for k in ("memory", "message", "episode", "procedure") for n in mem.list(k, limit=1000)]
        va, vb = mem.store.vectors("default", ids), other.store.vectors("default", ids)
        assert va.keys() == vb.keys() and all(np.array_equal(va[i], vb[i]) for i in va)
        assert sorted(e.model_dump_json() for e in mem.store.edges("default", ids, direction="both")) == \
            sorted(e.model_dump_json() for e in other.store.edges("default", ids, direction="both"))
        assert other.store.get_meta("default", "soul") == "be nice"
        buf2 = io.StringIO()
        other.export(buf2)
        assert buf2.getvalue() == dump


def test_import_reports_bad_lines_by_number(mem, tmp_path):
    mem.remember("Ann likes tea")
    mem.remember("Bob likes rock")
    buf = io.StringIO()
    mem.export(buf, vectors=False)
    lines = buf.getvalue().splitlines()
    broken = lines[:2] + ["{not json", json.dumps({"node": {"kind": "memory", "text": ""}})] + lines[2:]
    with Memory(tmp_path / "other.db") as other:
        with pytest.raises(ImportFormatError) as info:
            other.import_(broken)
        assert info.value.line == 3 and "line 4" in str(info.value) and "nothing imported" in str(info.value)
        assert other.namespaces() == []
        report = other.import_(broken, skip_invalid=True)
        assert [e["line"] for e in report["errors"]] == [3, 4]
        assert {m.text for m in other.list()} == {"Ann likes tea", "Bob likes rock"}
        assert other.recall("tea", k=1)[0].text == "Ann likes tea"  # vectors re-computed


def test_from_settings_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHMEM_PATH", str(tmp_path / "env.db"))
    monkeypatch.setenv("GRAPHMEM_RECALL__GRAPH_DEPTH", "1")
    with Memory.from_settings() as m:
        assert m.settings.recall.graph_depth == 1
        m.remember("hello")
    assert (tmp_path / "env.db").exists()
    monkeypatch.setenv("GRAPHMEM_EMBEDDER", "word2vec")
    with pytest.raises(GraphMemError):
        Memory.from_settings()


def test_deferred_enrichment_for_bulk_ingestion(tmp_path):
    path = tmp_path / "bulk.db"
    texts = [f"Priya Patel booked flight number {i} to Oslo" for i in range(300)] + ["the red umbrella is in the hall"]
    with Memory(path, settings=Settings(enrichment="manual")) as m:  # nothing runs until flush()
        msgs = m.add_messages("bulk", texts, wait=False)
        assert m.pending() == len(texts)
        hit = m.recall("umbrella", k=1, layers=["message"])[0]  # keyword-searchable on return
        assert hit.item.id == msgs[-1].id and hit.matched_by == ["keyword"]
    with Memory(path) as m:  # pending work survived the restart
        assert m.pending() == len(texts)
        m.flush(timeout=120)
        assert m.pending() == 0
        hit = m.recall("where did I leave my rain gear?", k=1, layers=["message"])[0]
        assert hit.item.id == msgs[-1].id and "vector" in hit.matched_by
        assert "Priya Patel" in m.get(msgs[0].id).entities
        m.add_messages("bulk", ["one more deferred line"], wait=False)
        m.flush(timeout=60)
        assert m.pending() == 0


def test_recall_can_read_without_counting_a_use(mem):
    rec = mem.remember("The office plant needs water on Mondays")
    mem.recall("office plant", k=1, record_access=False)
    assert mem.get(rec.id).access_count == 0


def test_ids_and_sessions_in_any_script(mem):
    msgs = mem.add_messages("介绍", [{"id": "消息-1", "content": "你好"}])
    assert mem.get("介绍").message_count == 1 and msgs[0].id == "消息-1"
    with pytest.raises(ValidationError):
        mem.add_messages("s", [{"id": "bad id with spaces", "content": "x"}])


def test_an_answer_borrows_relevance_from_the_question_before_it(mem):
    mem.add_messages("s", [
        {"speaker": "Ann", "content": "What did you cook for the potluck on Saturday?"},
        {"speaker": "Ben", "content": "A big pot of lentil curry with rice."},
        {"speaker": "Ann", "content": "Nice, my cat slept all afternoon."},
    ])
    # no time boost: asked on a Saturday, "on Saturday" is today, when all three turns were said
    hits = mem.recall("What was cooked for the potluck on Saturday?", k=3, layers=["message"],
                      options=RecallOptions(time_boost=0.0))
    answer = next(h for h in hits if "lentil" in h.text)
    assert answer.breakdown.context > 0
    # the remark after the answer is no answer to anything: it borrows nothing from the curry
    remark = next(h for h in mem.recall("Who made the lentil curry?", k=3, layers=["message"],
                                        options=RecallOptions(session_prior=0.0, min_relevance=0.0)) if "cat" in h.text)
    assert remark.breakdown.context == 0
    off = RecallOptions(neighbour_turns=0.0, session_prior=0.0, time_boost=0.0)
    assert next(h for h in mem.recall("What was cooked for the potluck on Saturday?", k=3, layers=["message"], options=off)
                if "lentil" in h.text).breakdown.context == 0


def test_blas_threads_are_limited_only_when_asked(tmp_path, monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits

    from graphmem.cli.serve import serving_settings

    def blas() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    with threadpool_limits(limits=None):  # puts the process back as it was when the block ends
        before = blas()
        Memory(tmp_path / "a.db").close()
        assert blas() == before  # a library user's process is left as it is
        Memory(tmp_path / "b.db", settings=Settings(blas_threads=1)).close()
        assert blas() == {1}
        # with one BLAS thread a large product is split over the cores by graphmem itself
        mat = np.random.default_rng(0).normal(size=(4099, 512)).astype(np.float32)  # blocks of unequal rows
        v = mat[7]
        assert embed._blocks or len(os.sched_getaffinity(0)) == 1
        assert np.allclose(embed.matvec(mat, v), mat @ v, rtol=1e-5, atol=1e-5)
        assert np.allclose(embed.matvec(mat[:10], v), mat[:10] @ v)  # small: one call
        if hasattr(os, "fork"):  # a forked child (a pre-fork server) has no worker threads of its parent's
            child = os.fork()
            if child == 0:
                signal.alarm(20)  # a product waiting for threads that do not exist would hang here
                os._exit(0 if np.allclose(embed.matvec(mat, v), mat @ v, rtol=1e-5, atol=1e-5) else 1)
            assert os.waitpid(child, 0)[1] == 0
    embed.limit_blas(max(before))  # and graphmem's blocks with it
    assert not embed._blocks or max(before) == 1
    monkeypatch.delenv("GRAPHMEM_BLAS_THREADS", raising=False)
    assert serving_settings().blas_threads == 1  # graphmem serve and mcp: one thread
    monkeypatch.setenv("GRAPHMEM_BLAS_THREADS", "2")
    assert serving_settings().blas_threads == 2


def test_the_heap_is_frozen_only_when_asked(tmp_path, monkeypatch):
    import gc

    from graphmem.cli.serve import serving_settings
    from graphmem.engine import memory as engine

    freezes: list[int] = []  # counted at the call: the frozen set's size moves as frozen temporaries die
    real = engine.freeze_heap
    monkeypatch.setattr(engine, "freeze_heap", lambda: (freezes.append(1), real()))
    try:
        gc.unfreeze()
        with Memory(tmp_path / "a.db") as mem:
            mem.remember("Ann likes tea")
            mem.recall("What does Ann like?")
            assert freezes == []  # a library user's process is left as it is
        with Memory(tmp_path / "b.db", settings=Settings(gc_freeze=True)) as mem:
            mem.remember("Ann likes tea")
            assert freezes == []  # not before the first recall has loaded the models
            mem.recall("What does Ann like?")
            assert freezes == [1] and gc.get_freeze_count() > 0
            mem.recall("What does Ann like?")
            assert freezes == [1]  # once
    finally:
        gc.unfreeze()
    monkeypatch.delenv("GRAPHMEM_GC_FREEZE", raising=False)
    assert serving_settings().gc_freeze  # graphmem serve and mcp own their process
    monkeypatch.setenv("GRAPHMEM_GC_FREEZE", "false")
    assert not serving_settings().gc_freeze
