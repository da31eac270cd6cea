"""A change that swaps one value inside a stored memory that says more than that value: the
memory's other words still hold, so its successor is the same text with the new value ("I
relocated to Hamburg, same company" against "... at Contoso in Munich") or without the clause
the change ends ("赵海洋抽烟十几年了，最爱喝冰可乐" once he quit smoking). Plain functions over
``rules.Fact``, shared by the write path and the maintenance run."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..extract.checks import (HAN_RUN, change_words, destinations, holds_one_value, is_vague, left_phrases, names_most, origins,
                              says_it_left)
from ..models import MemoryRecord
from ..text import keywords
from ..text.tokens import segment
from .rules import _COMPARES, Fact, _kept, _name, _one_clause, _predicate, _same, same_subject

_MOVE = re.compile(r"\b(relocat\w*|mov(e|ed|es|ing)|transferr\w*)\b|调到|调去|搬到|搬去|搬家", re.IGNORECASE)
_SITES = frozenset({"lives_in", "works_at"})


def carried_over(candidate: Fact, old: Fact, replaces: frozenset[str], kept: frozenset[str],
                 candidate_places: Sequence[str] = (), old_places: Sequence[str] = (),
                 left: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The value a change turn swaps inside a stored memory that says more than that value,
    as (old value, new value), or None. "I relocated to Hamburg, same company" against "Daniel
    is a backend developer at Contoso in Munich" gives (Munich, Hamburg): the memory's other
    words still hold, so its successor is the same text with the new value, not the bare new
    fact. The old value is the stored object of the same attribute (百度 -> 美团 under
    ``works_at``), the one place of a memory when the candidate moves somewhere (深圳 -> 杭州),
    or a value of the same head (夜班 -> 白班, night shifts -> day shifts). Never a value the
    turn keeps ("还在腾讯"), never a new value whose own words are what the turn says it left
    (``left``: "viola orchestra" after "from viola to cello"), never when the candidate already
    says all the memory did."""
    if (not replaces or not candidate.object or is_vague(candidate.object) or says_it_left(candidate.text)
            or not same_subject(candidate.subject, old.subject)):
        return None  # "sold the Civic" names the value left, not the new one
    if _COMPARES.search(old.text):
        return None  # "prefers Python over R": the rest is said against the old value
    subject = set(keywords(old.subject or ""))
    old_places = [p for p in old_places if not names_most(set(keywords(p)), kept)]  # "still at Kingsbridge"
    for swap in (_attribute_swap(candidate, old, kept - subject), _place_swap(candidate, old, candidate_places, old_places),
                 _head_swap(candidate.object.strip(), old.text)):
        if swap is None:
            continue
        was, now = swap
        if names_most(set(keywords(was)), kept) or now.casefold() in old.text.casefold():
            continue  # "还在腾讯": the employer stays; the city may still be the swap
        if _kept(now, kept):
            continue  # "还是在南京": what the turn says stays is no new value of the place
        if (own := set(keywords(now)) - set(keywords(was))) and own <= left:
            continue  # the model's copy of the value left, as the new one
        if old.keywords - subject - set(keywords(was)) - candidate.keywords:
            return swap
    return None


# where a memory's clauses meet: a comma or semicolon, or "and" before a verb of its own ("smokes
# and drinks coffee"; not "likes jazz and chess", one clause naming two values)
_CLAUSE = re.compile(r"(\s*[,;，；]\s*(?:and\s+)?|\s+and\s+(?=(?:is|are|was|has|have|had|does|works|lives|drives|"
                     r"plays|runs|takes|goes|uses|owns|loves|likes|enjoys|prefers|drinks|eats|studies|teaches|"
                     r"speaks|smokes|buys|shops|rides|walks|cycles|commutes|dates|attends|volunteers)\b))", re.IGNORECASE)


def without_clause(candidate: Fact, old: Fact, replaces: frozenset[str],
                   said_left: frozenset[str] = frozenset()) -> tuple[str, bool] | None:
    """A stored memory that says several things, one of which the change turn says is over, as
    the rest of it, and whether its object is still in that rest: "赵海洋抽烟十几年了，最爱喝冰可乐"
    once the turn says "烟我已经彻底不抽了" is "赵海洋最爱喝冰可乐" (the other clauses still hold),
    whether the candidate says the value was left or states a new one ("改打羽毛球"); a new
    one only ends a clause naming what the turn says was left (``said_left``: ``left_said``), never
    one naming a word of a change the turn only reports ("our team switched languages").
    None unless the memory's subject leads it and exactly one of its clauses names what the
    change turn says was left (``replaces`` less the change words and the subject)."""
    parts = _clauses(old.subject, old.text)
    if not replaces or parts is None or not same_subject(candidate.subject, old.subject):
        return None
    if not says_it_left(candidate.text):
        if not _new_value(candidate, old):
            return None  # "still allergic to shellfish" restates a clause of it
        replaces = replaces & said_left
    left = {t for t in replaces - change_words(candidate.text) - set(keywords(old.subject or "")) if not HAN_RUN.fullmatch(t)
            or len(t) <= 4}  # a key word, not a whole run of the turn's Chinese

    def names(clause: str) -> bool:
        words = set(keywords(clause))
        return any(t in words or (HAN_RUN.fullmatch(t) and t in clause) for t in left)
    hit = [k for k, i in enumerate(i for i in range(0, len(parts), 2) if parts[i].strip()) if names(parts[i])]
    return rest_without(old, hit[0]) if len(hit) == 1 else None


def _new_value(candidate: Fact, old: Fact) -> bool:
    """The candidate states a value the stored memory does not name ("改打羽毛球" against "每周二踢足球")."""
    value = (candidate.object or "").strip()
    return bool(value) and not is_vague(value) and value.casefold() not in old.text.casefold()


def _clauses(subject: str | None, text: str) -> list[str] | None:
    """The part of ``text`` after its leading subject split at its clauses: clause, separator,
    clause, ...; None unless the subject leads it and it says more than one thing."""
    subject = (subject or "").strip()
    if not subject or not text.startswith(subject) or _one_clause(text):
        return None
    parts = _CLAUSE.split(text[len(subject):])
    return parts if sum(1 for i in range(0, len(parts), 2) if parts[i].strip()) > 1 else None


def clauses_of(old: Fact | MemoryRecord) -> list[str]:
    """Each thing a memory says as a sentence of its own, led by its subject ("何静住在园区，开一辆
    雅阁" -> "何静住在园区", "何静开一辆雅阁"); a memory that says one thing is itself."""
    parts = _clauses(old.subject, old.text)
    if parts is None:
        return [old.text]
    subject = (old.subject or "").strip()
    return [subject + ("" if HAN_RUN.match(c.strip()) else " ") + c.strip() for c in parts[::2] if c.strip()]


def rest_without(old: Fact | MemoryRecord, clause: int) -> tuple[str, bool] | None:
    """``old`` without its ``clause``-th clause (of ``clauses_of``), and whether its object is
    still in what is left; None where nothing is left."""
    parts = _clauses(old.subject, old.text)
    if parts is None:
        return None
    said = [i for i in range(0, len(parts), 2) if parts[i].strip()]
    if not 0 <= clause < len(said):
        return None
    i = said[clause]
    rest = "".join(parts[:i] + parts[i + 2:] if i + 1 < len(parts) else parts[:i - 1]).strip()
    if not rest:
        return None
    subject = (old.subject or "").strip()
    joined = subject + ("" if HAN_RUN.match(rest) else " ") + rest
    return joined, bool(old.object) and old.object.casefold() in joined.casefold()


# attributes held one at a time: a memory that names the value replaced in one of them
# ("周六打羽毛球，开一辆大众帕萨特" when the Passat was sold) takes the new value too
ONE_AT_A_TIME = frozenset({"drives", "lives_in", "works_at"})


def named_swap(candidate: Fact, replaced: Fact, other: Fact, replaces: frozenset[str]) -> tuple[str, str] | None:
    """When ``candidate`` replaces ``replaced``, the value of an attribute held one at a time
    (a car, a home, an employer), another memory of the same person that names that value in
    passing is carried over with the new one; the turn must name the old value as replaced."""
    was, now = replaced.object or "", candidate.object or ""
    if (not was or not now or is_vague(now) or says_it_left(candidate.text)
            or _predicate(replaced.predicate or "") not in ONE_AT_A_TIME
            or not same_subject(candidate.subject, other.subject) or not same_subject(replaced.subject, other.subject)
            or not names_most(set(keywords(was)), replaces) or _COMPARES.search(other.text)
            or was.casefold() not in other.text.casefold() or now.casefold() in other.text.casefold()):
        return None
    return was, now


def _attribute_swap(candidate: Fact, old: Fact, kept: frozenset[str]) -> tuple[str, str] | None:
    """The stored value of the candidate's own attribute, when the turn says part of the old
    memory still holds ("换工作了，现在在美团，还是做产品经理"); otherwise the candidate replaces
    the old memory itself."""
    predicate = _predicate(candidate.predicate or "")
    if (old.object and candidate.object and holds_one_value(predicate) and not _same(candidate.object, old.object)
            and predicate == _predicate(old.predicate or "") and old.object.casefold() in old.text.casefold()
            and old.keywords & kept):
        return _less_kept(old.object, kept), candidate.object
    return None


def _less_kept(value: str, kept: frozenset[str]) -> str:
    """A stored value without the place its turn says stays: "animal clinic in Valencia" is
    "animal clinic" when the turn says "still in Valencia", "南京一家幼儿园" is "一家幼儿园"."""
    m = re.fullmatch(r"(?P<head>.+?)\s+(?:in|at|near)\s+(?P<place>[^,]+)", value)
    if m and _kept(m.group("place"), kept):
        return m.group("head")
    lead = next((k for k in sorted(kept, key=len, reverse=True) if HAN_RUN.fullmatch(k) and value.startswith(k)), "")
    return value[len(lead):] if lead and HAN_RUN.match(value[len(lead):]) else value


def _place_swap(candidate: Fact, old: Fact, candidate_places: Sequence[str],
                old_places: Sequence[str]) -> tuple[str, str] | None:
    """The one place of a memory about where one lives or works, when the candidate moves
    somewhere: not the employer itself (a works_at memory's object), which the tagger may
    mistake for a place. A home carries a workplace's place along only where the candidate
    says it moved ("relocated to Hamburg, same company"), and a workplace a home's."""
    site, own = _predicate(old.predicate or ""), _predicate(candidate.predicate or "")
    moved = _MOVE.search(candidate.text) is not None
    if own not in _SITES and not moved:
        return None
    if site in _SITES and own in _SITES - {site} and not moved:
        return None  # a new home is no new workplace ("left Eaton for a house in Thorpe"), nor the reverse
    if site not in _SITES:  # a memory about something else that names, in passing, the place the move left
        passing = [p for p in left_phrases(candidate.text) if p.casefold() in old.text.casefold()]
        to = _moved_to(candidate)
        return (passing[0], to[0]) if moved and len(passing) == 1 and len(to) == 1 else None
    left = origins(candidate.text)  # "from Lagos to London": Lagos is where it was
    new = {p for p in candidate_places if p.casefold() in (candidate.object or "").casefold()
           and not set(keywords(p)) <= left}
    if not new and moved:  # where one moved is a place, whatever NER read ("Bristol to Cardiff": an org)
        to = _moved_to(candidate)
        new = set(to) if len(to) == 1 else set()
    was = {p for p in old_places if p.casefold() in old.text.casefold() and p not in new
           and not (site == "works_at" and _name(old.object or "").startswith(_name(p)))
           and _name(p) not in _name(old.subject or "")  # 海洋 of 赵海洋 is a name's part, not a place
           and (not left or set(keywords(p)) <= left)}  # "from Yaba to Surulere" leaves Lagos where it was
    return (was.pop(), new.pop()) if len(new) == 1 and len(was) == 1 else None


def _moved_to(candidate: Fact) -> list[str]:
    """Where a candidate moved: the "to" of its "from X to Y" / "从X搬到Y", else the object of a
    ``lives_in`` fact written as a name."""
    to = destinations(candidate.text)
    value = candidate.object or ""
    if not to and _predicate(candidate.predicate or "") == "lives_in" and (value[:1].isupper() or HAN_RUN.match(value)):
        to = [value]
    return to


def _head_swap(value: str, text: str) -> tuple[str, str] | None:
    """A value of the same head in ``text``: 白班 finds 夜班, "day shifts" finds "night shifts"."""
    if HAN_RUN.fullmatch(value) and len(value) == 2:  # the end of a word of the text: 夜班 in 上夜班, not 叫团 in 叫团子
        found = {w[-2:] for w in segment(text) if len(w) >= 2 and w[-1] == value[-1] and HAN_RUN.fullmatch(w[-2:])}
    else:
        words = value.split()
        if len(words) < 2 or HAN_RUN.search(value):
            return None
        pattern = re.compile(rf"\b(?:\w+\s+){{{len(words) - 1}}}{re.escape(words[-1].rstrip('s'))}s?\b", re.IGNORECASE)
        found = {m.group(0) for m in pattern.finditer(text)}
    found -= {value}
    return (found.pop(), value) if len(found) == 1 else None
