"""The lifecycle's rules: plain functions over the models, shared by every backend and by
both the write path and the batch maintenance run.

What to do with a candidate memory given the similar memories already stored:

- merge (duplicate): keyword Jaccard >= 0.6 with >= 3 shared keywords, the same
  subject-predicate-object, or a near paraphrase (cosine >= 0.9);
- supersede (override): the candidate's turn says a value changed ("switched from coffee",
  "Django is gone", "不再", "搬出") and names the stored value (cosine >= 0.2); or the same
  subject and predicate with a new object, unless the attribute holds many values at once
  (``learning``, ``has_pet``, ``likes``), the predicate states an event (``shares_photo``,
  ``thanked``: one more occasion, not a new value) or the new sentence still names the old value
  ("Daniel's rock band is called The Late Trains": it says more about it); or the same endpoints with the opposite predicate of
  one relation (likes -> dislikes, dating -> married_to); in both *and* about the same thing:
  cosine >= 0.55, or >= 0.2 when the predicate names one attribute (``prefers_language``, not
  a bare ``prefers``). Two memories that merely look alike never supersede each other; a
  value that only points at one ("a new office") replaces nothing, and a turn that adds
  ("besides", "除了") keeps the old value of the attribute;
  A memory that says its own value is over ("Hugo and Elin ended things") replaces the current
  one with that value; with ``attribute``, a new value of the same one-value attribute read by
  meaning (``attributes``: commute, diet, home ...) replaces a memory that says nothing else,
  whatever the predicates; a value named as what a change left ("from Bristol", "从华为") is never
  still held by the memory that names it;
- carry over: a change that swaps one value inside a memory saying more ("I relocated to
  Hamburg, same company" against "... at Contoso in Munich") supersedes it with the same text
  and the new value (``swaps.carried_over``, ``swaps.named_swap``), so what the window did not change holds;
  a move swaps the place it left wherever a memory names it in passing;
- add (coexist): everything else.

What happens to a stored memory over time (``LifecycleSettings`` holds the numbers):

- expire (demote): active, not pinned, importance < 0.1 and unused (last access, else
  creation) for 120 days -> archived (out of recall, still in history and export);
- purge: archived for 30 days and not pinned -> deleted for good. Nothing reaches purge
  without passing through archive, so a user-stated memory is always demoted first;
- cap: over a namespace's cap, the active memories lowest by the five-factor score without
  relevance (importance, confidence, recency, frequency) are archived first; pinned ones never;
- merge: near-duplicates (the ``decide`` merge rule) fold into the newest, which keeps the
  highest confidence and importance, the union of provenance and the sum of access counts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from ..models import SOURCE_CONFIDENCE, MemoryIn, MemoryRecord, Status
from ..retrieve.scoring import frequency, recency
from ..settings import LifecycleSettings, RecallOptions
from ..extract.checks import (change_words, holds_one_value, is_vague, kept_in, names_most, origins, predicate_family,
                              same_relation, says_it_left, times_of_day)
from ..extract.people import relation_named, relational
from ..extract.schema import normalise_predicate
from ..text import keywords, normalise_name

DUP_JACCARD = 0.6
DUP_SHARED = 3
PARAPHRASE_COS = 0.9
SAME_TOPIC_COS = 0.55
SPECIFIC_TOPIC_COS = 0.2


@dataclass(frozen=True)
class Fact:
    """The fields the rules read, for a stored memory or a candidate alike."""

    id: str
    text: str
    keywords: frozenset[str]
    subject: str | None
    predicate: str | None
    object: str | None
    said: str = ""  # a candidate's source turns (the user's words), where the rules may read them


@dataclass(frozen=True)
class Decision:
    action: Literal["add", "merge", "supersede"]
    target: str | None = None
    reason: str = ""
    swap: tuple[str, str] | None = None  # a successor that carries the old memory over: (old value, new value)


def keyword_overlap(a: frozenset[str], b: frozenset[str]) -> tuple[float, int]:
    shared = len(a & b)
    union = len(a | b)
    return (shared / union if union else 0.0), shared


_name = functools.lru_cache(maxsize=65_536)(normalise_name)  # the batch pass compares the same names often
_predicate = functools.lru_cache(maxsize=4096)(normalise_predicate)


def _same(a: str | None, b: str | None, predicate: bool = False) -> bool:
    if not a or not b:
        return False
    return _predicate(a) == _predicate(b) if predicate else _name(a) == _name(b)


def same_subject(a: str | None, b: str | None) -> bool:
    """One person named in full or by first name ("Daniel" and "Daniel Ortiz")."""
    if _same(a, b):
        return True
    if not a or not b:
        return False
    x, y = sorted((_name(a).split(), _name(b).split()), key=len)
    return len(x) >= 1 and len(y) > len(x) and y[:len(x)] == x


def same_triple(a: Fact | MemoryIn | MemoryRecord, b: Fact | MemoryIn | MemoryRecord) -> bool:
    """One subject, the same predicate and the same object, each as the rules normalise them
    (an empty predicate or object is no match)."""
    return same_subject(a.subject, b.subject) and _same(a.predicate, b.predicate, True) and _same(a.object, b.object)


def decide(candidate: Fact, similar: Sequence[tuple[Fact, float]], replaces: frozenset[str] = frozenset(),
           adds: bool = False, attribute: Callable[[str], str | None] | None = None) -> Decision:
    """``similar``: stored active memories with their cosine to the candidate, best first.
    ``replaces``: the key words of the candidate's turns when they say a value changed
    ("switched from coffee", "不再用 Django"); a stored fact of the same subject whose value they
    name is replaced whatever its predicate. ``adds``: the turns add a value beside the held
    ones ("besides", "除了"), so a new value of an attribute does not replace the old one.
    ``attribute``: the one-value attribute a text states by meaning (``attributes.Attributes``):
    a new value of the same one replaces a stored memory that says nothing else, whatever the
    predicates ("takes the bus to work" replaces "cycles to work")."""
    for old, cos in similar:
        why = is_duplicate(candidate, old, cos)
        if why:
            return Decision("merge", old.id, why)
    if is_vague(candidate.object):  # "works at a new office" names no value to replace one with
        return Decision("add")
    # "Sofia still in Valencia" says what stays: it may only restate a memory that holds that value
    # ("程亮还是当护士" for "程亮在南昌一家医院当护士" once he moved to a clinic), never replace another
    kept = set(keywords(candidate.object or "")) if _kept(candidate.object, kept_in(candidate.said)) else set()
    family = predicate_family(_predicate(candidate.predicate or ""))  # of the relation it states, if any
    for old, cos in similar:
        if not same_subject(candidate.subject, old.subject) or not kept <= old.keywords:
            continue
        if replaces and cos >= SPECIFIC_TOPIC_COS and _named_as_replaced(candidate, old, replaces):
            return Decision("supersede", old.id, f"the window replaces {old.object}: {old.object} -> {candidate.object}")
        if (old.object and _names_value(candidate.object, old.object) and says_it_left(candidate.text)
                and not says_it_left(old.text)):  # "Hugo and Elin ended things" against "Hugo is dating Elin"
            return Decision("supersede", old.id, f"the window says {old.object} is over")
        if (attribute is not None and not adds and candidate.object and old.object and _one_clause(old.text)
                and not _names_value(candidate.object, old.object) and not _still_has(candidate, old)
                and not says_it_left(candidate.text) and (same := attribute(candidate.text)) is not None
                and same == attribute(old.text) and not at_other_times(candidate, old)):
            return Decision("supersede", old.id, f"{same}, by meaning: {old.object} -> {candidate.object}")
        # a specific predicate (prefers_language) names one attribute; a bare verb (prefers,
        # likes, has) covers many, so only a memory about the same thing may be replaced
        specific = "_" in normalise_predicate(candidate.predicate or "")
        if cos < (SPECIFIC_TOPIC_COS if specific else SAME_TOPIC_COS):
            continue
        if adds:
            continue
        # a value named by part of the stored one ("书店" of "杭州书店") says it again, it is no new value
        if (_same(candidate.predicate, old.predicate, True) and not _names_value(candidate.object, old.object)
                and holds_one_value(_predicate(candidate.predicate or "")) and not _still_has(candidate, old)
                and not at_other_times(candidate, old) and not _mislabelled(candidate, attribute)
                and not (_predicate(old.predicate or "") == "works_as" and _WORKS_FOR_ONESELF.search(candidate.object or ""))):
            return Decision("supersede", old.id, f"{old.predicate}: {old.object} -> {candidate.object}")
        if (_same(candidate.object, old.object) and candidate.predicate
                and not same_relation(_predicate(candidate.predicate), _predicate(old.predicate or ""))
                and family is not None and family == predicate_family(_predicate(old.predicate or ""))):
            return Decision("supersede", old.id, f"{old.subject} -> {old.object}: {old.predicate} -> {candidate.predicate}")
    return Decision("add")


# predicates that name one of the attributes read by meaning (``attributes.ONE_VALUE``)
_HOME, _WORK = frozenset({"home"}), frozenset({"employer", "job"})
_PREDICATE_ATTRIBUTE = {"lives_in": _HOME, "live_in": _HOME, "住在": _HOME, "works_at": _WORK, "work_at": _WORK,
                        "works_for": _WORK, "drives": frozenset({"car"}), "commutes_by": frozenset({"commute"})}


# who one works for, not what one does: "self-employed" is no new occupation for "an electrician"
_WORKS_FOR_ONESELF = re.compile(r"\b(?:self-?employed|freelanc\w*|on (?:my|his|her|their) own|own (?:business|company|firm))\b"
                                r"|自由职业|个体户?|自己干|单干", re.IGNORECASE)


def _mislabelled(candidate: Fact, attribute: Callable[[str], str | None] | None) -> bool:
    """The candidate's predicate names one attribute and its text, read by meaning without the
    subject's name (names pull the embedder's reading about), states another: "Hannah is on the
    bus these days" under ``lives_in`` is a commute, and its "bus" is no new home."""
    named = _PREDICATE_ATTRIBUTE.get(_predicate(candidate.predicate or ""))
    if not named or attribute is None:
        return False
    text, subject = candidate.text.strip(), (candidate.subject or "").strip()
    said = text[len(subject):].strip() if subject and text.casefold().startswith(subject.casefold()) else text
    read = attribute(said) if said else None
    return read is not None and read not in named


def _kept(value: str | None, kept: frozenset[str]) -> bool:
    """All of a value is what its turn says stays: "南京" in "还是在南京" (not "南京小学")."""
    words = set(keywords(value or ""))
    return bool(words) and words <= kept


def _one_clause(text: str) -> bool:
    """A memory that says one thing: replaced whole by a new value of its attribute ("马骏开一辆
    卡罗拉，住在雁塔区" also says where he lives, and is left to the rules that swap one value)."""
    return not re.search(r"[,;，；]|\band\b", text)


def _still_has(candidate: Fact, old: Fact) -> bool:
    """The candidate's sentence names the old value as something that still holds: it says more
    about it, it does not replace it ("Daniel's rock band is called The Late Trains" against
    (Daniel, plays_music, rock band)). A turn that says the value changed is read before this
    (``replaces``)."""
    held = frozenset(keywords(old.object or ""))
    return bool(held) and held <= candidate.keywords and not held <= origins(candidate.text)  # "从华为跳到了OPPO"


def _names_value(value: str | None, stored: str | None) -> bool:
    """``value`` is the stored value, whole or by a part of its words: "the Picanto" one sold is
    "a red Kia Picanto", "the radio station" one quit is "radio station in Lagos"."""
    words = set(keywords(value or ""))
    return _same(value, stored) or bool(words) and words <= set(keywords(stored or ""))


def _named_as_replaced(candidate: Fact, old: Fact, replaces: frozenset[str]) -> bool:
    """The candidate's change turn names the old value, which is not the candidate's own value
    ("prefers Julia over Python" replaces Python)."""
    if not old.object or _same(candidate.object, old.object):
        return False
    if _still_has(candidate, old) and not _COMPARES.search(candidate.text):
        return False  # "Sofia works at the zoo" names the "work" of "Sofia walks to work": it holds
    value = set(keywords(old.object))
    if not value & old.keywords and not any(k in old.text.casefold() for k in value):
        # the object is a label in another language than its text (王强每天早上喝咖啡 | coffee):
        # the text's own words, less the subject and what the candidate says too, stand for it
        value = set(old.keywords) - set(keywords(old.subject or "")) - candidate.keywords
        return len(value & replaces) * 2 >= len(value) > 0
    return names_most(value, replaces) and not value <= set(keywords(candidate.object or ""))


def states_a_replaced_value(candidate: Fact, known: Sequence[Fact], replaces: frozenset[str]) -> bool:
    """A candidate that restates a stored memory's value which its own turn names as replaced,
    and names nothing new ("Daniel is using Django" from "Django is gone", "Kenji leaves
    Riverside" from "I left Riverside for Hillcrest"): the model retold the old value."""
    if not replaces or not candidate.object:
        return False
    value = set(keywords(candidate.object))
    if not names_most(value, replaces):
        return False
    for old in known:
        if same_subject(candidate.subject, old.subject) and old.object and value <= set(keywords(old.object)):
            said = (candidate.keywords & replaces) - old.keywords - change_words(candidate.text)
            if not said:
                return True
    return False


def says_again_what_changed(candidate: Fact, old: Fact, replaces: frozenset[str]) -> bool:
    """A candidate that repeats ``old`` although its own turn says the old value changed: the
    model restated a known memory ("Daniel is using Django" from "Django is gone"), or wrote
    the new value into the old memory's words ("starts the morning with tea instead of
    coffee" for "starts every morning with a coffee"). It must not keep ``old`` standing."""
    if not replaces or not same_subject(candidate.subject, old.subject):
        return False
    if old.object and names_most(set(keywords(old.object)), replaces):
        return True  # the old value itself is named as replaced
    subject = set(keywords(old.subject or ""))
    gone = (old.keywords - subject) & replaces - set(keywords(old.object or ""))
    return bool(gone) and bool(candidate.keywords - old.keywords - subject)


_COMPARES = re.compile(r"\b(over|than|instead of|rather than|versus|vs)\b|而不是|比|不如", re.IGNORECASE)


def fact_of(record_id: str, text: str, s: str | None, p: str | None, o: str | None, said: str = "") -> Fact:
    return Fact(record_id, text, frozenset(keywords(text)), s, p, o, said)


def at_other_times(candidate: Fact, old: Fact) -> bool:
    """The two say when in the day, and name no time in common ("In the afternoons I drink green
    tea" against "drinks a latte every morning"; "上午上课前喝一杯咖啡" against "每天晚上睡前喝一杯热
    牛奶"): two habits, not a new value of one. The candidate's time may be in its source turn only
    (the model wrote "Jonah drinks green tea at his desk")."""
    new = times_of_day(candidate.text) or times_of_day(candidate.said)
    held = times_of_day(old.text)
    return bool(new) and bool(held) and not new & held


def is_duplicate(a: Fact, b: Fact, cos: float, paraphrase_cos: float = PARAPHRASE_COS) -> str | None:
    """Why two facts are one (merge), or None. Never two values of one attribute (same
    subject and predicate, another object), never facts about two different subjects."""
    if a.subject and b.subject and not same_subject(a.subject, b.subject):
        return None
    same_sp = same_subject(a.subject, b.subject) and _same(a.predicate, b.predicate, True)
    same_triple = (same_subject(a.subject, b.subject) and _same(a.object, b.object)
                   and same_relation(_predicate(a.predicate or ""), _predicate(b.predicate or "")))
    if same_sp and a.object and b.object and not same_triple:
        return None  # a new value for the same attribute is never a duplicate, however alike the words
    if same_triple:
        return "same fact"
    if _another_tie(a.predicate, b.predicate):
        return None
    jac, shared = keyword_overlap(a.keywords, b.keywords)
    if jac >= DUP_JACCARD and shared >= DUP_SHARED:
        return f"keyword jaccard {jac:.2f}"
    if cos >= paraphrase_cos:
        return f"cosine {cos:.2f}"
    return None


def _another_tie(a: str | None, b: str | None) -> bool:
    """Whether one predicate names a relation between people the other does not: a dinner with
    one's roommate is not the roommate (the names alone make their words alike), a sister is not a
    manager; a tie named in general ("family") and one named exactly ("sister") may be one fact."""
    ra, rb = relation_named(a), relation_named(b)
    if ra == rb:
        return False
    return bool(ra and rb) or not (relational(a) and relational(b))


def restates_a_step(text: str, subject: str | None, procedures: Sequence[tuple[str, Sequence[str]]]) -> bool:
    """Small models often repeat a taught workflow's steps as memories: such a memory shares
    most of its own keywords with one step (or the task) of a procedure of the same window."""
    own = set(keywords(text)) - set(keywords(subject or ""))
    if not own:
        return False
    for task, steps in procedures:
        if len(own & set(keywords(" ".join(steps)))) / len(own) >= 0.6:  # the steps retold in one sentence
            return True
        for part in (task, *steps):
            step = set(keywords(part))
            shared = len(own & step)
            if shared / len(own) >= 0.6 or (len(step) >= 2 and shared / len(step) >= 0.75):
                return True
    return False


def merge_candidate(old: MemoryRecord, new: MemoryIn, now: datetime) -> MemoryRecord:
    """A candidate that repeats a stored memory: keep the highest confidence and importance,
    union the provenance; a candidate that says more (a strict superset of keywords)
    supplements the text."""
    new_conf = new.confidence if new.confidence is not None else SOURCE_CONFIDENCE[new.source]
    more = set(keywords(new.text)) > set(old.keywords)
    return MemoryRecord.model_validate({
        **old.model_dump(),
        "text": new.text if more else old.text,
        "keywords": keywords(new.text) if more else old.keywords,
        "confidence": max(old.confidence, new_conf),
        "importance": max(old.importance, new.importance),
        "pinned": old.pinned or new.pinned,
        "source_message_ids": list(dict.fromkeys([*old.source_message_ids, *new.source_message_ids])),
        "updated_at": now,
    })


def survivor(group: Sequence[MemoryRecord]) -> MemoryRecord:
    """The memory a group of duplicates folds into: the newest source (latest valid_at, then
    created_at), so the current wording wins."""
    return max(group, key=lambda m: (m.valid_at or m.created_at, m.created_at, m.id))


def fold_duplicates(keep: MemoryRecord, others: Sequence[MemoryRecord], now: datetime) -> dict[str, Any]:
    """The fields ``keep`` takes from the duplicates folded into it: the highest confidence and
    importance, the union of provenance, the sum of access counts, the latest use."""
    group = [keep, *others]
    used = [m.last_accessed_at for m in group if m.last_accessed_at is not None]
    return {
        "confidence": max(m.confidence for m in group),
        "importance": max(m.importance for m in group),
        "source": max(group, key=lambda m: m.confidence).source,
        "pinned": any(m.pinned for m in group),
        "access_count": sum(m.access_count for m in group),
        "last_accessed_at": max(used) if used else None,
        "source_message_ids": list(dict.fromkeys(i for m in group for i in m.source_message_ids)),
        "entities": list(dict.fromkeys(e for m in group for e in m.entities)),
        "updated_at": now,
    }


def last_used(m: MemoryRecord) -> datetime:
    return max(t for t in (m.last_accessed_at, m.created_at) if t is not None)


def expiry_date(m: MemoryRecord, policy: LifecycleSettings) -> datetime | None:
    """When an active memory becomes an expiry candidate if nobody uses it, or None: pinned,
    or important enough never to expire."""
    if m.pinned or m.importance >= policy.expire_importance_below:
        return None
    return last_used(m) + timedelta(days=policy.expire_unused_days)


def expiry_reason(m: MemoryRecord, now: datetime, policy: LifecycleSettings) -> str | None:
    """Why an active memory expires now (archived), or None."""
    due = expiry_date(m, policy)
    if m.status is not Status.active or due is None or due > now:
        return None
    days = (now - last_used(m)).total_seconds() / 86_400
    return (f"expired: importance {m.importance:g} < {policy.expire_importance_below:g} and unused for "
            f"{days:.0f} days (>= {policy.expire_unused_days:g})")


def purge_date(m: MemoryRecord, policy: LifecycleSettings) -> datetime | None:
    if m.status is not Status.archived or m.pinned or m.archived_at is None:
        return None
    return m.archived_at + timedelta(days=policy.purge_after_days)


def purge_reason(m: MemoryRecord, now: datetime, policy: LifecycleSettings) -> str | None:
    """Why an archived memory is deleted for good now, or None. Only archive leads to purge."""
    due = purge_date(m, policy)
    if due is None or due > now:
        return None
    return f"purged: archived on {m.archived_at:%Y-%m-%d}, {policy.purge_after_days:g} days ago or more"


def retention(m: MemoryRecord, now: datetime, options: RecallOptions) -> float:
    """The five-factor score without relevance (its weights renormalised): what a memory is
    worth keeping when no query is asking. Caps archive the lowest first."""
    w = options.weights
    total = w.importance + w.confidence + w.recency + w.frequency
    if total <= 0:
        return 0.0
    value = (w.importance * m.importance + w.confidence * m.confidence
             + w.recency * recency(m, now, options.recency_half_life_days)
             + w.frequency * frequency(m.access_count, options.frequency_saturation))
    return value / total


def over_cap(active: Sequence[MemoryRecord], now: datetime, policy: LifecycleSettings,
             options: RecallOptions) -> list[tuple[MemoryRecord, str]]:
    """The active memories a cap archives, lowest retention first (pinned ones never), with
    the reason."""
    cap = policy.max_active_memories
    if cap is None or len(active) <= cap:
        return []
    ranked = sorted((m for m in active if not m.pinned), key=lambda m: (retention(m, now, options), m.created_at, m.id))
    excess = len(active) - cap
    return [(m, f"cap: {len(active)} active memories > {cap}; retention {retention(m, now, options):.3f} "
                f"among the lowest") for m in ranked[:excess]]
