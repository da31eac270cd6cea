"""The labelled extraction evaluation (tests/data/extraction_eval/): the set is well formed, the
matching rule does what its README says, the checks on extracted facts hold, and the whole
evaluation on the real model's recorded replies stays at or above the figures it reached when
they were recorded (``python benchmarks/extraction_quality.py --live --record``)."""

from __future__ import annotations

import collections
from datetime import datetime, timezone

import pytest

from benchmarks.extraction_quality import evaluate, has, language_kept, load, matches, who
from graphmem.extract.checks import (
    adds_a_value, canonical_predicate, change_words, grounded, is_event, is_vague, kept_in, kept_terms, left_said, left_terms,
    replaced_terms, resolve_subject, says_nothing, unconfirmed_assistant_words, without_self_naming,
)
from graphmem.extract.extractors import SYSTEM_PROMPT, copies_an_example, example_memories
from graphmem.lifecycle.rules import decide, fact_of, same_subject, says_again_what_changed, states_a_replaced_value
from graphmem.lifecycle.swaps import carried_over
from graphmem.models import Message


# the held-out conflict batches as the benchmark reports them -> (their ``heldout`` mark, cases a
# language, change cases scored at least)
HELD_OUT = {"held out": (True, 7, 4), "held out 2": (2, 5, 2), "held out 3": (3, 20, 9), "held out 4": (4, 11, 8),
            "held out 5": (5, 10, 5), "held out 6": (6, 10, 5), "held out 7": (7, 10, 5), "held out 8": (8, 10, 5),
            "held out 9": (9, 10, 5), "held out 10": (10, 10, 5), "held out 11": (11, 10, 5),
            "held out 12": (12, 10, 5), "held out 13": (13, 10, 5), "held out 14": (14, 10, 5), "held out 15": (15, 10, 5)}


def test_the_set_is_big_enough_bilingual_and_well_formed():
    windows, conflicts = load()
    langs = collections.Counter(w["lang"] for w in windows)
    assert len(windows) >= 60 and langs["en"] == langs["zh"]
    assert len({w["id"] for w in windows}) == len(windows)
    tags = {t for w in windows for t in w["tags"]}
    assert {"assistant", "question", "hypothetical", "correction", "third_party", "tense", "workflow", "one_off",
            "empty", "mixed", "example"} <= tags
    assert sum(1 for w in windows if not [f for f in w["facts"] if not f.get("optional")]) >= 8  # should yield nothing
    for w in windows:
        for f in w["facts"]:
            assert {"about", "s", "p", "o", "text", "keys"} <= set(f), (w["id"], f)
            assert f["about"] in w["people"], (w["id"], f["about"])
            assert matches(f["text"].casefold() + " " + f["o"].casefold(), f["keys"]), (w["id"], f["text"])
    crossing = [w for w in windows if "crosslingual" in w["tags"]]
    assert min(collections.Counter(w["lang"] for w in crossing).values()) >= 4 and len(crossing) >= 9
    relations = [(w, r) for w in windows for r in w.get("relations") or []]
    assert len(relations) >= 6 and all(r[0] in w["people"] and r[2] in w["people"] and r[1] for w, r in relations)
    cases = [c for c in conflicts["cases"] if not c.get("heldout")]
    assert len(cases) >= 40 and {c["kind"] for c in cases} == {"change", "coexist", "supplement", "restate"}
    assert collections.Counter(conflicts["people"][c["person"]]["lang"] for c in cases) == {"en": 20, "zh": 20}
    for batch, size, _ in HELD_OUT.values():  # written after the rules: reported apart
        heldout = [c for c in conflicts["cases"] if c.get("heldout") == batch and type(c.get("heldout")) is type(batch)]
        assert collections.Counter(conflicts["people"][c["person"]]["lang"] for c in heldout) == {"en": size, "zh": size}


def test_the_matching_rule():
    assert has("mei's team uses go", "go") and not has("a good idea", "go")
    assert has("王芳喜欢喝茉莉花茶", "茉莉花") and has("runs 30 km a week", "30 km")
    assert matches("clara is ben's wife", ["clara", ["wife", "married"]])
    assert not matches("clara is a pilot", ["clara", ["wife", "married"]])
    assert language_kept("曹磊最近在学Kubernetes", "zh") and not language_kept("Alice likes to drink乌龙茶", "zh")
    assert language_kept("Alex's mom loves 红烧肉", "en")
    people = {"Ben": ["Ben"], "Clara": ["Clara", "wife"]}
    assert who("Ben's wife", people) == "Clara" and who("Ben", people) == "Ben" and who("the user", people) is None
    assert who("AI assistant", people) == "assistant"


@pytest.fixture(scope="module")
def embedder():
    from graphmem.embed import make_embedder

    return make_embedder("use")


def turns(*pairs):
    return [Message(session_id="s", content=text, speaker=who, role="assistant" if who == "assistant" else "user")
            for who, text in pairs]


def test_facts_must_be_grounded_in_their_window():
    window = turns(("Raj", "Heads up, I'm lactose intolerant, so no milk in recipes."),
                   ("assistant", "Would oat milk work?"), ("Raj", "Oat milk is fine."))
    assert grounded("Raj", "lactose intolerance", "Raj is lactose intolerant", window) is None
    assert grounded("the user", "oat milk", "Oat milk is fine for Raj", window) is None
    assert "subject" in grounded("Tom Berg", "Ullevaal hospital", "Tom Berg is a nurse at Ullevaal", window)
    assert grounded("Raj Patel", "oat milk", "Raj Patel can have oat milk", window) is None  # the speaker, in full
    assert "object" in grounded("Raj", "nuts", "Raj is allergic to nuts", window)
    chinese = turns(("王芳", "我喜欢喝茉莉花茶，不喝咖啡。"))
    assert grounded("王芳", "茉莉花茶", "王芳喜欢喝茉莉花茶", chinese) is None
    assert grounded("王芳", "jasmine tea", "Wang Fang likes jasmine tea", chinese) is not None  # as written: not hers


def test_a_fact_is_grounded_in_either_language(embedder):
    """A fact that names in one script what its window says in the other stands (issue 46, part
    3): pinyin for names and places, one table for months, weekdays and numbers, the embedder's
    cross-lingual similarity for the rest; what the window does not say is still dropped."""
    from graphmem.text.crosslingual import Across, glosses

    across = Across(embedder)
    window = turns(("Alice", "我下个月要去上海参加一个数据工程大会。一月份我还要去北京出差。"),
                   ("assistant", "听起来很棒！"), ("陆远", "我的上司是周敏，她住在静安区，养了两只猫。"))
    for subject, obj, text in (("Alice", "Shanghai", "Alice is going to Shanghai next month"),
                               ("Alice", "data engineering conference", "Alice will attend a data engineering conference"),
                               ("Alice", "January", "Alice has a business trip to Beijing in January"),
                               ("Zhou Min", "Jing'an District", "Zhou Min lives in Jing'an District"),
                               ("Lu Yuan", "Zhou Min", "Lu Yuan's boss is Zhou Min"),
                               ("周敏", "two cats", "周敏 has two cats")):
        assert grounded(subject, obj, text, window, across) is None, text
        assert grounded(subject, obj, text, window) is not None, text  # as written, it is not there
    for subject, obj, text in (("Alice", "Alibaba Cloud", "Alice is a software engineer at Alibaba Cloud"),
                               ("Alice", "Shenzhen", "Alice lives in Shenzhen"), ("Alice", "March", "Alice flies in March"),
                               ("Wang Lei", "Beijing", "Wang Lei travels to Beijing")):  # 王磊 is nowhere
        assert grounded(subject, obj, text, window, across) is not None, text
    english = turns(("Li Na", "My manager is Zhou Min and she lives in Shanghai."), ("Sam", "I'm flying to 北京 on Friday."))
    assert grounded("Li Na", "周敏", "Li Na的上司是周敏", english, across) is None
    assert grounded("李娜", "上海", "李娜住在上海", english, across) is None  # Li Na, as her name is read
    assert grounded("张伟", "上海", "张伟住在上海", english, across) is not None  # no Zhang Wei there
    assert grounded("Sam", "星期五", "Sam星期五去北京", english, across) is None
    assert grounded("王芳", "jasmine tea", "Wang Fang likes jasmine tea", turns(("王芳", "我喜欢喝茉莉花茶。")), across) is None
    assert glosses("一月份和周五，两个人") == {"month:1", "day:5", "n:2"} == glosses("January, Friday, two")


def test_a_fact_whose_object_is_its_subject_or_a_pronoun_says_nothing():
    """MemoryBank's first window stored "Emily is named Emily" and "Emily thanks you"."""
    assert says_nothing("Emily", "Emily") and says_nothing("Emily", " you") and says_nothing("王芳", "她")
    assert says_nothing("Emily", "Emily Clarke") is None and says_nothing("邓杰", "none") is None  # drinks: none
    assert says_nothing("Emily", None) is None and says_nothing(None, "tea") is None
    # a sentence that names nothing but its subject, whatever its triple says
    assert says_nothing("Sofia", "Spanish", "Sofia is Sofia") and says_nothing("张伟", "北京", "张伟是张伟")
    assert says_nothing("Sofia", "Spanish", "Sofia speaks Spanish") is None
    assert says_nothing("张伟", "北京", "张伟住在北京") is None and says_nothing("Sofia Ruiz", "x", "Sofia is a nurse") is None


def test_a_memory_that_opens_by_naming_its_subject_as_itself_keeps_the_rest():
    """The held-out batches' base windows ("我叫邵琪，在南京一家幼儿园当老师") gave "邵琪是邵琪，在南京……",
    which the pair questions then read as ended at 0.67-0.75 by almost any change."""
    assert without_self_naming("邵琪是邵琪，在南京一家幼儿园当老师", "邵琪") == "邵琪在南京一家幼儿园当老师"
    assert without_self_naming("张丽是张丽，对青霉素过敏", "张丽") == "张丽对青霉素过敏"
    assert without_self_naming("Sofia is Sofia, a vet in Valencia", "Sofia") == "Sofia is a vet in Valencia"
    assert without_self_naming("Sofia is Sofia, working at a clinic", "Sofia") == "Sofia, working at a clinic"
    for text, subject in (("蒋涛是蒋涛", "蒋涛"), ("邵琪是邵琪的妈妈", "邵琪"), ("Sofia is Sofia Reyes", "Sofia"),
                          ("Ravi is a pharmacist", "Ravi"), ("邵琪是老师", "邵琪"), ("Sofia is Sofia, a vet", None)):
        assert without_self_naming(text, subject) == text  # nothing else to keep, another name, or no self-naming


def test_a_latin_key_word_is_found_only_where_a_word_starts():
    """MemoryBank stored "Emily is an AI companion" from a window whose only "ai" was inside
    "painting"; a stem still finds its inflections ("paint" in "painting")."""
    window = turns(("Emily", "I spent the weekend painting by the lake."), ("assistant", "How lovely! Oils or watercolours?"))
    assert "object" in grounded("Emily", "AI", "Emily is an AI companion", window)
    assert grounded("Emily", "painting", "Emily paints by the lake", window) is None
    assert grounded("Emily", "paint", "Emily likes to paint", window) is None
    mixed = turns(("李雷", "我周末用AI画画。"))
    assert grounded("李雷", "AI", "李雷用AI画画", mixed) is None  # a Han character ends a Latin word


def test_a_memory_said_to_the_user_is_about_the_user():
    from graphmem.extract.people import addressed

    assert addressed("Your boss is Zhou Min", "Your boss", "陆远") == ("陆远's boss is Zhou Min", "陆远's boss")
    assert addressed("You work in Hangzhou and you're happy", "you", "Lu Yuan") == (
        "Lu Yuan works in Hangzhou and Lu Yuan is happy", "Lu Yuan")
    assert addressed("You go by bike", "You", "Ana") == ("Ana goes by bike", "Ana")
    assert addressed("You have two cats", None, "Ana") == ("Ana has two cats", None)
    assert addressed("你的上司是周敏", "你的上司", "陆远") == ("陆远的上司是周敏", "陆远的上司")
    assert addressed("你在杭州工作", "你", "陆远") == ("陆远在杭州工作", "陆远")
    assert addressed("Li Na thanks you", "Li Na", "Li Na") == ("Li Na thanks you", "Li Na")  # not said to her
    assert addressed("Your boss is Zhou Min", "you", None) == ("Your boss is Zhou Min", "you")  # no one to name
    # a word between "you" and the verb, a verb in the past, a word that is no verb: as "I" reads them
    assert addressed("You sometimes walk to work", "you", "Ana")[0] == "Ana sometimes walks to work"  # was "sometimeses walk"
    assert addressed("You often drink tea", "you", "Ana")[0] == "Ana often drinks tea"
    assert addressed("You sold the bike and you don't drive", "you", "Ana")[0] == "Ana sold the bike and Ana doesn't drive"
    assert addressed("You and Tom went hiking", "you", "Ana")[0] == "Ana and Tom went hiking"
    assert addressed("You were in Rome", "you", "Ana")[0] == "Ana was in Rome"


def test_a_memory_in_the_speakers_own_words_names_the_speaker():
    """Batch 11's base window stored "I drink mint tea in the afternoon" (subject Mireille): read
    away from its turn, "I" is nobody."""
    from graphmem.extract.people import first_person

    assert first_person("I drink mint tea in the afternoon", "Mireille") == "Mireille drinks mint tea in the afternoon"
    assert first_person("My wife Chloe and I have a tortoise", "Mireille") == "Mireille's wife Chloe and Mireille have a tortoise"
    assert first_person("I'm vegetarian", "Ana") == "Ana is vegetarian" and first_person("I am a nurse", "Ana") == "Ana is a nurse"
    assert first_person("I also play the cello", "Ana") == "Ana also plays the cello"
    assert first_person("I sold the car", "Ana") == "Ana sold the car"
    assert first_person("I don't drink coffee", "Ana") == "Ana doesn't drink coffee"
    assert first_person("I didn't go and I can't swim", "Ana") == "Ana didn't go and Ana can't swim"
    assert first_person("I need a new job", "Ana") == "Ana needs a new job" and first_person("I moved", "Ana") == "Ana moved"
    assert first_person("I sometimes walk to work", "Ana") == "Ana sometimes walks to work"
    assert first_person("I and Tom went hiking", "Ana") == "Ana and Tom went hiking"
    # the name, then the speaker's own words (the relationship set's "Henrik Berg my favourite sport is rowing")
    assert first_person("Henrik Berg my favourite sport is rowing", "Henrik Berg") == "Henrik Berg's favourite sport is rowing"
    assert first_person("Henrik Berg, I work in Malmo", "Henrik Berg") == "Henrik Berg works in Malmo"
    assert first_person("Henrik Berg likes my dog", "Henrik Berg") == "Henrik Berg likes my dog"  # "my" of another sentence
    assert first_person("我每周五晚上学画画", "邓琳") == "邓琳每周五晚上学画画"
    assert first_person("我们周末去爬山", "邓琳") == "我们周末去爬山"  # "we" is not the speaker alone
    assert first_person("Indigo is my favourite colour", "Ana") == "Indigo is my favourite colour"  # opens otherwise
    assert first_person("I drink tea", None) == "I drink tea"


def test_relations_between_people_and_whom_a_memory_is_about():
    from graphmem.extract.people import Tie, about_whom, relation_of, ties
    from graphmem.extract.schema import ExtractedMemory

    names = ["Li Na", "Zhou Min", "Lena", "Tom Keller", "Sam", "Mei", "陆远", "周敏", "Priya", "Arjun"]
    assert ties("Li Na's manager is Zhou Min", names) == [Tie("Li Na", "manager", "Zhou Min")]
    assert ties("Zhou Min is Li Na's boss", names) == [Tie("Li Na", "manager", "Zhou Min")]
    assert ties("Lena's boss Tom Keller prefers email", names) == [Tie("Lena", "manager", "Tom Keller", on_target=True)]
    assert ties("Sam is flying to Beijing to see his sister Mei", names, "Sam") == [Tie("Sam", "sister", "Mei")]
    # "her" is not Sam once "his" said who Sam is: the sister the text just named (the relations set's
    # "Marek Nowak introduces his sister, Olga Berg, and her husband, Henrik Berg" gave Marek a husband)
    assert ties("Sam visits his sister, Mei, and her husband, Arjun", names, "Sam") == [
        Tie("Sam", "sister", "Mei"), Tie("Mei", "husband", "Arjun")]
    assert ties("Sam visits his wife Priya and her brother Arjun", names, "Sam") == [
        Tie("Sam", "wife", "Priya"), Tie("Priya", "brother", "Arjun")]
    assert ties("陆远的上司是周敏", names) == [Tie("陆远", "manager", "周敏")]
    assert ties("周敏是陆远的领导", names) == [Tie("陆远", "manager", "周敏")]
    assert ties("陆远的上司周敏讨厌开会", names) == [Tie("陆远", "manager", "周敏", on_target=True)]
    assert ties("Li Na likes Zhou Min's cooking", names) == [] and relation_of("老公") == relation_of("husband")

    def m(text, s, p, o):
        return ExtractedMemory(text=text, subject=s, predicate=p, object=o)

    out = about_whom([m("Priya's husband Arjun works at Infosys", "Priya", "works_at", "Infosys"),
                      m("Lena's boss Tom Keller prefers email", "Lena", "prefers", "Tom Keller"),
                      m("陆远的上司是周敏", "陆远", "supervisor", "周敏"),
                      m("陆远的上司讨厌周五下午开会", "陆远", "dislikes", "周五下午开会"),
                      m("Priya's mother runs a shop", "Priya", "runs", "shop"),
                      m("Priya's husband Arjun and I share a flat", "Priya", "spouse", "Arjun")], names)
    assert [(x.subject, x.object) for x, _ in out] == [("Arjun", "Infosys"), ("Tom Keller", None), ("陆远", "周敏"),
                                                        ("周敏", "周五下午开会"), ("Priya", "shop"), ("Priya", "Arjun")]
    assert [len(t) for _, t in out] == [1, 1, 1, 0, 0, 1]  # a memory of the relation itself stays its owner's


def test_a_relation_is_what_its_turn_says_whoever_the_model_made_it():
    """The model misread the relationship set's "My brother is Femi Okafor" (said by Ada Okafor)
    as "Leo Okafor is Femi Okafor's uncle", 我的姐姐是李娜 as (王磊, has_brother, 李娜), and wrote no
    memory at all for "My sister is Olga Berg": 20 of its 30 relations became the right edge."""
    from graphmem.extract.people import Tie, agrees, stated_ties
    from graphmem.extract.schema import ExtractedMemory
    from graphmem.lifecycle.fold import _relations_as_said

    names = ["Ada Okafor", "Femi Okafor", "Leo Okafor", "Olga Berg", "王磊", "李娜", "Tom Keller"]
    assert stated_ties("My brother is Femi Okafor.", "Ada Okafor", names) == [(Tie("Ada Okafor", "brother", "Femi Okafor"),
                                                                               "brother")]
    assert stated_ties("Had lunch with my boss, Tom Keller, today.", "Ada Okafor", names)[0][0].relation == "manager"
    assert stated_ties("我姐姐叫李娜。", "王磊", names) == [(Tie("王磊", "sister", "李娜"), "姐姐")]
    assert stated_ties("My sister is a nurse.", "Ada Okafor", names) == []  # no one named
    assert stated_ties("Femi Okafor is my brother's friend.", "Ada Okafor", names) == []
    said = Tie("Ada Okafor", "brother", "Femi Okafor")
    assert agrees(Tie("Ada Okafor", "brother", "Femi Okafor"), said)
    assert agrees(Tie("Femi Okafor", "sister", "Ada Okafor"), said)  # read from the other end
    assert not agrees(Tie("Femi Okafor", "uncle", "Ada Okafor"), said)
    assert not agrees(Tie("Leo Okafor", "uncle", "Femi Okafor"), said)

    window = turns(("Ada Okafor", "My brother is Femi Okafor."), ("王磊", "我的姐姐是李娜。"),
                   ("Olga Berg", "My son is Leo Okafor."), ("Ada Okafor", "Femi Okafor loves chess."))

    def m(text, s, p, o, n):
        return ExtractedMemory(text=text, subject=s, predicate=p, object=o, turns=[n]), [window[n - 1]]

    report = {"dropped": []}
    out = _relations_as_said(window, [m("Leo Okafor is Femi Okafor's uncle", "Leo Okafor", "uncle", "Femi Okafor", 1),
                                      m("王磊的姐姐是李娜", "王磊", "has_brother", "李娜", 2),
                                      m("Femi Okafor loves chess", "Femi Okafor", "loves", "chess", 4)], names, report)
    assert [(x.text, x.subject, x.predicate, x.object, [t.content for t in ts]) for x, ts in out] == [
        ("王磊的姐姐是李娜", "王磊", "sister", "李娜", ["我的姐姐是李娜。"]),  # the predicate the turn says
        ("Femi Okafor loves chess", "Femi Okafor", "loves", "chess", ["Femi Okafor loves chess."]),
        ("Ada Okafor's brother is Femi Okafor", "Ada Okafor", "brother", "Femi Okafor", ["My brother is Femi Okafor."]),
        ("Olga Berg's son is Leo Okafor", "Olga Berg", "son", "Leo Okafor", ["My son is Leo Okafor."])]
    assert [d["text"] for d in report["dropped"]] == ["Leo Okafor is Femi Okafor's uncle"]
    assert [x.turns for x, _ in out[2:]] == [[1], [3]]
    # a name the turn gives in two scripts is one person ("My manager is 周敏 (Zhou Min).")
    window = turns(("Li Na", "My manager is 周敏 (Zhou Min). She hates meetings on Friday afternoons."))
    kept = _relations_as_said(window, [(ExtractedMemory(text="Li Na's manager is Zhou Min", subject="Li Na",
                                                        predicate="manager", object="Zhou Min", turns=[1]), window)],
                              ["Li Na", "周敏", "Zhou Min"], report)
    assert [x.text for x, _ in kept] == ["Li Na's manager is Zhou Min"] and len(report["dropped"]) == 1
    # the turn's "my" copied into a memory is the turn's speaker's: the relation in the turn's words,
    # unless the memory says more than the relation
    window = turns(("Priya Raman", "My colleague is Lucy Park."), ("Nadia", "My boyfriend Tariq and I share a flat in Clifton."))
    kept = _relations_as_said(window, [
        (ExtractedMemory(text="Lucy Park is my colleague", subject="Lucy Park", predicate="colleague", object="Priya Raman",
                         turns=[1]), window[:1]),
        (ExtractedMemory(text="Nadia's boyfriend Tariq and I share a flat in Clifton", subject="Nadia",
                         predicate="partner", object="Tariq", turns=[2]), window[1:])],
        ["Priya Raman", "Lucy Park", "Nadia", "Tariq"], report)
    assert [(x.text, x.subject, x.object) for x, _ in kept] == [
        ("Priya Raman's colleague is Lucy Park", "Priya Raman", "Lucy Park"),
        ("Nadia's boyfriend Tariq and I share a flat in Clifton", "Nadia", "Tariq")]


def test_a_fact_is_the_speakers_who_said_it():
    """In a window several people speak in, the model gave one speaker's words to another: the
    held-out relationship households stored "Sven Lindqvist moved to Umea" (Erik Holm's "My office
    moved to Umea last year.") and "Sven Lindqvist finally finished that long novel" (said by Maja
    Holm and Nils Lindqvist)."""
    from graphmem.extract.people import whose
    from graphmem.extract.schema import ExtractedMemory

    window = turns(("Sven Lindqvist", "My office moved to Gothenburg last year."),
                   ("Erik Holm", "My office moved to Umea last year."),
                   ("Maja Holm", "I finally finished that long novel."),
                   ("Nils Lindqvist", "I finally finished that long novel."),
                   ("Erik Holm", "My brother-in-law Sven sails every weekend."),
                   ("王磊", "我养的宠物是一只金毛。"), ("李娜", "我养的宠物是一只鹦鹉。"))

    def m(text, s, o):
        return ExtractedMemory(text=text, subject=s, predicate="p", object=o, turns=[1])

    moved = whose(m("Sven Lindqvist moved to Umea", "Sven Lindqvist", "Umea"), window)
    assert (moved.text, moved.subject, moved.turns) == ("Erik Holm moved to Umea", "Erik Holm", [2])
    assert whose(m("Sven moved to Umea", "Sven", "Umea"), window).text == "Erik Holm moved to Umea"
    assert whose(m("Sven Lindqvist finished that long novel", "Sven Lindqvist", None), window) == \
        "said by Maja Holm and Nils Lindqvist, not by Sven Lindqvist"
    assert whose(m("Sven Lindqvist moved to Gothenburg", "Sven Lindqvist", "Gothenburg"), window) is None
    assert whose(m("Sven sails every weekend", "Sven Lindqvist", "sailing every weekend"), window) is None  # named there
    # a name no turn gives is the model's blend of two ("刘小雨" from 刘强 and 马小雨): the value's speaker's
    assert whose(m("Olga moved to Umea", "Olga", "Umea"), window).subject == "Erik Holm"
    named = [*window, *turns(("Maja Holm", "My friend Olga moved to Umea."))]
    assert whose(m("Olga moved to Umea", "Olga", "Umea"), named) is None  # a person the window names: not this rule's
    assert whose(m("王磊养了一只鹦鹉", "王磊", "鹦鹉"), window).text == "李娜养了一只鹦鹉"
    assert whose(m("王磊养了一只金毛", "王磊", "金毛"), window) is None
    # and a memory is read from the turns that state its value, not from the one beside them
    from graphmem.lifecycle.admission import source_turns
    assert [t.content for t in source_turns(m("王磊养了一只金毛", "王磊", "金毛"), window)] == ["我养的宠物是一只金毛。"]
    assert [t.speaker for t in source_turns(m("Erik Holm moved to Umea", "Erik Holm", "Umea"), window)] == ["Erik Holm"]
    alone = turns(("Sven Lindqvist", "I cycle."), ("assistant", "Erik Holm moved to Umea."))
    assert whose(m("Sven Lindqvist moved to Umea", "Sven Lindqvist", "Umea"), alone) is None  # one speaker


def test_the_assistants_words_are_not_the_users_unless_taken_up():
    window = turns(("Eva", "I need a new laptop for video editing."),
                   ("assistant", "A MacBook Pro with 32 GB of RAM would suit you."), ("Eva", "Maybe, I'll compare prices."))
    assert unconfirmed_assistant_words(window[1:2], window) and not unconfirmed_assistant_words(window[:1], window)
    booked = turns(("Jonas", "Any hotel near the main station?"), ("assistant", "The Motel One at Hauptbahnhof."),
                   ("Jonas", "Perfect, I booked it for March 3 to 5."))
    assert not unconfirmed_assistant_words(booked[1:2], booked)
    zh = turns(("高远", "东站附近有酒店吗？"), ("assistant", "全季酒店离东站很近。"), ("高远", "好，我订了三月三号到五号。"))
    assert not unconfirmed_assistant_words(zh[1:2], zh)
    for later in ("Okay, thank you for your recommendations. I will take a look.", "Hmm, I'll think about it."):
        tips = turns(("Emily", "Any good books?"), ("assistant", "I recommend The Little Prince."), ("Emily", later))
        assert unconfirmed_assistant_words(tips[1:2], tips), later
    for taken in ("I'll take it.", "I will order it today."):
        tips = turns(("Emily", "Any good books?"), ("assistant", "I recommend The Little Prince."), ("Emily", taken))
        assert not unconfirmed_assistant_words(tips[1:2], tips), taken


def test_a_fact_only_the_assistant_said_is_dropped_whichever_turn_the_model_cites():
    from graphmem.extract.schema import ExtractedMemory
    from graphmem.lifecycle.admission import assistant_words

    window = turns(("韩梅", "推荐个播客吧？我喜欢历史和悬疑，不要政治类的。"), ("assistant", "可以听《文化有限》。"))
    podcast = ExtractedMemory(text="韩梅推荐《文化有限》", subject="韩梅", predicate="recommends", object="《文化有限》")
    assert assistant_words(podcast, window[:1], window, window[:1])  # cited to her question: the assistant's words
    assert assistant_words(podcast, window[1:], window, window[:1])
    history = ExtractedMemory(text="韩梅喜欢历史类播客", subject="韩梅", predicate="likes", object="历史")
    assert not assistant_words(history, window[:1], window, window[:1])
    booked = turns(("Jonas", "Any hotel near the main station?"), ("assistant", "The Motel One at Hauptbahnhof."),
                   ("Jonas", "Perfect, I booked it for March 3 to 5."))
    motel = ExtractedMemory(text="Jonas booked the Motel One", subject="Jonas", predicate="booked", object="Motel One")
    assert not assistant_words(motel, booked[2:], booked, [booked[0], booked[2]])  # taken up: his booking


def test_the_speaker_is_the_subject_of_i_and_the_user():
    assert same_subject("Daniel", "Daniel Ortiz") and not same_subject("Daniel's wife", "Daniel")
    assert resolve_subject("the user", "Dan") == "Dan" and resolve_subject("我", "王强") == "王强"
    assert resolve_subject("Dan's wife", "Dan") == "Dan's wife" and resolve_subject("I", None) == "I"


def test_synonym_predicates_meet_and_a_named_change_replaces_the_old_value():
    assert canonical_predicate("write_backend") == canonical_predicate("use_backend") == "uses_backend"
    assert canonical_predicate("住在") == canonical_predicate("relocated_to") == "lives_in"
    old = fact_of("old", "Dan starts every morning with a coffee", "Dan", "habits", "coffee")
    new = fact_of("", "Dan switched from coffee to tea in the mornings", "Dan", "drinks", "tea")
    change = replaced_terms(turns(("Dan", "My doctor made me switch from coffee to tea in the mornings.")))
    assert decide(new, [(old, 0.5)], change).action == "supersede"
    assert decide(new, [(old, 0.5)]).action == "add"  # without the change turn: two facts
    # "still a product manager": the job title the window restates is not retired
    title = fact_of("t", "陈静在百度当产品经理", "陈静", "works_as", "产品经理")
    moved = fact_of("", "陈静现在在美团做产品经理", "陈静", "works_at", "美团")
    assert decide(moved, [(title, 0.6)], replaced_terms(turns(("陈静", "我换工作了，现在在美团，还是做产品经理。")))).action == "add"
    # "prefer Julia over Python" after "I changed my mind" replaces the Python preference
    python = fact_of("p", "Maya prefers Python over R", "Maya", "likes", "Python")
    julia = fact_of("", "Maya likes Julia over Python", "Maya", "likes", "Julia")
    mind = replaced_terms(turns(("Maya", "I changed my mind: for data analysis I now prefer Julia over Python.")))
    assert decide(julia, [(python, 0.7)], mind).action == "supersede"
    # a second value of a many-valued attribute is added beside the first
    spanish = fact_of("s", "Kenji is learning Spanish", "Kenji", "learning", "Spanish")
    portuguese = fact_of("", "Kenji is learning Portuguese", "Kenji", "studies", "Portuguese")
    assert decide(portuguese, [(spanish, 0.7)]).action == "add"


def test_a_restated_old_value_does_not_keep_it_standing():
    # "Django is gone": the model's "Daniel is using Django" retells the old value and is dropped
    django = fact_of("d", "Daniel writes all our backend services in Django", "Daniel", "develops", "Django")
    gone = replaced_terms(turns(("Daniel", "Big change at work: we rewrote the backend services in FastAPI, Django is gone.")))
    assert states_a_replaced_value(fact_of("", "Daniel is using Django", "Daniel", "uses", "Django"), [django], gone)
    fastapi = fact_of("", "Daniel rewrote the backend services in FastAPI", "Daniel", "rewrote", "backend services")
    assert not states_a_replaced_value(fastapi, [django], gone)
    left = replaced_terms(turns(("Kenji", "I left Riverside School and now teach at Hillcrest Academy.")))
    riverside = fact_of("r", "Kenji is a maths teacher at Riverside School", "Kenji", "works_at", "Riverside School")
    assert states_a_replaced_value(fact_of("", "Kenji leaves Riverside", "Kenji", "works_at", "Riverside"), [riverside], left)
    # the old memory's words with the new value in them: the old one is replaced, not restated
    coffee = fact_of("c", "Daniel starts every morning with a strong coffee", "Daniel", "starts", "morning")
    switch = replaced_terms(turns(("Daniel", "My doctor made me switch from coffee to tea in the mornings.")))
    tea = fact_of("", "Daniel starts morning with tea instead of coffee", "Daniel", "starts", "morning")
    assert not states_a_replaced_value(tea, [coffee], switch) and says_again_what_changed(tea, coffee, switch)
    assert not says_again_what_changed(tea, coffee, frozenset())  # no change turn: a plain restatement
    # a stored object written in another language than its text: the text's words stand for it
    drink = fact_of("w", "王强每天早上喝咖啡", "王强", "drinks", "coffee")
    tea_zh = fact_of("", "王强改喝绿茶", "王强", "drinks", "绿茶")
    doctor = replaced_terms(turns(("王强", "医生让我早上别喝咖啡了，我现在改喝绿茶。")))
    assert decide(tea_zh, [(drink, 0.4)], doctor).action == "supersede"
    # "还在腾讯" keeps the employer: only the move is a change
    assert "腾讯" not in "".join(replaced_terms(turns(("王强", "上个月我调到了杭州办公室，还在腾讯。"))))


def test_a_change_swaps_one_value_inside_a_memory_that_says_more():
    def swap(text, s, p, o, old, turn, places=(), old_places=()):
        said = turns((s, turn))
        return carried_over(fact_of("", text, s, p, o), old, replaced_terms(said), kept_terms(said), places, old_places,
                            left_terms(said))

    # a move: the one place of a memory about where one works; the employer (even tagged as a
    # place) and what the turn keeps stay
    munich = fact_of("m", "Daniel Ortiz is a backend developer at Contoso in Munich", "Daniel", "works_at", "Contoso")
    assert swap("Daniel relocated to Hamburg", "Daniel", "lives_in", "Hamburg", munich,
                "I relocated to Hamburg last month, same company, new office.", ["Hamburg"],
                ["Munich", "Contoso"]) == ("Munich", "Hamburg")
    shenzhen = fact_of("s", "王强是深圳的腾讯后端开发人员", "王强", "works_at", "腾讯")
    assert swap("王强调到了杭州办公室", "王强", "works_at", "杭州办公室", shenzhen, "上个月我调到了杭州办公室，还在腾讯。",
                ["杭州"], ["深圳"]) == ("深圳", "杭州")
    django = fact_of("d", "Daniel writes all our backend services in Django", "Daniel", "develops", "Django")
    assert swap("Daniel relocated to Hamburg", "Daniel", "lives_in", "Hamburg", django,
                "I relocated to Hamburg last month.", ["Hamburg"], ["Django"]) is None  # not a memory of a place
    # a move within the city from one district to another: the workplace's city stays (held out 13)
    lagos = fact_of("l", "Nkechi is a sound engineer at a radio station in Lagos", "Nkechi", "works_at", "radio station")
    assert swap("Nkechi and Ada moved from Yaba to Surulere", "Nkechi", "moved_to", "Surulere", lagos,
                "Ada and I moved from Yaba to Surulere in January.", ["Yaba", "Surulere"], ["Lagos"]) is None
    vienna = fact_of("v", "Lena is a nurse at a clinic in Vienna", "Lena", "works_at", "clinic")
    assert swap("Lena moved from Vienna to Salzburg", "Lena", "moved_to", "Salzburg", vienna,
                "We moved from Vienna to Salzburg.", ["Vienna", "Salzburg"], ["Vienna"]) == ("Vienna", "Salzburg")
    # the model's object names the value left: "viola orchestra" is no new orchestra (held out 14)
    viola = fact_of("b", "Beatriz plays the viola in an amateur orchestra", "Beatriz", "plays_in", "viola orchestra")
    assert swap("Beatriz switches from viola to cello", "Beatriz", "switches", "viola orchestra", viola,
                "I switched from viola to cello in the orchestra this season.") is None
    shifts = fact_of("n", "Ines works night shifts at the bakery", "Ines", "works", "night shifts")
    assert swap("Ines works day shifts now", "Ines", "works", "day shifts", shifts,
                "I moved from night shifts to day shifts.") == ("night shifts", "day shifts")
    # a new home that is no move of the job: the workplace's city stays (held out 12 had moved it)
    norwich = fact_of("n", "Rafael Costa is a pharmacist at a chain store in Norwich", "Rafael", "works_at", "chain store")
    assert swap("Rafael lives in Thorpe", "Rafael", "lives_in", "Thorpe", norwich,
                "Joel and I left Eaton for a terraced house in Thorpe.", ["Thorpe"], ["Norwich"]) is None
    assert swap("Rafael moved to Thorpe", "Rafael", "lives_in", "Thorpe", norwich,
                "We moved to Thorpe.", ["Thorpe"], ["Norwich"]) == ("Norwich", "Thorpe")
    # the same attribute, when the turn keeps the rest ("还是做产品经理")
    baidu = fact_of("b", "陈静是陈静，在百度当产品经理", "陈静", "works_at", "百度")
    assert swap("陈静在美团工作", "陈静", "works_at", "美团", baidu, "我换工作了，现在在美团，还是做产品经理。") == ("百度", "美团")
    # ... but not when the rest is said against the old value: the candidate replaces it whole
    python = fact_of("p", "Maya prefers Python over R for all her analysis work", "Maya", "prefers_language", "Python")
    assert swap("Maya prefers Julia over Python", "Maya", "prefers_language", "Julia", python,
                "Our team switched languages, still the same team. I now prefer Julia over Python.") is None
    # a value of the same head: 夜班 -> 白班 (a word's end, never across words: 叫团 in 叫团子)
    night = fact_of("n", "张丽在协和医院ICU上夜班，是护士", "张丽", "works_at", "协和医院ICU")
    assert swap("张丽开始改上白班", "张丽", "starts_work", "白班", night, "这个月开始我改上白班了。") == ("夜班", "白班")
    cat = fact_of("c", "陈静和男朋友住在北京，养了一只猫叫团子", "陈静", "lives_in", "北京")
    assert swap("陈静在美团工作", "陈静", "works_at", "美团", cat, "我换工作了，现在在美团。") is None
    shifts = fact_of("g", "Grace works night shifts as an ICU nurse", "Grace", "works_as", "ICU nurse")
    assert swap("Grace works day shifts", "Grace", "works", "day shifts", shifts,
                "I switched to day shifts this month.") == ("night shifts", "day shifts")
    # what the candidate left is not a new value; no change turn, no swap
    assert swap("Daniel left Munich", "Daniel", "lives_in", "Munich", munich, "I left Munich.") is None
    assert swap("Daniel lives in Hamburg", "Daniel", "lives_in", "Hamburg", munich, "I love Hamburg.", ["Hamburg"],
                ["Munich"]) is None


def test_a_candidate_only_replaces_what_the_turn_says_changed():
    # "besides", "除了": a second value of the same attribute stands beside the first
    spanish = fact_of("s", "刘建国正在学西班牙语", "刘建国", "language", "西班牙语")
    both = fact_of("", "刘建国在学葡萄牙语", "刘建国", "language", "葡萄牙语")
    assert decide(both, [(spanish, 0.6)], adds=adds_a_value(turns(("刘建国", "除了西班牙语，我现在也在学葡萄牙语。")))).action == "add"
    assert adds_a_value(turns(("Emma", "Besides climbing, I've started running."))) and not adds_a_value(turns(("Emma", "I run.")))
    # a value that only points at one ("a new office") replaces nothing
    contoso = fact_of("c", "Daniel is a backend developer at Contoso", "Daniel", "works_at", "Contoso")
    assert is_vague("a new office") and is_vague("the same company") and not is_vague("Newcastle")
    assert decide(fact_of("", "Daniel is at a new office", "Daniel", "works_at", "new office"), [(contoso, 0.5)]).action == "add"
    # two sentiments of one polarity about the same thing are one fact, not a change
    arsenal = fact_of("a", "Kenji's favourite football team is Arsenal", "Kenji", "prefers_team", "Arsenal")
    supports = fact_of("", "Kenji supports Arsenal", "Kenji", "favourite_team", "Arsenal")
    assert decide(supports, [(arsenal, 0.6)]).action == "merge"
    # a value named by its short form ("sold the Civic") is named
    civic = fact_of("h", "Kenji drives a 2015 Honda Civic", "Kenji", "drives", "Honda Civic")
    niro = fact_of("", "Kenji bought an electric Kia Niro", "Kenji", "bought", "electric Kia Niro")
    sold = replaced_terms(turns(("Kenji", "I sold the Civic and bought an electric Kia Niro.")))
    assert decide(niro, [(civic, 0.58)], sold).action == "supersede"


def test_a_value_the_text_does_not_state_or_the_turn_keeps_replaces_nothing(embedder):
    """Read from held-out batch 7's wrong retirements, measured on batch 8: the model's
    predicate says ``lives_in`` where its text says a commute ("on the bus": no new home), and
    "还是在南京" keeps the city, so it is no new value of the district."""
    from graphmem.lifecycle.attributes import Attributes

    attrs = Attributes(embedder)
    flat = fact_of("f", "Hannah Brandt lives in Schwachhausen", "Hannah Brandt", "lives_in", "Schwachhausen")
    bus = fact_of("", "Hannah Brandt is on the bus these days", "Hannah Brandt", "lives_in", "bus")
    assert decide(bus, [(flat, 0.5)], attribute=attrs.of).action == "add"
    assert decide(bus, [(flat, 0.5)]).action == "supersede"  # the predicate alone
    moved = fact_of("", "Hannah Brandt lives in Findorff", "Hannah Brandt", "lives_in", "Findorff")
    assert decide(moved, [(flat, 0.5)], attribute=attrs.of).action == "supersede"  # her name reads as a partner; her text does not
    boots = fact_of("b", "Ravi Menon is a pharmacist at a Boots in Glasgow", "Ravi", "works_at", "Boots")
    lloyds = fact_of("", "Ravi is a pharmacist at Lloyds Pharmacy", "Ravi", "works_at", "Lloyds Pharmacy")
    assert decide(lloyds, [(boots, 0.5)], attribute=attrs.of).action == "supersede"  # a job reads as work
    gulou = fact_of("g", "邵琪住在鼓楼区，每天坐公交上班", "邵琪", "lives_in", "鼓楼区")
    stays = turns(("邵琪", "我调到一所小学教书了，还是在南京。"))
    nanjing = fact_of("", "邵琪住在南京，每天坐公交上班", "邵琪", "lives_in", "南京")
    assert carried_over(nanjing, gulou, replaced_terms(stays), kept_terms(stays), ["南京"], ["鼓楼区"]) is None
    there = fact_of("", "邵琪在南京", "邵琪", "lives_in", "南京", said=stays[0].content)
    assert decide(there, [(gulou, 0.5)]).action == "add"
    assert decide(fact_of("", "邵琪在南京", "邵琪", "lives_in", "南京"), [(gulou, 0.5)]).action == "supersede"
    moves = turns(("邵琪", "我们从鼓楼区搬到建邺区了。"))
    jianye = fact_of("", "邵琪住在建邺区", "邵琪", "lives_in", "建邺区")
    assert carried_over(jianye, gulou, replaced_terms(moves), kept_terms(moves), ["建邺区"], ["鼓楼区"]) == ("鼓楼区", "建邺区")


def test_an_event_or_a_many_valued_attribute_replaces_nothing_by_its_predicate_alone():
    # seen on LoCoMo: each photo Gina shared retired the one before it; a passion retired another
    students = fact_of("s", "Gina shares a photo of her students doing a dance routine", "Gina", "shares_photo",
                       "students doing a dance routine")
    event = fact_of("", "Gina shares a photo of the event", "Gina", "shares_photo", "event")
    assert decide(event, [(students, 0.6)]).action == "add"
    dancing = fact_of("d", "Jon is passionate about dancing", "Jon", "passion", "dancing")
    assert decide(fact_of("", "Jon loves fashion", "Jon", "passion", "fashion"), [(dancing, 0.6)]).action == "add"
    thanked = fact_of("t", "陈静感谢王强的帮助", "陈静", "感谢", "王强的帮助")
    assert decide(fact_of("", "陈静感谢李娜的礼物", "陈静", "感谢", "李娜的礼物"), [(thanked, 0.6)]).action == "add"
    sunset = fact_of("p", "Caroline paints a sunset with a palm tree", "Caroline", "paints", "sunset with a palm tree")
    portrait = fact_of("", "Caroline paints a self-portrait", "Caroline", "paints", "self-portrait")
    assert decide(portrait, [(sunset, 0.6)]).action == "add"  # seen on LoCoMo: each painting retired the last
    for event_predicate in ("shared_photo", "visits", "thanked", "went_to", "chatting_about", "paints", "drew",
                            "分享照片", "画了"):
        assert is_event(event_predicate), event_predicate
    for attribute in ("lives_in", "works_at", "drives", "prefers_language", "favourite_team", "is_a", "住在"):
        assert not is_event(attribute), attribute
    # an attribute still changes by its predicate, and an event still changes when the turn says so
    munich = fact_of("m", "Daniel lives in Munich", "Daniel", "lives_in", "Munich")
    assert decide(fact_of("", "Daniel lives in Hamburg", "Daniel", "lives_in", "Hamburg"), [(munich, 0.6)]).action == "supersede"
    gym = fact_of("g", "Emma goes climbing every Thursday", "Emma", "goes", "climbing")
    swim = fact_of("", "Emma goes swimming on Thursdays", "Emma", "goes", "swimming")
    assert decide(swim, [(gym, 0.6)], replaced_terms(turns(("Emma", "I stopped climbing, I go swimming instead.")))
                  ).action == "supersede"


def test_what_one_left_named_by_part_of_its_value_ends_it():
    # "the Picanto" one sold is the "red Kia Picanto" one drove (held out 13 had kept it)
    kia = fact_of("k", "Nkechi drives a red Kia Picanto", "Nkechi", "drives", "red Kia Picanto")
    sold = turns(("Nkechi", "I sold the Picanto last month, the BRT bus is easier in this traffic."))
    picanto = fact_of("", "Nkechi sold the Picanto last month", "Nkechi", "sold", "Picanto")
    assert decide(picanto, [(kia, 0.6)], replaced_terms(sold)).action == "supersede"
    radio = fact_of("r", "Nkechi is a sound engineer at a radio station in Lagos", "Nkechi", "works_at", "radio station in Lagos")
    quits = fact_of("", "Nkechi quits the radio station", "Nkechi", "quit", "radio station")
    assert decide(quits, [(radio, 0.6)], replaced_terms(turns(("Nkechi", "I quit the radio station.")))).action == "supersede"
    # a word the stored value does not hold is no part of it
    bike = fact_of("", "Nkechi sold her bike", "Nkechi", "sold", "bike")
    assert decide(bike, [(kia, 0.6)], replaced_terms(turns(("Nkechi", "I sold my bike.")))).action == "add"
    # ... and where no turn says it was left, a value named by part of the stored one says it again:
    # "今天书店来了一批新书" gave works_at 书店 against works_at 杭州书店 (held out 15 had retired it)
    shop = fact_of("s", "包晓燕在杭州一家书店当店长", "包晓燕", "works_at", "杭州书店")
    again = fact_of("", "包晓燕来书店工作", "包晓燕", "works_at", "书店")
    assert decide(again, [(shop, 0.6)], replaced_terms(turns(("包晓燕", "今天书店来了一批新书，忙了一整天。")))).action == "add"
    cafe = fact_of("", "包晓燕在杭州开了家咖啡馆", "包晓燕", "works_at", "咖啡馆")
    assert decide(cafe, [(shop, 0.6)]).action == "supersede"


def test_a_denied_change_cue_is_no_change():
    # seen on LoCoMo: "Don't quit" and "I won't quit, no matter what" retired memories of the window
    for denied in ("Don't quit, remember, failures lead you closer to success.", "Thanks! I won't quit, no matter what.",
                   "Don't let anything stop you.", "I didn't change jobs.", "我不会离职的。", "别换工作。"):
        assert not change_words(denied) and not replaced_terms(turns(("Jon", denied))), denied
    for said in ("I quit my job at the bank.", "I switched to tea.", "I don't drink coffee any more.", "我离职了。",
                 "我不再喝咖啡了。", "早上不喝红枣茶了。", "我从酒店出来了，自己开了个小饭馆。", "我们上个月结束了这段感情。",
                 "健身卡取消了。", "I cancelled my gym membership.", "She gives up the flat in May.",
                 "Gaston died in the spring.", "豆豆上个月老死了。", "我现在不用Django了。", "物流公司的工作我辞了。",
                 "从书店出来以后，我开了家咖啡馆。"):
        assert replaced_terms(turns(("Jon", said))), said
    # 已经不错 (quite good), 不 of a taste; 不用 of an offer declined ("no, thanks", "don't worry")
    for same in ("这样已经不错了。", "我不喜欢喝茶。", "不用了，谢谢。", "不用客气。", "不用担心，我自己来。"):
        assert not change_words(same), same


def test_no_example_of_the_prompt_can_be_stored():
    examples = example_memories()
    assert len(examples) >= 5 and all(e in SYSTEM_PROMPT for e in examples)
    assert copies_an_example("Tom Berg is a nurse at Ullevaal hospital", "I'm a nurse too, but I live in Bergen")
    assert copies_an_example("Tomas is a nurse", "I'm a nurse too, but I live in Bergen") is None
    assert copies_an_example("Tom prefers tea over coffee", "Tom: I prefer tea over coffee") is None  # the window says it


def test_what_a_change_left_and_where_it_went():
    from graphmem.extract.checks import destinations, left_phrases, origins

    assert left_phrases("We moved from Vienna to Salzburg in June.") == ["Vienna"]
    assert destinations("We moved from Vienna to Salzburg in June.") == ["Salzburg"]
    assert left_phrases("我从雁塔区搬到了高新区。") == ["雁塔区"] and destinations("我从雁塔区搬到了高新区。") == ["高新区"]
    assert origins("我从华为跳到了OPPO，岗位没变") == {"华为"}
    assert left_phrases("I swapped the spin class for yoga.") == ["the spin class"]
    assert left_phrases("I took a flight from Paris to Rome.") == [] and destinations("a train from Paris to Rome") == []
    for ended in ("Tariq and I split up in March.", "Elin and I ended things.", "The vegan years are behind me.",
                  "我和何磊已经不在一起了。", "面馆转让出去了。", "我已经不跳广场舞了。", "The Lidl near me closed, so I shop at ICA now.",
                  "楼下的超市倒闭了。", "烟我已经彻底不抽了。"):
        assert replaced_terms(turns(("Ann", ended))), ended
    for same in ("The office is closed on Mondays.", "I closed the deal with Initech.", "I stopped by the bakery."):
        assert not replaced_terms(turns(("Ann", same))), same


def test_a_change_is_caught_by_the_attribute_it_changes(embedder):
    from graphmem.lifecycle.attributes import Attributes

    attribute = Attributes(embedder).of
    bus = fact_of("", "Nadia takes the bus to work", "Nadia", "commutes", "bus")
    cycles = fact_of("c", "Nadia cycles to work every day", "Nadia", "hobbies", "cycling")
    assert decide(bus, [(cycles, 0.6)], attribute=attribute).action == "supersede"  # one commute, by meaning
    assert decide(bus, [(cycles, 0.6)]).action == "add"  # by the predicates' names: two facts
    fish = fact_of("", "Aisha eats fish again", "Aisha", "diet", "fish")
    assert decide(fish, [(fact_of("v", "Aisha is vegan", "Aisha", "diet", "vegan"), 0.6)],
                  attribute=attribute).action == "supersede"
    # a value held beside others is not replaced: a second pastime, a second language
    crossword = fact_of("", "Nadia does the crossword every night", "Nadia", "does", "crossword")
    chess = fact_of("h", "Nadia plays chess online most evenings", "Nadia", "hobbies", "chess")
    assert decide(crossword, [(chess, 0.5)], attribute=attribute).action == "add"
    portuguese = fact_of("", "Bastian starts a Portuguese course", "Bastian", "studies_language", "Portuguese")
    italian = fact_of("i", "Bastian studies Italian on Duolingo", "Bastian", "studies_language", "Italian")
    assert decide(portuguese, [(italian, 0.5)], adds=True, attribute=attribute).action == "add"
    # a memory that says more than the attribute is left to the rules that swap one value in it
    car = fact_of("m", "马骏开了一辆白色的丰田卡罗拉，住在雁塔区", "马骏", "drives", "丰田卡罗拉")
    byd = fact_of("", "马骏现在开比亚迪", "马骏", "owns", "比亚迪")
    assert decide(byd, [(car, 0.6)], attribute=attribute).action == "add"
    # a relation the window says is over
    ended = fact_of("", "Hugo and Elin end things in August", "Hugo", "ends_relationship", "Elin")
    assert decide(ended, [(fact_of("e", "Hugo Lindqvist is dating Elin", "Hugo Lindqvist", "relationship", "Elin"), 0.5)]
                  ).action == "supersede"


def test_what_is_over_leaves_a_memory_that_says_more():
    from graphmem.lifecycle.swaps import without_clause

    quit_ = turns(("赵海洋", "烟我已经彻底不抽了，快半年了。"))  # 已经 ... 不 with an adverb between: a change all the same
    stopped = fact_of("", "赵海洋已经彻底不抽了", "赵海洋", "smokes", "none")
    mixed = fact_of("m", "赵海洋抽烟十几年了，最爱喝冰可乐", "赵海洋", "drinks", "冰可乐")
    assert without_clause(stopped, mixed, replaced_terms(quit_)) == ("赵海洋最爱喝冰可乐", True)
    sold = turns(("Hugo", "I left the orchestra and sold my cello."))
    cello = fact_of("", "Hugo sold his cello", "Hugo", "sold", "cello")
    both = fact_of("b", "Hugo Lindqvist plays the cello in a community orchestra and is dating Elin", "Hugo Lindqvist",
                   "plays", "cello")
    assert without_clause(cello, both, replaced_terms(sold)) == ("Hugo Lindqvist is dating Elin", False)
    # one clause, a subject that does not lead, no clause named, or a visit ("stopped by") is no change
    assert without_clause(cello, fact_of("c", "Hugo plays the cello", "Hugo", "plays", "cello"), replaced_terms(sold)) is None
    assert without_clause(cello, fact_of("d", "Every week Hugo plays the cello and swims", "Hugo", "plays", "cello"),
                          replaced_terms(sold)) is None
    assert without_clause(cello, fact_of("e", "Hugo swims and reads", "Hugo", "swims", "pool"), replaced_terms(sold)) is None
    # two values of one clause ("jazz and chess", "跑步、游泳") are not two clauses: the rules for values handle them
    assert without_clause(fact_of("", "Hugo no longer listens to jazz", "Hugo", "likes", "none"),
                          fact_of("g", "Hugo likes jazz and chess", "Hugo", "likes", "jazz"),
                          replaced_terms(turns(("Hugo", "I stopped listening to jazz.")))) is None
    assert without_clause(fact_of("", "林晓已经不跑步了", "林晓", "hobbies", "none"),
                          fact_of("h", "林晓喜欢跑步、游泳", "林晓", "hobbies", "跑步"),
                          replaced_terms(turns(("林晓", "我已经不跑步了。")))) is None
    # a candidate that states what replaced the value leaves the rest standing too (held out 7 had
    # replaced the whole memory and lost the Audi)
    football = turns(("蒋涛", "膝盖受伤后足球不踢了，改打羽毛球。"))  # 不 + a verb + 了: no longer
    badminton = fact_of("", "蒋涛膝盖受伤后改打羽毛球", "蒋涛", "plays", "羽毛球")
    audi = fact_of("j", "蒋涛每周二踢足球，开一辆黑色的奥迪", "蒋涛", "plays", "足球")
    assert without_clause(badminton, audi, replaced_terms(football), left_said(football)) == ("蒋涛开一辆黑色的奥迪", False)
    assert without_clause(badminton, audi, replaced_terms(football)) is None  # nothing said to be left
    # ... but only a clause naming what the turn says was left: "our team switched languages" left no
    # team, so "no seafood restaurants for team dinners" stays (the sample conversation had lost it)
    switched = turns(("Maya", "Quick update: our team switched languages. I now prefer Julia over Python for analysis."))
    julia = fact_of("", "Maya prefers Julia over Python for analysis", "Maya", "prefers_language", "Julia")
    shellfish = fact_of("s", "Maya is allergic to shellfish, so no seafood restaurants for team dinners please", "Maya",
                        "allergic_to", "shellfish")
    assert "team" in replaced_terms(switched) and not left_said(switched)
    assert without_clause(julia, shellfish, replaced_terms(switched), left_said(switched)) is None
    visit = turns(("Hugo", "I stopped by the bakery."))
    assert not replaced_terms(visit) and without_clause(
        fact_of("", "Hugo stopped by the bakery", "Hugo", "visited", "bakery"),
        fact_of("f", "Hugo buys bread at the bakery and drinks tea", "Hugo", "buys", "bread"), replaced_terms(visit)) is None


def test_a_drink_at_another_time_of_day_is_another_habit():
    from graphmem.lifecycle.rules import at_other_times

    latte = fact_of("l", "Jonah drinks an oat-milk latte every morning", "Jonah", "drinks", "oat-milk latte")
    # the model left the time out of its memory: the turn it cites still says it
    tea = fact_of("", "Jonah drinks green tea at his desk", "Jonah", "drinks", "green tea",
                  said="In the afternoons I drink green tea at my desk.")
    assert at_other_times(tea, latte) and decide(tea, [(latte, 0.7)]).action == "add"
    swapped = fact_of("", "Jonah drinks black coffee", "Jonah", "drinks", "black coffee",
                      said="No more lattes in the morning, I take my coffee black now.")
    assert not at_other_times(swapped, latte)  # the same morning: a new value of one habit
    milk = fact_of("m", "何静每天晚上睡前喝一杯热牛奶", "何静", "drinks", "热牛奶")
    coffee = fact_of("", "何静在上课前会喝一杯咖啡", "何静", "drinks", "咖啡", said="上午上课前我会喝一杯咖啡。")
    assert at_other_times(coffee, milk)
    # a memory that names no time says nothing about it
    assert not at_other_times(fact_of("", "Jonah drinks green tea", "Jonah", "drinks", "green tea"), latte)


def test_a_move_swaps_the_place_it_left_wherever_it_is_named():
    moved = fact_of("", "Lucas moves from Vienna to Salzburg", "Lucas", "moved_from", "Vienna")
    chef = fact_of("w", "Lucas Meyer is a chef at Bellini's in Vienna", "Lucas", "works_at", "Bellini's")
    said = turns(("Lucas", "We moved from Vienna to Salzburg in June."))
    assert carried_over(moved, chef, replaced_terms(said), kept_terms(said), [], ["Vienna"]) == ("Vienna", "Salzburg")
    passing = fact_of("c", "马骏开了一辆白色的丰田卡罗拉，住在雁塔区", "马骏", "drives", "丰田卡罗拉")
    home = fact_of("", "马骏从雁塔区搬到了高新区", "马骏", "lives_in", "高新区")
    said = turns(("马骏", "我从雁塔区搬到了高新区。"))
    assert carried_over(home, passing, replaced_terms(said), kept_terms(said), [], []) == ("雁塔区", "高新区")
    # a place inside a name is no place: 海洋 of 赵海洋
    job = fact_of("j", "赵海洋是华为做测试工程师", "赵海洋", "works_at", "华为")
    moved = fact_of("", "赵海洋搬到惠州", "赵海洋", "lives_in", "惠州")
    said = turns(("赵海洋", "上个月我从东莞搬去了惠州。"))
    assert carried_over(moved, job, replaced_terms(said), kept_terms(said), ["惠州"], ["海洋"]) is None


@pytest.fixture(scope="module")
def recorded():
    # the whole set on the model's recorded replies; a prompt without one is an error, never a made-up reply
    return evaluate()


FLOORS = {  # what the recorded run reached (docs/benchmarks.md: "Extraction quality"); a change that lowers one fails
    "en": {"recall": 0.87, "precision": 0.96, "attribution": 0, "language": 1.0, "sup_precision": 1.0, "sup_recall": 1.0,
           "false_drops": 0, "relations": 4},
    "zh": {"recall": 0.91, "precision": 0.92, "attribution": 3, "language": 0.98, "sup_precision": 1.0, "sup_recall": 1.0,
           "false_drops": 0, "relations": 1},
    "en held out": {"sup_precision": 1.0, "sup_recall": 1.0},
    "zh held out": {"sup_precision": 1.0, "sup_recall": 0.75},
    "en held out 2": {"sup_precision": 1.0, "sup_recall": 1.0},
    "zh held out 2": {"sup_precision": 1.0, "sup_recall": 0.5},
    "en held out 3": {"sup_precision": 1.0, "sup_recall": 0.85},  # issue 46's batch: 0.21 as first asked
    "zh held out 3": {"sup_precision": 1.0, "sup_recall": 0.81},  # 0.25, precision 0.80, as first asked
    "en held out 4": {"sup_precision": 1.0, "sup_recall": 0.62},  # 0.80 / 0.38 as first asked
    "zh held out 4": {"sup_precision": 1.0, "sup_recall": 0.75},  # 0.83 / 0.50 as first asked
    "en held out 5": {"sup_precision": 0.66, "sup_recall": 0.4},  # 0.50 / 0.20 as first asked
    "zh held out 5": {"sup_precision": 1.0, "sup_recall": 0.66},  # 0.67 / 0.33 as first asked
    "en held out 6": {"sup_precision": 1.0, "sup_recall": 0.42, "kept_lost": 1},  # as first asked (stop 71)
    "zh held out 6": {"sup_precision": 1.0, "sup_recall": 0.71},  # as first asked
    "en held out 7": {"sup_precision": 0.5, "sup_recall": 0.28},  # 0.25 / 0.14 as first asked, then read
    "zh held out 7": {"sup_precision": 1.0, "sup_recall": 0.75},  # 0.83 / 0.62 as first asked, then read; "不踢了" (stop 76)
    "en held out 8": {"sup_precision": 1.0, "sup_recall": 0.71},  # 0.57 / 0.50 as first asked
    "zh held out 8": {"sup_precision": 0.5, "sup_recall": 0.2},  # 0.33 / 0.20 as first asked
    "en held out 9": {"sup_precision": 1.0, "sup_recall": 0.5},  # 1.00 / 0.38 as first asked (stop 74)
    "zh held out 9": {"sup_precision": 0.85, "sup_recall": 0.75, "kept_lost": 1},  # 0.83 / 0.50 as first asked; "停止" (stop 75), "辞了" read as a change
    "en held out 10": {"sup_precision": 1.0, "sup_recall": 0.75, "kept_lost": 1},  # 1.00 / 0.50 as first asked
    "en held out 11": {"sup_precision": 0.71, "sup_recall": 0.62, "kept_lost": 1},  # as first asked (stop 74)
    "zh held out 11": {"sup_precision": 1.0, "sup_recall": 0.5},  # 1.00 / 0.38 as first asked; "不送了" (stop 76)
    "en held out 12": {"sup_precision": 1.0, "sup_recall": 0.75, "kept_lost": 1},  # 0.86 / 0.62 as first asked (stop 75)
    "zh held out 12": {"sup_precision": 1.0, "sup_recall": 0.5},  # 1.00 / 0.25 as first asked (stop 75)
    "zh held out 10": {"sup_precision": 1.0, "sup_recall": 0.87},  # 1.00 / 0.75 as first asked; the scorer reads "辞了" as left
    "en held out 13": {"sup_precision": 1.0, "sup_recall": 0.5},  # 0.80 / 0.17 as first asked (stop 76)
    "zh held out 13": {"sup_precision": 1.0, "sup_recall": 0.66},  # 1.00 / 0.50 as first asked
    "en held out 14": {"sup_precision": 1.0, "sup_recall": 0.57},  # 1.00 / 0.29 as first asked (stop 76)
    "zh held out 14": {"sup_precision": 1.0, "sup_recall": 0.2},  # as first asked
    "en held out 15": {"sup_precision": 1.0, "sup_recall": 0.62},  # as first asked (stop 77)
    "zh held out 15": {"sup_precision": 1.0, "sup_recall": 0.83},  # 0.86 / 0.67 as first asked
}


def test_recorded_evaluation_holds_its_figures(recorded):
    for lang, (s, cost) in recorded["windows"].items():
        floor = FLOORS[lang]
        assert s.found / s.facts >= floor["recall"], (lang, s.misses)
        assert s.supported / s.memories >= floor["precision"], (lang, s.errors)
        assert s.attribution <= floor["attribution"], (lang, s.errors)
        assert s.lang_kept / s.memories >= floor["language"], lang
        assert s.leaks == 0, s.errors  # no stored memory copies the prompt's examples
        assert s.procedures_found == s.procedures_expected and s.procedures_invented == 0, lang
        assert s.false_drops <= floor["false_drops"], (lang, s.errors)  # a true fact dropped by a check
        assert s.relations_found >= floor["relations"], lang
        assert cost.sent == 36 and cost.first_try_valid >= cost.sent - 1
    for lang, (c, _) in recorded["conflicts"].items():
        floor = FLOORS[lang]
        _, size, changes = HELD_OUT.get(lang.partition(" ")[2], (None, 20, 9))
        assert c.cases == size and c.kept_violations <= floor.get("kept_lost", 0), c.notes
        assert c.changes >= changes, c.notes
        assert c.retired_right / max(c.retired, 1) >= floor["sup_precision"], c.notes
        assert c.replaced / c.changes >= floor["sup_recall"], c.notes


def test_facts_across_languages_and_between_people_on_both_backends(backend, tmp_path):
    """Labelled windows on the model's recorded replies, through the whole pipeline of each
    backend: a fact written in the other script is kept, a relation between people is an edge,
    a memory about the boss is the boss's, and a Chinese window keeps Chinese memories."""
    from datetime import timedelta

    from benchmarks.extraction_quality import RECORDED, T0, messages, related, relation_edges
    from graphmem.settings import Settings
    from tests.conftest import make_memory
    from tests.replay import ReplayExtractor

    windows = load()[0]
    at = {w["id"]: i for i, w in enumerate(windows)}
    with make_memory(backend, tmp_path, settings=Settings(extraction="manual"), extractor=ReplayExtractor(RECORDED)) as mem:
        for wid in ("zh-31", "en-33", "en-36", "zh-32"):
            w = windows[at[wid]]
            mem.add_messages(wid, messages(w["turns"], T0 + timedelta(days=at[wid]), wid), namespace=wid)
            mem.extract(namespace=wid)

        def said(ns):
            return {m.text: m for m in mem.list("memory", namespace=ns, status="active", limit=100)}

        assert related(["陆远", ["manager"], "周敏"], relation_edges(mem, "zh-31"), {})  # the model said 'supervisor'
        assert said("zh-31")["陆远的上司讨厌周五下午开会"].subject == "周敏"  # the boss, once the window names her
        assert related(["Sam", ["sister"], "Mei"], relation_edges(mem, "en-33"), {})
        assert "Sam is flying to Beijing in March to see his sister Mei" in said("en-33")  # the window says 北京
        assert related(["Lena", ["manager"], "Tom Keller"], relation_edges(mem, "en-36"), {})
        assert said("en-36")["Lena's boss Tom Keller prefers email"].subject == "Tom Keller"
        chinese = said("zh-32")
        assert chinese and all(language_kept(t, "zh") for t in chinese), list(chinese)  # the user is Alice: still Chinese
        for ns in ("zh-31", "en-33", "en-36", "zh-32"):
            for ep in mem.list("episode", namespace=ns, limit=10):
                assert not ep.summary.endswith(" messages"), ep.summary


def test_what_stays_and_who_one_works_for_replace_nothing():
    """Held-out batch 8's wrong retirements (issue 46, part 6), each read as a rule: a value the
    turn says stays ("still in Valencia") replaces nothing it does not restate; a candidate whose
    own sentence names the old value ("works" of "walks to work") does not replace it; working for
    oneself is no new occupation."""
    said = "I left the clinic to work as a vet at the zoo, still in Valencia."
    gone = replaced_terms(turns(("Sofia", said)))
    walks = fact_of("w", "Sofia walks to work", "Sofia", "walks_to", "work")
    still = fact_of("", "Sofia still in Valencia", "Sofia", "lives_in", "Valencia", said=said)
    assert decide(still, [(walks, 0.6)], gone).action == "add"
    zoo = fact_of("", "Sofia works at the zoo", "Sofia", "works_at", "zoo", said=said)
    assert decide(zoo, [(walks, 0.6)], gone).action == "add"
    nurse = fact_of("n", "程亮在南昌一家医院当护士", "程亮", "works_as", "护士")  # a kept value may restate its memory
    kept = "我换到一家诊所上班，还是当护士。"
    assert decide(fact_of("", "程亮还是当护士", "程亮", "works_as", "护士", said=kept), [(nurse, 0.8)],
                  replaced_terms(turns(("程亮", kept)))).action != "add"
    electrician = fact_of("e", "Declan Murphy is an electrician", "Declan Murphy", "works_as", "electrician")
    own = fact_of("", "Declan is self-employed now", "Declan", "works_as", "self-employed", said="I'm self-employed now.")
    assert decide(own, [(electrician, 0.8)]).action == "add"
    assert decide(fact_of("", "Declan is a plumber now", "Declan", "works_as", "plumber"), [(electrician, 0.8)]).action == "supersede"


def test_a_swap_keeps_the_place_the_turn_keeps_and_its_article():
    from graphmem.lifecycle.admission import as_words, without_prompt_date
    from graphmem.lifecycle.fold import _swapped
    from graphmem.lifecycle.swaps import _less_kept

    said = turns(("Sofia", "I left the clinic to work as a vet at the zoo, still in Valencia."))
    assert _less_kept("animal clinic in Valencia", kept_terms(said)) == "animal clinic"
    assert _less_kept("南京一家幼儿园", kept_in("我调到一所小学教书了，还是在南京")) == "一家幼儿园"
    assert _less_kept("Contoso", frozenset({"contoso"})) == "Contoso"
    assert _swapped("Sofia is a vet at an animal clinic in Valencia", "animal clinic", "zoo") == \
        "Sofia is a vet at a zoo in Valencia"
    assert _swapped("Ravi drives a Ford Fiesta", "Ford Fiesta", "Audi") == "Ravi drives an Audi"
    assert _swapped("他住在北京", "北京", "上海") == "他住在上海"
    window = [Message(session_id="s", content="We bought a house in Aurora.", speaker="Jonah",
                      created_at=datetime(2026, 4, 1, tzinfo=timezone.utc))]
    assert without_prompt_date("Jonah lives in Aurora since 2026-04-01", window) == "Jonah lives in Aurora"
    assert without_prompt_date("孙婷和何磊的日期是2026-04-01", window) == "孙婷和何磊的日期是2026-04-01"  # still dropped
    assert without_prompt_date("Jonah lives in Aurora", window) == "Jonah lives in Aurora"
    # a memory written in the prompt's line format keeps its words, not the bars (held out 6, 15)
    assert as_words("Amara does_activity | pilates") == "Amara does activity pilates"
    assert as_words("唐慧 has_car | 理想") == "唐慧 has car 理想"
    assert as_words("Tom's pub_quiz team meets on Fridays") == "Tom's pub_quiz team meets on Fridays"


def test_a_pair_the_model_singles_out_is_read_as_ended():
    from graphmem.extract.judge import JUDGE_AT, Verdict, ends

    def read(*ps):
        return ends([Verdict(f"m{i}", "note", p) for i, p in enumerate(ps)])

    assert read(0.8, 0.79).memory_id == "m0"  # at JUDGE_AT it stands alone
    assert read(0.72, 0.58).memory_id == "m0" and read(0.72, 0.65) is None  # below, only clear of the rest
    assert read(0.72) is None and read(0.69, 0.4) is None and ends([]) is None
    assert ends([Verdict("a", "x", 0.72, 0), Verdict("a", "y", 0.7, 1), Verdict("b", "z", 0.5)]).memory_id == "a"
    assert JUDGE_AT == 0.75
