"""Checks on what the model extracted, against the window it came from: plain rules, no model.

- ``resolve_subject``: "I", "the user", "用户", "我" become the speaker's name, so a fact said in
  one session and changed in another meet on their subject;
- ``grounded``: a fact's subject and its object's key words must occur in the window; what the
  model copied from the prompt's examples or made up is dropped;
- ``canonical_predicate``: a small vocabulary of English and Chinese synonyms, so the same
  attribute gets the same predicate whatever the wording (``write_backend``/``use_backend``,
  ``住在``/``lives_in``);
- ``replaced_terms``: the key words of a turn that says a value changed ("switched from coffee",
  "Django is gone", "不再用", "搬出北京"): the stored facts it names are the ones replaced.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from ..models import Message
from ..text import STOPWORDS, keywords, segment, stem
from ..text.crosslingual import Across

SELF = frozenset({"i", "me", "myself", "user", "the user", "speaker", "the speaker", "我", "我自己", "用户", "本人"})

# canonical predicate -> its synonyms (normalised snake_case; Chinese as written)
VOCABULARY: dict[str, tuple[str, ...]] = {
    "lives_in": ("live_in", "living_in", "resides_in", "residence", "home", "home_city", "location", "located_in",
                 "based_in", "moved_to", "relocated_to", "city", "住在", "居住", "住", "搬到", "定居"),
    "works_at": ("work_at", "working_at", "works_for", "work_for", "employer", "employed_at", "employed_by",
                 "company", "job_at", "workplace", "joined", "在_工作", "工作于", "公司", "就职于", "任职于"),
    "works_as": ("job", "job_title", "occupation", "profession", "role", "position", "title", "is_a", "works_as_a",
                 "职业", "工作", "职位", "担任"),
    "uses_backend": ("backend", "backend_framework", "write_backend", "writes_backend", "use_backend",
                     "backend_language", "backend_stack", "framework"),
    "drinks": ("morning_drink", "drinks_in_morning", "morning_beverage", "starts_day_with", "starts_morning_with",
                      "morning_habit", "drinks", "drink", "beverage", "prefers_drink", "favourite_drink",
                      "favorite_drink", "早上喝", "喝", "drinks_every_morning"),
    "drives": ("car", "owns_car", "vehicle", "drives_car", "开", "开车"),
    "favourite_team": ("favorite_team", "supports", "supports_team", "team", "football_team", "喜欢的球队", "支持"),
    "allergic_to": ("allergy", "allergies", "has_allergy", "过敏"),
    "learning": ("learns", "studies", "studying", "is_learning", "learning_language", "学", "学习", "在学"),
    "has_pet": ("pet", "has_cat", "has_dog", "owns_pet", "cat", "dog", "养"),
}
_CANON = {syn: canon for canon, syns in VOCABULARY.items() for syn in (canon, *syns)}

# Attributes that hold many values at once: a new value is added beside the others, and
# replaces one only when the window says so (a change cue naming it).
MULTI_VALUED = frozenset({"learning", "has_pet", "allergic_to", "likes", "dislikes", "loves", "enjoys", "plays",
                          "has_child", "speaks", "language", "languages", "hobby", "hobbies", "visited", "owns", "knows",
                          "friend_of", "passion", "passionate_about", "interest", "interests", "interested_in", "goal",
                          "goals", "dream", "dreams", "wants", "plans", "plans_to", "爱好", "兴趣", "梦想", "计划"})

# What a person does on an occasion (shares a photo, thanks someone, visits a place): the
# predicate's first word is one of these verbs in any inflection (compared by stem). An event
# is not an attribute: a new one is added beside the earlier ones and replaces none unless the
# window says so.
# Seen on LoCoMo: "Gina shares a photo of the event" retired "... a photo of her students".
_EVENT_VERBS = frozenset({
    "share", "send", "thank", "encourage", "say", "tell", "ask", "show", "post", "give", "visit", "attend", "go",
    "meet", "make", "see", "watch", "receive", "get", "take", "buy", "celebrate", "complete", "finish", "teach",
    "talk", "discuss", "mention", "describe", "explain", "compliment", "congratulate", "recommend", "suggest",
    "invite", "praise", "help", "win", "read", "cook", "bake", "try", "find", "do", "reply", "respond", "agree",
    "offer", "wish", "express", "host", "organise", "organize", "participate", "perform", "photograph", "call",
    "text", "write", "check", "sign", "cheer", "chat",
    # a work made on an occasion (seen on LoCoMo: each painting Caroline made retired the one before)
    "paint", "draw", "sketch", "sculpt", "knit", "sew", "craft", "create", "compose", "design", "film",
    # irregular forms the stemmer does not bring home
    "went", "goes", "said", "told", "sent", "gave", "made", "saw", "took", "bought", "got", "met", "taught", "won",
    "found", "did", "does", "wrote", "shown", "drew",
})


@functools.cache
def _event_stems() -> frozenset[str]:  # on first use: the stemmer's import costs a cold command
    return frozenset(stem(v) for v in _EVENT_VERBS)


_EVENT_ZH = ("分享", "发了", "发送", "感谢", "谢谢", "鼓励", "告诉", "问", "参加", "看了", "买了", "庆祝", "完成", "教",
             "讨论", "提到", "推荐", "邀请", "称赞", "夸", "帮助", "赢", "拍", "画了", "写了", "做了")


def is_event(predicate: str | None) -> bool:
    """Whether a normalised predicate states something done on an occasion (``shares_photo``,
    ``thanked``, ``分享``) rather than an attribute that holds one value at a time."""
    if not predicate:
        return False
    if predicate.startswith(_EVENT_ZH):
        return True
    return stem(predicate.split("_")[0]) in _event_stems()


def holds_one_value(predicate: str | None) -> bool:
    """Whether a new value of the (normalised) attribute replaces the held one: not a
    many-valued attribute (``likes``, ``learning``) and not an event."""
    return bool(predicate) and predicate not in MULTI_VALUED and not is_event(predicate)

# Predicates whose opposite values replace each other for the same endpoints (likes -> dislikes sushi).
SENTIMENT = frozenset({"likes", "loves", "enjoys", "prefers", "dislikes", "hates", "avoids", "favourite", "favorite",
                       "喜欢", "不喜欢", "讨厌"})
RELATIONSHIP = frozenset({"dating", "dates", "married_to", "engaged_to", "divorced_from", "partner", "partner_of",
                          "boyfriend", "girlfriend", "husband", "wife", "spouse", "ex", "ex_partner"})

# cues that a value was left behind ("sold", "搬出"), and the wider set that a value changed
_LEFT_EN = (r"left|leav(e|es|ing)|quit(s|ting)?|sold|died|passed away|mov(ed|ing) (out|away)|gave up|gives up|"
            r"cancell?ed|stop(s|ped|ping)?(?! (by|in|over|at)\b)|"
            r"no longer|used to|formerly|split up|separated|end(s|ed|ing)? (things|it)|put an end to|behind (me|us)|"
            r"closed( down)?(?! (on|at|for|to|the|my|our|a|an)\b)|shut down|went out of business")  # "the Lidl near me closed"
# 已经不 with an adverb between ("烟我已经彻底不抽了", "已经完全不喝了"); 不 + a verb of a habit
# + 了 ("不喝红枣茶了", "现在不坐了"); not "已经不错了" (quite good) or "不用了" (no need); "从酒店出来了",
# "从书店出来以后" (left the hotel, the bookshop)
_LEFT_ZH = (r"离开|搬出|卖了|卖掉|不再|停止|已经\S{0,2}不(?!错|少|早|小|用)|戒了|辞职|辞了|辞掉|离职|不去|以前|不在一起|分开了|"
            r"转让|让给|倒闭|关门了|取消|结束了|去世|老死|病死|"
            r"不(?:喝|吃|打|坐|住|抽|玩|养|骑|练|跑|弹|跳|踢|游|送|做|干|教|学|开(?!心)|上班)[^，。！？,.!?\s]{0,5}了|"
            r"从[^，。！？,.!?\s]{1,8}出来(?:了|以后|之后|后)")
_LEFT = re.compile(rf"\b({_LEFT_EN})\b|{_LEFT_ZH}", re.IGNORECASE)
_CHANGE_CUES = re.compile(
    rf"\b({_LEFT_EN}|switch(ed|ing)?|swap(s|ped|ping)?|chang(e|ed|ing)|mov(e|es|ed|ing) (to|from)|relocat\w*|"
    r"transferr(ed|ing)|replac(ed|ing)|not any ?more|instead|gone|rewr(ote|itten)|dropp?(ed)?|broke up|divorced|"
    r"any ?more|trad(e|es|ed|ing) in)\b|"
    rf"{_LEFT_ZH}|改成|改喝|改上|改到|改用|改教|改学|换成|换了|换到|换工作|搬到|调到|不用(?!了|谢|客气|担心|急)|别喝|跳槽|原来|分手|"
    r"从\S{1,12}?(搬|跳|调|换|转)(到|去|成)",
    re.IGNORECASE,
)


def canonical_predicate(predicate: str | None) -> str | None:
    if not predicate:
        return predicate
    return _CANON.get(predicate, predicate)


NEGATIVE = frozenset({"dislikes", "hates", "avoids", "不喜欢", "讨厌"})


def same_relation(a: str | None, b: str | None) -> bool:
    """Two canonical predicates that state one relation: equal, or sentiments of one polarity
    (``favourite_team`` and ``prefers_team``; ``likes`` and ``loves``)."""
    if not a or not b:
        return False
    if a == b:
        return True
    negative = [p in NEGATIVE or p.split("_")[0] in NEGATIVE for p in (a, b)]
    return predicate_family(a) == predicate_family(b) == "sentiment" and negative[0] == negative[1]


def predicate_family(predicate: str | None) -> str | None:
    """'sentiment' or 'relationship' for predicates that flip between values of one relation."""
    if not predicate:
        return None
    head = predicate.split("_")[0]
    if predicate in SENTIMENT or head in SENTIMENT:
        return "sentiment"
    if predicate in RELATIONSHIP or head in RELATIONSHIP:
        return "relationship"
    return None


def speaker_of(turns: Sequence[Message]) -> str | None:
    """The name of the user who spoke the turns (the first non-assistant speaker)."""
    return next((m.speaker or None for m in turns if m.role != "assistant" and m.speaker), None)


def resolve_subject(subject: str | None, speaker: str | None) -> str | None:
    """'I', 'the user', '我' and the like become the speaker's name when it is known."""
    if subject and speaker and subject.strip().casefold() in SELF:
        return speaker
    return subject


def _occurs(term_keywords: Sequence[str], window_kw: set[str], window_text: str, across: Across | None = None,
            term: str = "", raw: str = "") -> float:
    """The share of a term's keywords found in the window: as keywords, or in its text, a
    Chinese one anywhere (segmentation differs between a phrase and its sentence) and any
    other at the start of a word (a stem: "paint" in "painting"; "ai" is not in "painting").
    With ``across``, a word the window does not have as written may be named there in the
    other script ("Shanghai" for 上海, 周敏 for "Zhou Min", "January" for 一月份): then the
    term's words are counted as written, not stemmed (pinyin and the embedder read words)."""
    if not term_keywords:
        return 1.0

    def found(k: str) -> bool:
        return k in window_kw or (k in window_text if HAN_RUN.search(k)
                                  else re.search(rf"(?<![a-z0-9]){re.escape(k)}", window_text) is not None)

    share = sum(map(found, term_keywords)) / len(term_keywords)
    if across is None or share >= 0.5:
        return share
    words = [w for w in dict.fromkeys(segment(term)) if w not in STOPWORDS and (len(w) > 1 or HAN_RUN.match(w))]
    if len(words) > 1 and across.finds(term, raw):  # "jasmine tea" is 茉莉花茶 whole, not word by word
        return 1.0
    names = {w.casefold() for w in re.findall(r"(?<![\w'])[A-Z][\w']*", term)}  # parts of a name: one syllable may match
    hits = sum(1 for w in words if found(stem(w)) or across.finds(w, raw, name=w in names))
    return max(share, hits / len(words)) if words else share


def grounded(subject: str | None, obj: str | None, text: str, msgs: Sequence[Message],
             across: Across | None = None) -> str | None:
    """Why a fact is not grounded in its window, or None when it is: its subject must be a
    speaker or named in the window (or be "I"/"the user"), and at least half the key words of
    its object (of its text, without the subject, when it has no object) must occur there, in
    either language when ``across`` is given (a Chinese window's fact written in English)."""
    speakers = {(m.speaker or "").casefold() for m in msgs}
    raw = " ".join([*(m.speaker or "" for m in msgs), *(m.content for m in msgs)])
    window_text = " ".join([*speakers, *(m.content for m in msgs)]).casefold()  # a speaker is named by speaking
    window_kw = set(keywords(" ".join(speakers))).union(*(set(m.keywords or keywords(m.content)) for m in msgs))

    def share(term: str, keys: Sequence[str] | None = None) -> float:
        return _occurs(keywords(term) if keys is None else keys, window_kw, window_text, across, term, raw)

    if subject and subject.strip().casefold() not in SELF | speakers:
        if keywords(subject) and share(subject) == 0:
            return f"subject {subject!r} is not in the window"
    named = set(segment(subject or ""))
    rest = " ".join(w for w in segment(text) if w not in named)  # its text, without the subject
    words = sorted(set(keywords(text)) - set(keywords(subject or "")))
    if obj and share(obj) < 0.5 and (HAN_RUN.search(obj) or not HAN_RUN.search(text) or share(rest, words) < 0.5):
        # a Chinese fact's object written as an English label ('lactose_intolerance', 'none')
        # stands when the fact's own words are the window's
        return f"object {obj!r} not in the window"
    if not obj and share(rest, words) < 0.5:
        return "its words not in the window"
    return None


def stray_object(subject: str | None, obj: str | None, text: str, msgs: Sequence[Message],
                 across: Across | None = None) -> bool:
    """An object that neither the window nor the memory's own text names, where the text without
    it is grounded: "Oskar drops Portuguese and switches to Spanish" with the object "Duolingo",
    copied from a known memory. The triple is wrong, the text is the window's."""
    return (bool(obj) and not set(keywords(obj or "")) & set(keywords(text))
            and grounded(subject, obj, text, msgs, across) is not None and grounded(subject, None, text, msgs, across) is None)


_EMPTY_OBJECTS = frozenset({"you", "me", "him", "her", "it", "them", "us", "你", "您", "我", "他", "她", "它", "他们", "我们"})


def without_self_naming(text: str, subject: str | None) -> str:
    """A memory that opens by naming its subject as itself, the rest led by the name:
    "邵琪是邵琪，在南京一家幼儿园当老师" (the model's reading of "我叫邵琪，在南京……") is "邵琪在南京一家幼儿园
    当老师", "Sofia is Sofia, a vet in Valencia" is "Sofia is a vet in Valencia". A text that is
    nothing else is left whole (``says_nothing`` drops it)."""
    name = (subject or "").strip()
    if not name:
        return text
    opening = re.match(rf"\s*{re.escape(name)}\s*(?:是|叫|is called|is)\s*{re.escape(name)}\s*[，,;；:：]\s*", text, re.IGNORECASE)
    if not opening or not text[opening.end():].strip():
        return text
    rest = text[opening.end():]
    if HAN_RUN.match(rest):
        return name + rest
    return f"{name} is {rest}" if re.match(r"(a|an|the)\b", rest, re.IGNORECASE) else f"{name}, {rest}"


def says_nothing(subject: str | None, obj: str | None, text: str = "") -> str | None:
    """Why a fact carries no information, or None: its object is its own subject ("Emily is
    named Emily") or a bare pronoun ("Emily thanks you"), seen on MemoryBank's first window; or
    its sentence names nothing but its subject ("Sofia is Sofia", written beside "Sofia speaks
    Spanish fluently" with the same triple, which it would then stand for). "none" is a value
    ("drinks: none")."""
    if subject and text and set(keywords(text)) <= set(keywords(subject)):
        return "its text names nothing but its subject"
    if not obj:
        return None
    value = obj.strip().casefold()
    if value in _EMPTY_OBJECTS:
        return f"its object {obj!r} names nothing"
    if subject and value == subject.strip().casefold():
        return "its object is its subject"
    return None


HAN_RUN = re.compile(r"[\u3400-\u9fff]+")
_CLAUSES = re.compile(r"[,;:.!?，。；：！？]")

# a cue the turn denies ("don't quit", "I won't stop", "never changed", "不会离职", "别换"): no change.
# "any more" and "no longer" carry their own negation ("I don't drink coffee any more" is one)
_DENIED_EN = re.compile(r"\b(don'?t|do not|doesn'?t|didn'?t|won'?t|will not|wouldn'?t|shouldn'?t|can'?t|cannot|"
                        r"haven'?t|hasn'?t|never|not)\b(\s+[\w']+){0,2}\s*$", re.IGNORECASE)
_DENIED_ZH = re.compile(r"(不会|不要|不想|没有|从不|从没|别)\S{0,2}$")
_SELF_NEGATED = re.compile(r"any ?more|no longer|not any|不", re.IGNORECASE)


def _change_cues(text: str) -> list[re.Match[str]]:
    """The change cues of a text that it does not deny."""
    return [m for m in _CHANGE_CUES.finditer(text)
            if _SELF_NEGATED.match(m.group(0)) or not (_DENIED_EN.search(text, 0, m.start())
                                                      or _DENIED_ZH.search(text, 0, m.start()))]


# the user's reply takes the assistant's words up; "I will take a look" and "I'll think about it" do not
# (MemoryBank stored the assistant's book tips as Emily's on "I will take a look")
_CONFIRM = re.compile(
    r"\b(yes|yeah|yep|sure|perfect|exactly|correct|right|agreed|booked|bought|ordered|done|will do|sounds good|"
    r"let's do|i'll take(?! a look)|i'll go with|i will(?! (take a look|have a look|look|think|check|consider|see)\b))\b|"
    r"好的|好，|好,|是的|对|没错|就这个|就它|订了|买了|可以",
    re.IGNORECASE,
)


def unconfirmed_assistant_words(turns: Sequence[Message], msgs: Sequence[Message]) -> bool:
    """A memory all of whose turns are the assistant's, and the user's next turn does not
    take it up ("Perfect, I booked it", "好，我订了"): the assistant's suggestion or claim,
    not something the user said."""
    if not turns or any(t.role != "assistant" for t in turns):
        return False
    last = max(msgs.index(t) for t in turns if t in msgs) if any(t in msgs for t in turns) else len(msgs)
    reply = next((m for m in msgs[last + 1:] if m.role != "assistant"), None)
    return reply is None or not _CONFIRM.search(reply.content)


def replaced_terms(turns: Sequence[Message]) -> frozenset[str]:
    """The key words (and the runs of Chinese text) of the user's turns that say a value
    changed, without their clauses that keep one ("still", "还是"): a stored fact of the same
    subject whose object they name is replaced, even under another predicate."""
    return _change_clauses(turns, keeping=False)


def kept_terms(turns: Sequence[Message]) -> frozenset[str]:
    """The key words of the clauses of a change turn that keep a value ("还在腾讯", "same
    company"): what the change leaves standing."""
    return _change_clauses(turns, keeping=True)


def _change_clauses(turns: Sequence[Message], keeping: bool) -> frozenset[str]:
    out: set[str] = set()
    for m in turns:
        if m.role != "assistant" and _change_cues(m.content):
            out |= _clauses_that(m.content, keeping)
    return frozenset(out)


def kept_in(text: str) -> frozenset[str]:
    """The key words of a text's clauses that say a value stays ("还是在南京", "still in Valencia"),
    with or without a change beside them."""
    return _clauses_that(text, keeping=True)


def left_said(turns: Sequence[Message]) -> frozenset[str]:
    """The key words of the user's clauses that say a value was left ("足球不踢了", "I left the
    studio"), not those that only say something changed ("our team switched languages")."""
    return frozenset().union(*(terms_of(c) for m in turns if m.role != "assistant" for c in _CLAUSES.split(m.content)
                               if says_it_left(c) and not keeps_a_value(c)))


def _clauses_that(text: str, keeping: bool) -> frozenset[str]:
    out: set[str] = set()
    for clause in _CLAUSES.split(text):
        if keeps_a_value(clause) == keeping:  # "..., still a product manager": that value stays
            out |= terms_of(clause)
    return frozenset(out)


# "from X to Y" / "swapped X for Y" / "从X搬到Y": what a change left (``left``, ``swapped``) and,
# for a move, where it went (``to``)
_FROM_TO_EN = re.compile(r"\bfrom\s+(?P<left>(?:the\s+|my\s+|our\s+)?[\w'-]+(?:\s+[A-Z][\w'-]*)*)\s+"
                         r"(?:to\b(?:\s+(?:the\s+|their\s+|our\s+)?(?P<to>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*))?|for\b)|"
                         r"\b(?:swap(?:s|ped|ping)?|trad(?:e|es|ed|ing) in|exchang(?:e|es|ed|ing))\s+"
                         r"(?P<swapped>(?:the\s+|my\s+|our\s+)?[\w'-]+(?:\s+[\w'-]+)?)\s+for\b")
_FROM_TO_ZH = re.compile(r"从(?P<left>[^，。,.;；！？!?\s从]{1,12}?)(?:搬|跳|调|换|转|改)?"
                         r"(?:(?:到|去)了?(?P<to>[^，。,.;；！？!?\s]{1,12})?|成)")


def _changes(text: str) -> list[re.Match[str]]:
    """The "from X to Y" phrases of a sentence that says something changed: "a flight from
    Paris to Rome" changes nothing."""
    return [*_FROM_TO_EN.finditer(text), *_FROM_TO_ZH.finditer(text)] if _change_cues(text) else []


def left_phrases(text: str) -> list[str]:
    """What a change in ``text`` left, as written ("moved from Vienna to Salzburg" -> Vienna,
    "我从华为跳到了OPPO" -> 华为, "swapped the spin class for yoga" -> the spin class)."""
    return [m.group("left") or m.groupdict().get("swapped") for m in _changes(text)]


def destinations(text: str) -> list[str]:
    """Where a change in ``text`` went, as written ("moved from Vienna to Salzburg" -> Salzburg,
    "我从雁塔区搬到了高新区" -> 高新区): the other end of ``left_phrases``."""
    return [m.group("to") for m in _changes(text) if m.group("to")]


def origins(text: str) -> frozenset[str]:
    """The key words of ``left_phrases``."""
    return frozenset().union(*(terms_of(p) for p in left_phrases(text)))


def left_terms(turns: Sequence[Message]) -> frozenset[str]:
    """``origins`` of the user's turns: values a candidate may name as where it came from, never
    as what holds now."""
    return frozenset().union(*(origins(m.content) for m in turns if m.role != "assistant"))


def terms_of(text: str) -> frozenset[str]:
    """A text's key words and its runs of Chinese text, for ``names_most``."""
    return frozenset(keywords(text)) | frozenset(HAN_RUN.findall(text))


def _named(k: str, terms: frozenset[str]) -> bool:
    """A key word among ``terms``; a Chinese one may also sit inside a run of Chinese text
    (segmentation differs between a phrase and its sentence)."""
    return k in terms or (HAN_RUN.fullmatch(k) is not None and any(k in t for t in terms))


def names_most(value: set[str], terms: frozenset[str]) -> bool:
    """At least half the key words of a value, not only its numbers, are among ``terms``: a
    value named by its short form ("sold the Civic" names "Honda Civic")."""
    named = [k for k in value if _named(k, terms) and not k.isdigit()]
    return bool(named) and len(named) * 2 >= len(value)


_CONTINUITY = re.compile(r"\b(still|as before|same|continues?|remains?)\b|还是|还在|仍然|仍|依然|继续|照样", re.IGNORECASE)


def keeps_a_value(text: str) -> bool:
    """A sentence that says something stays as it was ("still a product manager", "还是")."""
    return _CONTINUITY.search(text) is not None


_ADDITIVE = re.compile(r"\b(besides|apart from|as well|too|also|in addition|another|a second)\b|除了|也|又|另外|还有",
                       re.IGNORECASE)


def adds_a_value(turns: Sequence[Message]) -> bool:
    """The user's turns add a value beside the ones held ("Besides the bass, ...", "除了西班牙语，
    我也在学葡萄牙语"): a new value of the same attribute does not replace the old one."""
    return any(m.role != "assistant" and _ADDITIVE.search(m.content) for m in turns)


_VAGUE = re.compile(r"^(a |an |the |my |our )?(new|same|another|other|different|current|old|previous)\b|^(新|同一|另一|别的)",
                    re.IGNORECASE)


def is_vague(value: str | None) -> bool:
    """A value that only points at one ("a new office", "the same company", "另一家公司"): it
    says that something changed or stayed, not what it is now."""
    return bool(value) and _VAGUE.search(value.strip()) is not None


# the parts of a day a habit may be tied to ("every morning", "睡前"): a drink at another one is another habit
_DAYTIME = {
    "morning": re.compile(r"\b(mornings?|breakfast)\b|早上|早晨|早饭|早餐|上午", re.IGNORECASE),
    "midday": re.compile(r"\b(afternoons?|lunch(time)?|midday|noon)\b|中午|下午|午饭|午餐", re.IGNORECASE),
    "evening": re.compile(r"\b(evenings?|nights?|tonight|bedtime|before bed|dinner)\b|晚上|夜里|半夜|睡前|晚饭|晚餐",
                          re.IGNORECASE),
}


def times_of_day(text: str) -> frozenset[str]:
    """The parts of the day ``text`` names: morning, midday, evening."""
    return frozenset(part for part, pattern in _DAYTIME.items() if pattern.search(text))


def change_words(text: str) -> set[str]:
    """The key words of a text's change cues ("left", "switched from", "不再")."""
    return {k for m in _change_cues(text) for k in terms_of(m.group(0))}


def says_it_left(text: str) -> bool:
    """A memory whose value is the one left behind ("sold the Civic", "搬出北京")."""
    return _LEFT.search(text) is not None


def is_past_or_changed(text: str) -> bool:
    """A memory that states a value as past or left ("used to live in Madrid", "left Riverside")."""
    return bool(_change_cues(text))
