"""The relationship question set (tests/relations_set.py) on every backend, fast path: a
question that follows 1-3 relations from a person ("Which city does Marek Nowak's sister's
husband work in?", "王磊的姐姐的丈夫在哪个城市工作？") finds the turn that answers it through
the turns that state each relation. recall@5 for 1 / 2 / 3 hops, measured 2026-12-05
(benchmarks/relations.py and the same set on both Neo4j lines): 1.000 everywhere, in both
languages; before the walk took one step per relation and searched keywords without the
names, Neo4j read en 0.867 / 0.792 / 0.562. Without the multi-hop step (embedded) en 0.667 /
0.583 / 0.500, zh 0.867 / 0.833 / 0.625. The floors are issue 45's targets."""

from __future__ import annotations

import pytest

from graphmem.scripts.recording import prompt_key
from graphmem.settings import RecallFilter, RecallOptions, Settings
from tests import relations_set
from tests.conftest import make_memory
from tests.replay import ReplayExtractor

FLOORS = {1: 0.90, 2: 0.80, 3: 0.60}


@pytest.fixture(scope="module")
def households():
    return relations_set.load()


def test_the_set_is_what_it_says(households):
    questions = [q for h in households for q in h.questions]
    assert len(households) >= 6 and len(questions) >= 80
    assert {q.lang for q in questions} == {"en", "zh"} and {q.hops for q in questions} == {1, 2, 3}
    turns = {t["id"]: t["content"] for h in households for session in h.sessions.values() for t in session}
    for q in questions:  # the evidence states the answer; the path has one relation turn per hop
        assert q.answer in turns[q.evidence] and len(q.path) == q.hops


def test_questions_through_relations_find_their_answer(gmem, households):
    for h in households:
        relations_set.ingest(gmem, h)
    gmem.flush()
    found = relations_set.evaluate(gmem, households)
    rates = {key: sum(v) / len(v) for key, v in found.items()}
    for (lang, hops), rate in rates.items():
        assert rate >= FLOORS[hops], (lang, hops, rates)
    flat = relations_set.evaluate(gmem, households, options=RecallOptions(hop_decay=0))
    for key in found:  # the walk is what finds them
        assert sum(found[key]) >= sum(flat[key]), key
    assert sum(map(sum, found.values())) > sum(map(sum, flat.values()))


def test_a_question_for_the_person_finds_the_step_that_names_them(gmem, households):
    """The steps of a path rank below what the question asks about the person at its end
    (``path_statements``), except where it asks for the person: then the step is the answer."""
    for h in households[:1] + [h for h in households if h.lang == "zh"][:1]:
        relations_set.ingest(gmem, h)
    gmem.flush()
    for question, ns, said in [("Who is Marek Nowak's sister?", "rel-nowak", "My sister is Olga Berg."),
                               ("Who is Marek Nowak's sister's husband?", "rel-nowak", "My husband is Henrik Berg."),
                               ("王磊的姐姐是谁？", "rel-wang", "我的姐姐是李娜。")]:
        hits = gmem.recall(question, k=3, namespace=ns, layers=["message"], filter=RecallFilter.READ_ONLY)
        assert hits[0].item.content == said, (question, [s.text for s in hits])
    hits = gmem.recall("What pet does Marek Nowak's sister have?", k=5, namespace="rel-nowak", layers=["message"],
                       filter=RecallFilter.READ_ONLY)
    assert hits[0].item.content == "Our pet is a parrot.", [s.text for s in hits]  # hers, not the step to her


# with extraction (the model's recorded replies), the answering turn among the first 5 turns the
# ranked items carry (benchmarks/relations.py --extraction). Issue 45's targets are 0.90 / 0.80 /
# 0.60; before the path's steps ranked below the answer (and a relation edge's person could be
# stepped to), the set read en 0.633 / 0.292 / 0.188, zh 0.633 / 0.583 / 0.312. Since windows hold
# at most 8 user turns (2026-12-07: 90 of the 120 facts people state are their memories, from 30
# of them) every person's facts compete, and the path is crossed by its relation edges: en 0.933 /
# 0.958 / 1.000, zh 1.000 everywhere, on every backend: Neo4j read en 0.833 / 0.833 / 0.875 until its
# full-text search ordered tied memories as the embedded store does (it showed the model other
# known memories beside some windows, differently from run to run)
EXTRACTED = {("en", 1): 0.93, ("en", 2): 0.95, ("en", 3): 1.0, ("zh", 1): 1.0, ("zh", 2): 1.0, ("zh", 3): 1.0}
# the held-out households (written after the first ranking was chosen): en 0.950 / 1.000 / 1.000,
# zh 1.000 everywhere (first asked: en 1.000 everywhere, zh 0.900 / 0.857 / 1.000)
HELD_OUT = {("en", 1): 0.95, ("en", 2): 1.0, ("en", 3): 1.0, ("zh", 1): 1.0, ("zh", 2): 1.0, ("zh", 3): 1.0}
# (facts people state that are memories of theirs at least, memories giving one to another person)
# (Neo4j's own replies to the 5 held-out windows it prompts otherwise keep 65)
FACTS = {"set": (90, 0), "held out": (67, 0), "held out, neo4j": (65, 0)}


class WindowReplay(ReplayExtractor):
    """The recorded reply to the prompt, or where the store showed the model other known memories
    beside the same turns, the reply recorded for those turns (the first by prompt key). Every
    prompt the set makes on the three backends is recorded; this keeps a Neo4j run from failing
    on a prompt no run made before (Lucene's BM25 is not FTS5's: one window of the 30, the
    Bergs', is shown other known memories on Neo4j, and its reply is recorded for that prompt)."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.by_turns: dict[str, str] = {}
        for key in sorted(self.recordings.data):
            self.by_turns.setdefault(_turns_of(self.recordings.data[key]["user"]), key)

    def complete(self, system, user, schema, max_tokens, stop=()):
        key = prompt_key(system, user)
        if key not in self.recordings.data and _turns_of(user) in self.by_turns:
            return self.recordings.replay(self.by_turns[_turns_of(user)])
        return super().complete(system, user, schema, max_tokens, stop)


def _turns_of(prompt: str) -> str:
    """A window's prompt from its date line on: its turns, without the known memories."""
    return prompt[prompt.find("Date:"):] if "Date:" in prompt else prompt


def _extracted(make, households, recordings):
    mem = make(settings=Settings(extraction="manual"), extractor=WindowReplay(recordings))
    for h in households:
        relations_set.ingest(mem, h)
        mem.flush()
    return mem


def _rates(found) -> dict:
    return {key: sum(v) / len(v) for key, v in found.items()}


def test_with_extraction_every_relation_is_an_edge_and_answers_rank_above_their_path(backend, tmp_path, households):
    mem = _extracted(lambda **kw: make_memory(backend, tmp_path, **kw), households, relations_set.RECORDINGS)
    try:
        # as the turns state them: 30 of 30 on every backend (29 on Neo4j while its full-text
        # search showed the model other known memories from run to run)
        assert relations_set.relation_edges(mem, households)[0] == 30
        right, elsewhere, _ = relations_set.facts_stored(mem, households)
        assert right >= FACTS["set"][0] and elsewhere == 0, (right, elsewhere)
        found = relations_set.evaluate(mem, households, layers=None)
        rates = _rates(found)
        assert all(rates[key] >= floor - 1e-9 for key, floor in EXTRACTED.items()), str(rates)
        # the path's steps ("My sister is Olga Berg", its memory, the window that said it) rank
        # below the answer: at full relevance they filled the first 5 turns
        flat = relations_set.evaluate(mem, households, layers=None, options=RecallOptions(path_statements=1.0))
        assert sum(map(sum, found.values())) > sum(map(sum, flat.values())) + 20, _rates(flat)
    finally:
        mem.close()


def test_held_out_households_with_extraction(backend, tmp_path):
    households = relations_set.load(relations_set.HELDOUT)
    assert len(households) >= 4 and {h.lang for h in households} == {"en", "zh"}
    # Neo4j shows the model other known memories beside 5 of the 20 windows (Lucene's BM25): their
    # own replies are recorded, and the figures are the embedded store's
    mem = _extracted(lambda **kw: make_memory(backend, tmp_path, **kw), households, relations_set.HELDOUT_RECORDINGS)
    try:
        rates = _rates(relations_set.evaluate(mem, households, layers=None))
        assert all(rates[key] >= floor - 1e-9 for key, floor in HELD_OUT.items()), rates
        right, elsewhere, _ = relations_set.facts_stored(mem, households)
        floor = FACTS["held out" if backend == "embedded" else "held out, neo4j"][0]
        assert right >= floor and elsewhere == 0, (right, elsewhere)
        fast = _rates(relations_set.evaluate(mem, households))  # the turns alone
        assert all(rate == 1.0 for rate in fast.values()), fast
    finally:
        mem.close()
