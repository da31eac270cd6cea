"""The conversation as a graph and the recall that uses it, on every backend: the log's shape
(HAS_MESSAGE, NEXT, SAID, MENTIONS with dictionary links), graph paths in breakdowns,
conversation context, turn-level provenance and superseded values that never read as current."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from graphmem.extract.schema import ExtractedMemory, parse_wire
from graphmem.lifecycle.builders import restates
from graphmem.lifecycle.admission import source_turns
from graphmem.models import EdgeType, MemoryRecord, Message, Session, Status
from graphmem.retrieve import relevance
from graphmem.retrieve.walk import person_relations
from graphmem.settings import RecallFilter, RecallOptions
from graphmem.text import time_span



def edges_of(mem, ids, etype, direction="out"):
    return mem.store.edges("default", ids, types=[etype], direction=direction)


def test_the_log_is_a_graph_and_known_names_are_always_linked(gmem):
    first = gmem.add_messages("s1", [
        {"speaker": "Caroline", "content": "I went to a support group with Melanie Ortiz yesterday."},
        {"speaker": "Melanie", "content": "That sounds lovely!"},
    ])
    later = gmem.add_messages("s1", [  # a later batch, and one enriched by the background thread
        {"speaker": "Caroline", "content": "melanie ortiz, you should come next time."},
    ])
    deferred = gmem.add_messages("s1", [{"speaker": "Melanie", "content": "我下周去北京大学, then maybe, Caroline."}],
                                 wait=False)
    gmem.flush()
    turns = [*first, *later, *deferred]
    ids = [m.id for m in turns]
    assert {e.target for e in edges_of(gmem, ["s1"], EdgeType.HAS_MESSAGE)} == set(ids)
    chain = {(e.source, e.target) for e in edges_of(gmem, ids, EdgeType.NEXT)}
    assert chain == set(zip(ids, ids[1:]))  # one chain across three calls
    said = {e.target: e.source for e in edges_of(gmem, ids, EdgeType.SAID, "in")}
    speakers = {n.id: n for n in gmem.store.get("default", list(set(said.values())))}
    # "Melanie" speaks after "Melanie Ortiz" was named: the one person of that first name is her
    assert {speakers[said[m.id]].name for m in turns} == {"Caroline", "Melanie Ortiz"}
    assert all(s.type == "person" for s in speakers.values())
    mentions = {}
    for e in edges_of(gmem, ids, EdgeType.MENTIONS):
        mentions.setdefault(e.source, set()).add(e.target)
    ortiz = next(iter(gmem.store.find_entities("default", ["Melanie Ortiz"]).values()))
    assert ortiz.id in mentions[ids[0]] and ortiz.id in mentions[ids[2]]  # lower case: the dictionary found it
    caroline = next(i for i, s in speakers.items() if s.name == "Caroline")
    assert caroline in mentions[ids[3]]  # a deferred turn is linked too, by name
    assert "北京大学" in " ".join(gmem.get(ids[3]).entities)


def test_graph_hits_are_evidence_with_the_path_that_found_them(gmem):
    gmem.remember("Carol is Dave's manager", subject="Carol", predicate="manages", object="Dave")
    pref = gmem.remember("Carol prefers green tea", subject="Carol", predicate="prefers", object="green tea")
    for i in range(30):  # distractors that share a word with the question
        gmem.remember(f"Employee number {i} drinks coffee every morning")
    hits = gmem.recall("What does Dave's manager like to drink?", k=5)
    found = next(h for h in hits if h.item.id == pref.id)
    assert "graph" in found.matched_by and found.breakdown.path == "mentions Dave <-manages- Carol"
    # without the graph (and feedback, which moves the query towards the manager fact) the answer is
    # buried under the distractors
    flat = RecallOptions(graph_candidates=0, feedback=0.0)
    assert pref.id not in [h.item.id for h in gmem.recall("What does Dave's manager like to drink?", k=5,
                                                           options=flat)]
    # a graph hit never outranks a clearly better text match: the manager fact itself leads
    assert hits[0].text == "Carol is Dave's manager"


def test_naming_whom_the_whole_namespace_is_about_is_weak_evidence(gmem):
    # seen on LoCoMo: in a chat between two people every memory mentions one of them, and a flat
    # graph score of 1.0 for "mentions Jon" put "Jon thanks Gina" above the turn that answers
    for topic in ("dance studio", "banking job", "trip to Paris", "new shoes", "marketing class", "his students",
                  "the competition", "a photo", "the weekend", "a video"):
        gmem.remember(f"Jon talked about {topic}", entities=[{"name": "Jon", "type": "person"}])
    rare = gmem.remember("Jon met Zephyra at the gallery", entities=[{"name": "Jon", "type": "person"},
                                                                    {"name": "Zephyra", "type": "person"}])
    hits = {h.item.id: h for h in gmem.recall("Did Jon see Zephyra?", k=20)}
    common = [h.breakdown.graph for i, h in hits.items() if i != rare.id and "graph" in h.matched_by]
    assert common and max(common) < 0.5 < hits[rare.id].breakdown.graph  # Zephyra is one memory's, Jon everyone's
    assert hits[rare.id].breakdown.path == "mentions Zephyra"


def test_keyword_scores_are_comparable_across_layers(gmem):
    # seen on LoCoMo with extraction: BM25 scaled by each layer's own best hit rated a memory that
    # shares one common word with the query as highly as the turn that has all of it
    turn = gmem.add_messages("s", ["We adopted a golden retriever puppy named Biscuit from the shelter."])[0]
    weak = gmem.remember("The shelter is closed on Mondays")
    hits = {h.item.id: h for h in gmem.recall("golden retriever puppy Biscuit shelter", k=5,
                                              filter=RecallFilter.READ_ONLY)}
    assert hits[turn.id].breakdown.keyword == pytest.approx(1.0)
    assert hits[weak.id].breakdown.keyword < 0.5
    alone = gmem.recall("golden retriever puppy Biscuit shelter", k=5, layers=["memory"], filter=RecallFilter.READ_ONLY)
    assert alone[0].item.id == weak.id and alone[0].breakdown.keyword > 0.7  # alone, it is the best there is


def test_turns_by_the_person_asked_about_and_answers_to_questions(gmem):
    gmem.add_messages("s", [
        {"speaker": "Ann", "content": "Any plans for the weekend?"},
        {"speaker": "Ben", "content": "Hiking up the ridge with my brother."},
        {"speaker": "Ann", "content": "I will spend the weekend painting."},
        {"speaker": "Ben", "content": "Nice, enjoy."},
    ])
    hits = gmem.recall("What will Ann do on the weekend?", k=4, layers=["message"])
    texts = [h.text for h in hits]
    painting = next(h for h in hits if "painting" in h.text)
    assert painting.breakdown.path == "said by Ann" and painting.breakdown.graph > 0
    assert texts.index(painting.text) < next(i for i, t in enumerate(texts) if "Hiking" in t)
    hiking = next(h for h in gmem.recall("What are the plans for the weekend?", k=4, layers=["message"])
                  if "Hiking" in h.text)
    assert hiking.breakdown.context > 0  # the answer borrows from its question


def test_adjacent_turns_are_fetched_along_next_edges(gmem):
    gmem.add_messages("s", [
        {"speaker": "Ann", "content": "Where did you go for the conference in spring?"},
        {"speaker": "Ben", "content": "Lisbon, and the food was excellent."},
    ])
    narrow = RecallOptions(vector_candidates=1, keyword_candidates=1, session_prior=0.0)
    hits = gmem.recall("Where was the conference in spring?", k=2, layers=["message"], options=narrow)
    answer = next(h for h in hits if "Lisbon" in h.text)
    assert answer.matched_by == ["context"] and answer.breakdown.context > 0
    # a query that states something looks for the turn that says it: nothing is borrowed
    stated = gmem.recall("the conference in spring", k=2, layers=["message"], options=narrow)
    assert all(h.breakdown.context == 0 for h in stated) and not any("Lisbon" in h.text for h in stated)


def test_feedback_moves_the_query_towards_its_best_hit(gmem):
    # the answer shares no word and little meaning with the question; it shares much with the best
    # hit (LoCoMo: "What video games does Nate play?" -> the Valorant final)
    gmem.add_messages("s", [
        {"speaker": "Joanna", "content": "How was your weekend?"},
        {"speaker": "Nate", "content": "I spent most of it gaming online with friends, my favourite way to relax."},
        {"speaker": "Joanna", "content": "I went hiking by the lake and read a novel."},
        {"speaker": "Nate", "content": "My team reached the final of the Valorant tournament last night!"},
        {"speaker": "Nate", "content": "I adopted a turtle, he loves lettuce."},
        {"speaker": "Nate", "content": "I am cooking coconut ice cream for the party."},
    ])
    query = "What video games does Nate play?"

    def ask(q, **options):
        return gmem.recall(q, k=6, layers=["message"], filter=RecallFilter.READ_ONLY, options=RecallOptions(**options))

    def semantic(hits, word):
        return next(h.breakdown.semantic for h in hits if word in h.text)

    off, on = ask(query, feedback=0.0), ask(query)
    assert off[0].item.id == on[0].item.id and "gaming" in on[0].text
    assert semantic(off, "Valorant") < semantic(off, "turtle") and semantic(on, "Valorant") > semantic(on, "turtle")
    # every cosine is to the query moved by the best hit's vector: q + 1.0 * v, normalised; the
    # seed keeps its cosine to the query as asked (to the moved one it is mostly itself)
    vectors = gmem.store.vectors("default", [h.item.id for h in on])
    asked = gmem.embedder.embed([query], query=True)[0]
    moved = asked + vectors[on[0].item.id]
    moved /= np.linalg.norm(moved)
    for h in on:
        to = asked if h.item.id == on[0].item.id else moved
        assert h.breakdown.semantic == pytest.approx(max(0.0, float(vectors[h.item.id] @ to)), abs=1e-4)
    # left alone: a statement, a query of one keyword, two questions (an answer to one is no
    # direction for the other), feedback off
    for q in ("gaming online with friends", "What about games?", "What video games does Nate play? What does he cook?"):
        assert [h.breakdown.semantic for h in ask(q)] == [h.breakdown.semantic for h in ask(q, feedback=0.0)]


def test_the_feedback_pass_ranks_the_query_s_nearest_again(gmem):
    """The second search by meaning is a shortlist: the first pass's vector hits and the next
    ``feedback_pool`` of them, ranked by the moved query (no second scan of the layer)."""
    for text in ("Nate spends his evenings gaming online with friends", "His team reached the final of the Valorant "
                 "tournament", "A turtle eats lettuce every morning", "Coconut ice cream for the party",
                 "Hiking by the lake on Sunday", "The console needs a new controller", "Paris in the spring is lovely"):
        gmem.remember(text)

    def ask(**options):
        hits = gmem.recall("What video games does Nate play?", k=7, layers=["memory"], filter=RecallFilter.READ_ONLY,
                           options=RecallOptions(vector_candidates=2, keyword_candidates=1, graph_candidates=0, **options))
        return {h.text.split()[1]: h.matched_by for h in hits}

    # room for two vector hits: the query's second is the console; the moved query's, the final
    assert ask(feedback=0.0) == {"spends": ["vector", "keyword"], "console": ["vector"]}
    assert ask(feedback_pool=0) == {"spends": ["vector", "keyword"], "console": ["vector"]}  # nothing to rank again
    assert ask() == {"spends": ["vector", "keyword"], "team": ["feedback"]}


def test_recall_items_report_the_turns_and_tokens_they_carry(gmem):
    msgs = gmem.add_messages("s", ["I moved to Porto in May.", "The weather there is mild."])
    mem = gmem.remember("The user lives in Porto", source_message_ids=[msgs[0].id])
    hits = {h.item.id: h for h in gmem.recall("Where does the user live? Porto", k=5)}
    assert hits[mem.id].turns == [msgs[0].id] and hits[msgs[0].id].turns == [msgs[0].id]
    assert all(h.tokens > 0 for h in hits.values())
    assert hits[mem.id].model_dump()["turns"] == [msgs[0].id]


def test_a_memory_is_as_recent_as_the_turns_it_was_said_in(gmem):
    # a conversation of a year ago, extracted today: its facts are a year old, not new
    year_ago = datetime.now(timezone.utc) - timedelta(days=365)
    old = gmem.add_messages("s", [{"content": "I moved to Porto in May.", "created_at": year_ago}])[0]
    derived = gmem.remember("The user lives in Porto", source_message_ids=[old.id])
    fresh = gmem.remember("The user lives near the river in Porto")
    assert derived.said_at == old.created_at and fresh.said_at is None
    assert gmem.get(derived.id).said_at == old.created_at  # stored on every backend
    hits = {h.item.id: h for h in gmem.recall("Porto", k=5, filter=RecallFilter.READ_ONLY)}
    assert hits[derived.id].breakdown.recency < 0.01 and hits[old.id].breakdown.recency < 0.01
    assert hits[fresh.id].breakdown.recency > 0.99


def test_a_superseded_value_never_reads_as_current(gmem):
    msgs = gmem.add_messages("s", [{"speaker": "Maya", "content": "I prefer TypeScript for all my side projects."},
                                   {"speaker": "Maya", "content": "The weather is nice."}])
    old = gmem.remember("Maya prefers TypeScript", subject="Maya", predicate="prefers_language", object="TypeScript",
                        source_message_ids=[msgs[0].id])
    later = gmem.add_messages("s", [{"speaker": "Maya", "content": "I now prefer Rust over TypeScript."}])
    new = gmem.update(old.id, text="Maya prefers Rust", object="Rust", source_message_ids=[later[0].id])
    stale = gmem.get(msgs[0].id)
    assert stale.superseded_by.memory_id == new.id and stale.superseded_by.text == "Maya prefers Rust"
    assert gmem.get(msgs[1].id).superseded_by is None and gmem.get(later[0].id).superseded_by is None
    hits = gmem.recall("Which language does Maya prefer for side projects?", k=10)
    order = [h.item.id for h in hits]
    assert order.index(new.id) < order.index(stale.id)
    # the old turn has more of the query's words ("side projects"), yet never reads as more relevant
    assert hits[order.index(stale.id)].breakdown.relevance <= hits[order.index(new.id)].breakdown.relevance
    ctx = gmem.context("Which language does Maya prefer for side projects?", budget=400)
    line = next(x for x in ctx.text.splitlines() if "TypeScript for all my side projects" in x)
    assert f"(superseded on {stale.superseded_by.at:%Y-%m-%d} by: Maya prefers Rust)" in line
    # what held then is still there to ask for
    then = gmem.recall("Maya language", k=10, as_of=old.valid_at + (new.valid_at - old.valid_at) / 2)
    assert old.id in [h.item.id for h in then]


def test_a_stale_turn_lends_nothing_to_the_fact_that_replaced_it(gmem):
    # seen in the demo: the superseded turn "Got it, TypeScript ... Anything I should know when I
    # suggest food?" matched a food question; the fact that replaced it is no answer to that
    msgs = gmem.add_messages("s", [
        {"speaker": "Maya", "content": "I use TypeScript for the tooling. Any ideas for snacks at the team lunch?"},
        {"speaker": "Maya", "content": "I am allergic to peanuts, so no peanut butter snacks."}])
    old = gmem.remember("Maya uses TypeScript for the tooling", subject="Maya", predicate="uses_language",
                        object="TypeScript", source_message_ids=[msgs[0].id])
    allergy = gmem.remember("Maya is allergic to peanuts", subject="Maya", predicate="allergic_to", object="peanuts",
                            source_message_ids=[msgs[1].id])
    new = gmem.update(old.id, text="Maya uses Rust for the tooling", object="Rust")
    assert gmem.get(msgs[0].id).superseded_by.memory_id == new.id
    order = [h.item.id for h in gmem.recall("Which snacks should Maya avoid at the team lunch?", k=10)]
    assert order.index(allergy.id) < order.index(new.id)


def test_turns_of_the_window_that_restate_an_old_value_are_marked_too(gmem):
    msgs = gmem.add_messages("s", [
        {"speaker": "Maya", "content": "I prefer TypeScript for all my side projects."},
        {"speaker": "assistant", "content": "Got it, TypeScript for your side projects."},  # not cited, restates it
        {"speaker": "Maya", "content": "TypeScript and Rust both have decent side project tooling."},  # names the new
        {"speaker": "Maya", "content": "TypeScript conferences are fun."},  # the value, about something else
    ])
    old = gmem.remember("Maya prefers TypeScript for side projects", subject="Maya", predicate="prefers_language",
                        object="TypeScript", source_message_ids=[msgs[0].id])
    episode = gmem.add_episode("Maya prefers TypeScript for her side projects.", session_id="s",
                               message_ids=[m.id for m in msgs], memory_ids=[old.id])
    assert gmem.get(old.id).episode_id == episode.id
    later = gmem.add_messages("s", [{"speaker": "Maya", "content": "I now prefer Rust over TypeScript."}])
    new = gmem.update(old.id, text="Maya prefers Rust for side projects", object="Rust",
                      source_message_ids=[later[0].id])
    marked = {i for i in [*(m.id for m in msgs), episode.id]
              if (n := gmem.get(i)).superseded_by is not None and n.superseded_by.memory_id == new.id}
    assert marked == {msgs[0].id, msgs[1].id, episode.id}
    ctx = gmem.context("Which language does Maya use for side projects?", budget=500)
    assert all("(superseded on " in x for x in ctx.text.splitlines() if "Got it, TypeScript" in x)


def test_relative_time_in_the_query_raises_items_from_then(gmem):
    now = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
    gmem.add_messages("a", [{"content": "Dinner at the harbour was fun.", "created_at": now - timedelta(days=14)}])
    gmem.add_messages("b", [{"content": "Dinner at the harbour was fun.", "created_at": now - timedelta(days=60)}])
    hits = gmem.recall("dinner at the harbour two weeks ago", k=2, layers=["message"],
                       filter=RecallFilter.READ_ONLY.model_copy(update={"asked_at": now}))
    assert hits[0].item.session_id == "a" and hits[0].breakdown.context > hits[1].breakdown.context


# plain functions ------------------------------------------------------------------------------
@pytest.mark.parametrize("query, inside, outside", [
    ("what did I cook yesterday", "2026-11-29T18:00", "2026-11-30T09:00"),
    ("two weeks ago", "2026-11-16T12:00", "2026-11-25T12:00"),
    ("last Wednesday", "2026-11-25T12:00", "2026-11-18T12:00"),
    ("in May 2023", "2023-05-20T12:00", "2023-06-02T12:00"),
    ("上周三我做了什么", "2026-11-25T12:00", "2026-11-26T12:00"),
    ("三天前", "2026-11-27T12:00", "2026-11-29T12:00"),
    ("去年", "2025-11-30T12:00", "2024-09-01T12:00"),
    ("What was Sam doing on December 4, 2023?", "2023-12-04T20:00", "2023-12-05T09:00"),
    ("What did Jolene ask Deb to help with on 13 March, 2023?", "2023-03-13T09:00", "2023-03-12T20:00"),
    ("What news did Evan share on 9th December 2023?", "2023-12-09T12:00", "2023-12-01T12:00"),
    ("the 1st of September", "2026-09-01T12:00", "2025-09-01T12:00"),  # no year: the last one before now
    ("what did I write on 2024-02-29", "2024-02-29T12:00", "2024-03-01T12:00"),
    ("我2023年5月18日做了什么", "2023-05-18T12:00", "2023-05-19T12:00"),
    ("五月十八号那天", "2026-05-18T12:00", "2026-05-01T12:00"),
])
def test_time_span_resolves_english_and_chinese(query, inside, outside):
    now = datetime(2026, 11, 30, 15, tzinfo=timezone.utc)  # a Monday
    span = time_span(query, now)
    at = {k: datetime.fromisoformat(v).replace(tzinfo=timezone.utc) for k, v in (("in", inside), ("out", outside))}
    assert span is not None and span[0] <= at["in"] < span[1] and not span[0] <= at["out"] < span[1]
    assert time_span("what is my favourite colour", now) is None


def test_a_number_after_may_is_a_date_only_when_it_reads_as_one():
    now = datetime(2026, 11, 30, 15, tzinfo=timezone.utc)
    assert time_span("I may 3D print it", now) is None
    assert time_span("two of us may 2 people bring", now) is None
    assert time_span("what happened on May 2nd", now)[0] == datetime(2026, 5, 2, tzinfo=timezone.utc)
    assert time_span("on February 30, 2023", now)[0] == datetime(2023, 2, 1, tzinfo=timezone.utc)  # no such day: the month


def _window() -> list[Message]:
    texts = [("Maya", "I switched teams. I now prefer Julia over Python."), ("assistant", "Got it, Julia."),
             ("Maya", "Also, I'm allergic to shellfish.")]
    return [Message(session_id="s", speaker=s, role="assistant" if s == "assistant" else "user", content=t, seq=i)
            for i, (s, t) in enumerate(texts)]


def test_restates_needs_the_old_value_its_topic_and_none_of_the_new():
    old = MemoryRecord(namespace="n", text="Alice lives in Berlin")
    new = MemoryRecord(namespace="n", text="Alice lives in Munich")
    assert restates("So Alice lives in Berlin now", old, new)
    assert not restates("Berlin is lovely in May", old, new)  # the value, about something else
    assert not restates("Alice moved from Berlin to Munich", old, new)  # says the new value too
    typed = old.model_copy(update={"object": "Berlin"})
    assert restates("Berlin, where Alice lives", typed, new.model_copy(update={"object": "Munich"}))


def test_provenance_takes_the_numbered_turn_when_the_text_agrees():
    msgs = _window()
    julia = ExtractedMemory(text="Maya prefers Julia", subject="Maya", object="Julia", turns=[1])
    assert source_turns(julia, msgs) == [msgs[0]]
    off_by_one = ExtractedMemory(text="Maya is allergic to shellfish", subject="Maya", object="shellfish", turns=[2])
    assert source_turns(off_by_one, msgs) == [msgs[2]]  # turn 2 says nothing of shellfish: the text decides
    unnumbered = ExtractedMemory(text="Maya is allergic to shellfish", subject="Maya", object="shellfish")
    assert source_turns(unnumbered, msgs) == [msgs[2]]
    vague = ExtractedMemory(text="She has had a busy week", turns=[9])
    assert source_turns(vague, msgs) == msgs  # nothing to go by: the window
    assert parse_wire({"m": [{"t": "Maya prefers Julia", "n": [1, "x", True, 3]}], "ep": ""}).memories[0].turns == [1, 3]


def test_session_records_the_tail_of_its_chain(gmem):
    msgs = gmem.add_messages("s", ["one", "two"])
    session = gmem.get("s")
    assert isinstance(session, Session) and session.last_message_id == msgs[-1].id
    assert gmem.get(msgs[0].id).status is Status.active


def test_a_name_alone_lifts_nothing_and_the_walk_goes_through_what_was_said(gmem):
    """Graph evidence raises an item in proportion to what its text says about the rest of the
    question, and a question about a person's relation is answered through the turn that names
    them: Marek -said-> a turn -mentions-> Olga Berg -said-> the answer."""
    gmem.add_messages("s", [
        {"speaker": "Marek", "content": "My sister Olga Berg is visiting next week."},
        {"speaker": "Marek", "content": "I need to fix the garage door before then."},
        {"speaker": "Marek", "content": "We usually grill on the balcony when guests come."},
        {"speaker": "Olga Berg", "content": "I play volleyball in a league every Sunday."},
    ])
    question = "Which sport does Marek's sister play?"
    hits = gmem.recall(question, k=4, layers=["message"], filter=RecallFilter.READ_ONLY)
    at = {next(w for w in ("sister", "garage", "balcony", "volleyball") if w in h.text): i for i, h in enumerate(hits)}
    assert at["volleyball"] < at["garage"] and at["volleyball"] < at["balcony"]
    answer = hits[at["volleyball"]]
    assert answer.breakdown.path == ("Marek -said-> 'My sister Olga Berg is visiting next week.' "
                                     "-mentions-> Olga Berg -said->")
    assert hits[at["garage"]].breakdown.graph == 0.0  # Marek is a waypoint: his own turns are not what is asked
    # without the hop the answer still outranks what matches only Marek's name, which gains
    # next to nothing from being his
    flat = gmem.recall(question, k=4, layers=["message"], options=RecallOptions(hop_decay=0),
                       filter=RecallFilter.READ_ONLY)
    texts = [h.text for h in flat]
    assert not any(h.breakdown.path and "Olga" in h.breakdown.path for h in flat)
    garage = next(h for h in flat if "garage" in h.text).breakdown
    text = relevance(garage.semantic, garage.keyword, 0.0, RecallOptions().relevance)
    own = (garage.relevance - garage.context) / (1 - garage.context)  # before its session's share
    assert garage.graph == 1.0 and garage.path == "said by Marek" and own - text < 0.02
    assert texts.index(answer.text) < texts.index(hits[at["garage"]].text)


def test_a_persons_thing_is_no_relation_to_follow(gmem):
    """"Caroline's painting" names no other person: a turn that puts "painting" beside someone
    else's name is no path to follow, and Caroline's own turns keep their evidence (a LoCoMo
    question lost its answer when Caroline became a waypoint on the way to "Blue")."""
    gmem.add_messages("s", [
        {"speaker": "Caroline", "content": "I finished my painting for Olga Berg's new gallery."},
        {"speaker": "Olga Berg", "content": "The gallery opens on Friday with a wine evening."},
        {"speaker": "Caroline", "content": "A sunrise walk by the lake inspired it."},
    ])
    hits = gmem.recall("What inspired Caroline's painting?", k=3, layers=["message"], filter=RecallFilter.READ_ONLY)
    assert not any("Olga" in (h.breakdown.path or "") for h in hits)
    lake = next(h for h in hits if "lake" in h.text)
    assert lake.breakdown.path == "said by Caroline" and lake.breakdown.graph == 1.0
    assert all(h.score < lake.score for h in hits if h.item.speaker == "Olga Berg")
    words = ["sister", "painting", "sibling", "family", "kids", "姐姐", "coworkers", "house"]
    assert person_relations(words, gmem.embedder) == ("sister", "sibling", "kids", "姐姐", "coworkers")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_walk_takes_one_step_per_relation_the_question_follows(gmem, lang):
    """"陈静的上司" is one step: the boss's own boss (named beside the same word in the boss's
    turn) is not where the question goes, and the boss's own turns keep their evidence. The
    names are not the answer's words either: the keyword search reads the question without them."""
    said = {"en": [("Chen Jing", "My boss is Zhou Min."), ("Zhou Min", "My boss is Liu Yang."),
                   ("Zhou Min", "The pet I keep is a corgi."), ("Liu Yang", "The pet I keep is a rabbit."),
                   ("Chen Jing", "The pet I keep is a parrot.")],
            "zh": [("陈静", "我的上司是周敏。"), ("周敏", "我的上司是刘洋。"), ("周敏", "我养的宠物是一只柯基。"),
                   ("刘洋", "我养的宠物是一只兔子。"), ("陈静", "我养的宠物是一只八哥。")]}[lang]
    gmem.add_messages("s", [{"speaker": who, "content": text} for who, text in said])
    question = {"en": "Which pet does Chen Jing's boss keep?", "zh": "陈静的上司养了什么宠物？"}[lang]
    hits = gmem.recall(question, k=5, layers=["message"], filter=RecallFilter.READ_ONLY)
    corgi, rabbit = ({"en": "corgi", "zh": "柯基"}[lang], {"en": "rabbit", "zh": "兔子"}[lang])
    at = {h.text: i for i, h in enumerate(hits)}
    answer = next(h for h in hits if corgi in h.text)
    assert answer.breakdown.graph == 1.0 and answer.breakdown.path.endswith(
        {"en": "-mentions-> Zhou Min -said->", "zh": "-mentions-> 周敏 -said->"}[lang])
    assert all(at[answer.text] < i for text, i in at.items() if rabbit in text)


def test_a_relation_is_crossed_when_the_question_means_it_in_either_language(gmem):
    people = [{"name": "Lena", "type": "person"}, {"name": "Dana", "type": "person"}]
    gmem.remember("Lena is Dana's sister", entities=people,
                  relations=[{"source": "Dana", "predicate": "sister", "target": "Lena"}])
    window = gmem.remember("Lena prefers window seats on long flights", entities=[{"name": "Lena", "type": "person"}])
    for question in ("Which seat does Dana's sister prefer?", "Dana的姐姐喜欢什么座位？"):
        hit = next(h for h in gmem.recall(question, k=5, filter=RecallFilter.READ_ONLY) if h.item.id == window.id)
        # the question's relation crosses the edge whatever ranked first: Dana -sister-> Lena, then her items
        assert hit.breakdown.path == "Dana -sister-> Lena <-mentions-" and hit.breakdown.graph == 1.0, question


def test_feedback_never_lifts_its_seed(gmem):
    for text in ("Greta's team deploys to staging every Friday", "Greta lives in Lisbon",
                 "Greta prefers Kotlin over Java for new services"):
        gmem.remember(text, entities=[{"name": "Greta", "type": "person"}])
    question = "Which programming language does Greta like?"
    before = gmem.recall(question, k=3, options=RecallOptions(feedback=0), filter=RecallFilter.READ_ONLY)
    after = {h.item.id: h for h in gmem.recall(question, k=3, filter=RecallFilter.READ_ONLY)}
    seed = before[0]
    assert seed.breakdown.relevance >= 0.5  # a seed there was
    assert after[seed.item.id].score <= seed.score
    assert after[seed.item.id].breakdown.semantic == pytest.approx(seed.breakdown.semantic, abs=1e-6)
    assert "Kotlin" in max(after.values(), key=lambda h: h.score).item.text
