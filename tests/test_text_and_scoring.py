"""Unit tests of the plain functions: tokenising, entity names, scoring, layer merging."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest

from graphmem.embed import Pieces, USEEmbedder, make_embedder
from graphmem.models import Episode, MemoryRecord, ScoreBreakdown, ScoredItem, utcnow
from graphmem.retrieve import frequency, merge_layers, recency, relevance, score
from graphmem.retrieve.scoring import SPECIFICITY_FLOOR, SPECIFICITY_PRIOR, specificity
from graphmem.retrieve.recall import keyword_signal
from graphmem.settings import RecallOptions, RelevanceWeights
from graphmem.text import (EntityTagger, content_sentences, fts_query, keywords, name_grams, normalise_name,
                           query_terms, segment, stem, without_names)
from graphmem.text.entities import (_mostly_lower_case, _naming_sentences, _only_at_starts, cased_words, is_noise_name,
                                    addressed_by, addressed_in, self_named, trimmed_name)
from graphmem.text.tokens import scripts_apart


def test_segment_handles_english_and_chinese():
    assert segment("Alice's TypeScript") == ["alice's", "typescript"]
    assert "北京" in segment("我住在北京") and "火锅" in segment("吃火锅", for_search=True)
    assert query_terms("What does she like? 她喜欢什么") == ["like", "喜欢"]
    assert query_terms("preferring Alice's") == ["prefer", "alic"]
    # a Latin name written against Chinese is looked up as a name of its own
    assert {"dana", "姐姐"} <= name_grams("Dana的姐姐喜欢什么座位？")
    assert scripts_apart("用TypeScript写, 2024年") == "用 TypeScript 写, 2024 年"


def test_a_question_without_the_names_it_matched():
    assert without_names("Which sport does Marek's sister play?", ["Marek"]) == "Which sport does sister play?"
    assert without_names("我同事周敏的女儿在哪里上学", ["周敏"]) == "我同事 的女儿在哪里上学"
    assert without_names("Does Banana like ana?", ["Ana"]) == "Does Banana like ?"  # a name inside a word stays
    assert without_names("Greta Lind and Greta", ["Greta", "Greta Lind"]) == "and"


def test_fts_query_quotes_every_term():
    assert fts_query(query_terms('tea" OR 1')) == '"tea" OR "1"'
    assert fts_query(query_terms("the of and")) is None
    assert fts_query(query_terms("NEAR(x y) coffee*")) == '"near" OR "coffe"'
    assert fts_query(['say "hi"']) == '"say ""hi"""'


def test_keywords_are_stemmed_and_stopword_free():
    assert keywords("The cats are running to the parks") == ["cat", "park", "run"]
    assert stem("manager") == stem("manages") == "manag"
    assert keywords("我喜欢猫") == ["喜欢", "猫"]



def test_a_turn_is_embedded_as_the_mean_of_its_content_sentences():
    turn = "Hey Mel! I went camping last weekend with my kids. It was great!"
    assert content_sentences(turn) == ["I went camping last weekend with my kids.", "It was great!"]
    assert content_sentences("好的！上周末我带孩子们去山里露营了。嗯嗯") == ["上周末我带孩子们去山里露营了。"]
    assert content_sentences("Thanks!") == ["Thanks!"]  # nothing says more: the text as it is
    assert content_sentences("first line here\nsecond line here") == ["first line here", "second line here"]
    embedder = make_embedder("use")
    v, a, b, greeting = embedder.embed([turn, *content_sentences(turn), "Hey Mel!"])
    assert np.allclose(v, (a + b) / np.linalg.norm(a + b), atol=1e-5)
    assert v @ greeting < 0.5 < v @ a  # the greeting no longer pulls the turn's vector
    one = "I went camping last weekend with my kids."
    raw = np.asarray(embedder._model.encode([one]), dtype=np.float32)[0]
    assert np.allclose(embedder.embed([one])[0], raw / np.linalg.norm(raw), atol=1e-5)

def test_the_embedder_tokenizes_in_cpp_with_the_ids_of_the_packages_port(tmp_path):
    embedder = USEEmbedder(tmp_path)
    embedder.embed(["one query"])
    pieces = embedder._model._backend.sp
    assert isinstance(pieces, Pieces) and pieces._sp is None  # not worth its load time for one query
    pieces.expect(Pieces.LOAD_AFTER)
    assert pieces._sp is not None
    # a run of unknown characters (one id a character in the port, one a run in C++), no piece at all,
    # an emoji, compatibility forms; and plain text in both languages
    texts = ["齉齉齉 is rare", "", "\u200b", "😀 ok", "ﬁ café Ａ１", "I went camping last weekend with my kids.",
             "我住在北京，周末喜欢去西湖边散步。"]
    assert [pieces.encode(t) for t in texts] == \
        [pieces.port.encode(t, out_type=int, add_bos=True, add_eos=True) for t in texts]
    with pytest.raises(UnicodeEncodeError):  # as from the port: a ValueError, which callers turn into a ValidationError
        pieces.encode("a lone \ud800 surrogate")


def test_normalise_name():
    assert normalise_name("  The   Google's ") == "google"
    assert normalise_name("ＡＢＣ") == "abc"
    assert normalise_name("Ｔｈｅ　Ｈｏｂｂｉｔ’s") == "hobbit"
    assert normalise_name('"the a (Maya Singh)"') == "maya singh"


def test_name_grams_are_normalised_as_tokens_glued_and_as_written():
    grams = name_grams("We met Jean-Luc and The Beatles' manager in the U.S.A. with 王磊")
    assert {"jean-luc", "beatles", "usa", "王磊", "met jean-luc"} <= grams
    assert "the" not in grams and "usa" in grams and all(g == normalise_name(g) for g in grams)


def test_ner_runs_only_its_own_pipeline_on_the_sentences_that_may_name(monkeypatch):
    assert EntityTagger._spacy().pipe_names == ["tok2vec", "tagger", "ner"]  # NER has a tok2vec of its own
    ran, real = [], EntityTagger._run
    monkeypatch.setattr(EntityTagger, "_run", classmethod(lambda cls, texts, names: ran.append(names) or real(texts, names)))
    EntityTagger().tag_many(["We met Caroline in Boston", "I saw Mel and Caroline"])
    assert ran == [["ner"]]  # NER alone: Caroline starts no sentence, so the tagger does not run
    EntityTagger().tag_many(["Caroline called me"])
    assert ran[1:] == [["ner"], ["tok2vec", "tagger"]]
    turn = "Caroline called me. Then I went hiking and I'm glad I did. Thanks! It was great with Mel."
    assert _naming_sentences(turn) == "Caroline called me. It was great with Mel."  # "I" names nobody


def test_a_common_word_ner_reads_at_a_sentence_start_is_dropped():
    texts = ["Wow Jon, same here! Dance is pretty much my go-to.", "Nature is so calming. Maria agrees.",
             "Felt great after the run.", "German food is great. Barcelona was too.", "I love Nature. Nature heals."]
    names = [{e.name for e in r} for r in EntityTagger().tag_many(texts)]
    assert names[:4] == [{"Jon"}, {"Maria"}, set(), {"German", "Barcelona"}]
    assert "Nature" in names[4]  # written inside a sentence too: the text's capital is evidence
    # the tagger calls Pixie (a dog) a common noun there; the vocabulary does not: it stays
    assert [e.name for e in EntityTagger().tag("Pixie is so cute!")] == ["Pixie"]
    assert _mostly_lower_case("Nature") and not any(map(_mostly_lower_case, ("Caroline", "Luna", "Scout", "Paris")))
    assert _only_at_starts('"Dance is life." Dance!', "Dance") and not _only_at_starts("She said: Dance!", "Dance")
    assert _only_at_starts("We dance. Dance is life.", "Dance") == "Dance is life."
    assert _only_at_starts("x" * 60 + " Dance", "Dance") is None and _only_at_starts("Dance-off", "Dance-off") is None


def test_a_capital_starting_a_sentence_is_evidence_only_for_a_word_not_mostly_lower_case():
    assert cased_words("Super excited! See you at the Super Bowl") == {"super", "bowl"}
    assert cased_words("Super excited! Luna says hi.") == {"luna"}
    assert cased_words("Keep it up.") == set() and cased_words("i told maya") is None


def test_chat_spelling_is_noise():
    assert all(is_noise_name(w) for w in ("Wanna", "Nah", "Awww", "Sooo", "Hmmm", "Lemme"))
    assert not any(is_noise_name(w) for w in ("Anna", "Louis XIII", "XIII", "Hanna", "Nahla"))


def test_who_may_be_addressed_by_a_short_form():
    assert addressed_by("mel", "melanie") and addressed_by("cal", "calvin smith") and addressed_by("jo", "joanna")
    assert not any(addressed_by(s, f) for s, f in [("a", "alice"), ("mel", "mel"), ("ann", "joanna"), ("melanie", "mel")])
    assert all(addressed_by(s, "曹志强") for s in ("志强", "小曹", "老曹", "强强"))
    assert addressed_by("文杰", "欧阳文杰") and not addressed_by("阳文杰", "欧阳文杰")
    assert not any(addressed_by(s, "周敏") for s in ("敏", "周", "志强"))


def test_a_name_spoken_to_is_set_off_by_punctuation_or_greetings():
    spoken = [("Hey Mel! How was it?", "Mel"), ("Thanks, Deb", "Deb"), ("Sounds great, Cal!", "Cal"),
              ("Yeah Cal, it is cool", "Cal"), ("你好，志强，是的", "志强"), ("你好志强，今天", "志强")]
    about = [("How's Chris doing?", "Chris"), ("I saw Chris yesterday.", "Chris"), ("Calvin, hi", "Cal"),
             ("你也可以叫我志强，其实", "志强")]
    assert all(addressed_in(t, n) for t, n in spoken) and not any(addressed_in(t, n) for t, n in about)


def test_a_name_given_as_ones_own():
    assert all(self_named(t, n) for t, n in [("你也可以叫我志强，其实", "志强"), ("You can call me Mel.", "Mel"),
                                             ("I'm Deb!", "Deb")])
    assert not any(self_named(t, n) for t, n in [("My brother Max fixed it.", "Max"), ("I am Max's sister", "Max")])


def test_an_article_the_sentence_writes_is_no_part_of_a_name():
    assert trimmed_name("the Frank Ocean") == "Frank Ocean" and trimmed_name("the Grand Canyon") == "Grand Canyon"
    assert trimmed_name("The Alchemist") == "The Alchemist" and trimmed_name("the") == "the"
    assert trimmed_name("the Great Wall") == "Great Wall"  # a word after the article is the name's


def test_tagger_finds_english_and_chinese_entities():
    en, zh, lower = EntityTagger().tag_many(["Maria flew from Madrid to Tokyo", "张伟在上海工作", "no names here"])
    assert {"Maria", "Madrid", "Tokyo"} <= {e.name for e in en}
    assert {("张伟", "person"), ("上海", "place")} <= {(e.name, e.type) for e in zh}
    assert lower == []


def test_recency_halves_each_half_life():
    now = utcnow()
    m = MemoryRecord(text="x", created_at=now - timedelta(days=30))
    assert recency(m, now, 30) == pytest.approx(0.5)
    m.last_accessed_at = now
    assert recency(m, now, 30) == pytest.approx(1.0)
    # recency counts from when it was said: a memory of last year's turns, an episode's end
    said = MemoryRecord(text="x", created_at=now, said_at=now - timedelta(days=60))
    assert recency(said, now, 30) == pytest.approx(0.25)
    episode = Episode(summary="x", created_at=now, start_at=now - timedelta(days=31), end_at=now - timedelta(days=30))
    assert recency(episode, now, 30) == pytest.approx(0.5)


def test_specificity_is_an_idf_scaled_to_one():
    assert specificity(1, 10_000 - SPECIFICITY_PRIOR) == pytest.approx(1 - math.log(2) / math.log(10_001))
    assert specificity(2, 500) > specificity(10, 500) > specificity(100, 500) > specificity(400, 500)
    assert specificity(500, 500) == SPECIFICITY_FLOOR  # everything is about it: the floor
    assert specificity(0, 100) == 1.0  # nothing known: full evidence
    assert specificity(5, 5) > 0.5  # a handful of nodes all about one person is no evidence of a hub


def test_frequency_saturates():
    assert frequency(0, 10) == 0
    assert frequency(10, 10) == pytest.approx(0.632, abs=1e-3)
    assert frequency(30, 10) < 1.0 and frequency(1000, 10) <= 1.0


def test_relevance_blend_and_score_weights():
    w = RelevanceWeights(semantic=1, keyword=1, graph=0)
    assert relevance(0.8, 0.4, 1.0, w) == pytest.approx(0.6)
    g = RelevanceWeights(semantic=1, keyword=1, graph=0.5, graph_floor=0.3)
    assert relevance(0.1, 0.1, 1.0, g) == pytest.approx(0.1 + 0.5 * 0.3)  # barely matched: raised from the floor
    assert relevance(0.1, 0.1, 1.0, g, rest=0.02) == pytest.approx(0.1 + 0.5 * 0.02)  # matched by a name alone
    m = MemoryRecord(text="x", importance=0.2, confidence=0.7)
    b = score(m, semantic=1, keyword=1, graph=1, now=utcnow(), options=RecallOptions())
    assert b.total == pytest.approx(0.5 * 1 + 0.15 * 0.2 + 0.15 * 0.7 + 0.10 * 1 + 0.10 * 0, abs=1e-5)


def test_keyword_signal_rewards_coverage():
    full = keyword_signal(2.0, 4.0, {"tea", "ann"}, ["ann", "tea", "x"])
    none = keyword_signal(2.0, 4.0, {"tea", "ann"}, ["x"])
    top = keyword_signal(4.0, 4.0, {"tea", "ann"}, ["ann"])
    assert full == pytest.approx(0.7 * 0.5 + 0.3) and none == pytest.approx(0.35) and top == pytest.approx(0.85)
    assert keyword_signal(0, 4.0, {"tea"}, ["tea"]) == 0


def _item(layer: str, score_: float, n: int) -> ScoredItem:
    b = ScoreBreakdown(relevance=0, importance=0, confidence=0, recency=0, frequency=0, total=score_)
    item = MemoryRecord(text=f"{layer}{n}")
    return ScoredItem(layer="memory", item=item, score=score_, breakdown=b)


def test_merge_keeps_each_layers_best():
    by_layer = {"message": [_item("msg", 0.9 - i / 100, i) for i in range(10)], "episode": [_item("ep", 0.2, 0)]}
    merged = merge_layers(by_layer, 3)
    assert len(merged) == 3 and merged[-1].item.text == "ep0"
    assert merge_layers(by_layer, 0) == []


def test_ids_are_unique_in_order_and_never_repeated_by_a_forked_child():
    """Ids take their random part from a page of bytes read from the OS at once; a forked child
    must not hand out the parent's unread bytes again."""
    import os

    from graphmem.models.records import new_id

    new_id("mem")  # the parent holds unread random bytes at the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.close(read)
        os.write(write, " ".join(new_id("mem") for _ in range(50)).encode())
        os._exit(0)
    os.close(write)
    parent = [new_id("mem") for _ in range(2000)]
    with os.fdopen(read) as pipe:
        child = pipe.read().split()
    os.waitpid(pid, 0)
    assert len(child) == 50 and len(set(parent)) == len(parent) and parent == sorted(parent)
    assert not {i[-10:] for i in child} & {i[-10:] for i in parent}  # random parts: none shared
