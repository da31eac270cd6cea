"""Who an extracted fact is about, whoever phrased it, and the relations between the people it
names: plain rules over the memory's text and the names of its window, no model.

- ``addressed``: a memory the model wrote in the second person, echoing the assistant ("Your
  boss is Zhou Min", "你的上司是周敏") is about the user the assistant spoke to;
- ``ties``: the relations a memory states between two named people ("Li Na's manager is Zhou
  Min", "his sister Mei", "陆远的上司是周敏"): each becomes a relation edge besides the memory;
- ``whose``: the speaker who said a fact, where the model gave one speaker's words to another in
  a window several people speak in ("My office moved to Umea" said by Erik Holm stored as "Sven
  Lindqvist moved to Umea");
- ``about``: the person a memory is about when the model made the owner of a relation its
  subject ("Priya's husband Arjun works at Infosys" is Arjun's job, not Priya's; "陆远的上司讨厌
  周五下午开会" is about 周敏 once the window says who 陆远's boss is).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..models import Message
from ..text import keywords
from ..text.relations import RELATIONS, relation_of
from .schema import ExtractedMemory, normalise_predicate

_HAN = re.compile(r"[\u3400-\u9fff]")


_RELATIONAL = frozenset({"relationship", "relation", "related", "dating", "dates", "married", "spouse", "sibling",
                         "parent", "family", "relative", "engaged", "ex"})


def relational(predicate: str | None) -> bool:
    """A predicate that states a relation between people (``relationship``, ``spouse``,
    ``has_sister``, ``上司``), not something about one of them."""
    parts = (predicate or "").casefold().split("_")
    return any(p in _RELATIONAL or relation_of(p) for p in parts if p)


def relation_named(predicate: str | None) -> str | None:
    """The relation between people a predicate names as a whole (``has_sister``, ``Mentor`` ->
    teacher, ``team_lead`` -> manager), or None."""
    return relation_of(re.sub(r"^(?:has|is)_", "", normalise_predicate(predicate or "")).replace("_", " "))


@dataclass(frozen=True)
class Tie:
    """``owner`` -relation-> ``target``; ``on_target``: the sentence goes on about the target
    ("Lena's boss Tom Keller prefers email"), not about the relation itself."""

    owner: str
    relation: str
    target: str
    on_target: bool = False


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted({w for w in words if w}, key=len, reverse=True))


_RELS_EN = _alternation(w for words in RELATIONS.values() for w in words if not _HAN.search(w))
_RELS_ZH = _alternation(w for words in RELATIONS.values() for w in words if _HAN.search(w))
_POSS = r"['\u2019]s\s+"


def ties(text: str, names: Sequence[str], subject: str | None = None) -> list[Tie]:
    """The relations ``text`` states between two of ``names`` (a subject's "his sister Mei" too)."""
    names = [n for n in names if n and n.strip()]
    if not names:
        return []
    who = _alternation(names)
    out: list[Tie] = []
    patterns = [
        # Li Na's manager is Zhou Min / Lena's boss Tom Keller prefers email
        (rf"(?<!\w)(?P<o>{who}){_POSS}(?P<r>{_RELS_EN})(?P<sep>,?\s+(?:is|was|named|called)\s+|,?\s+)(?P<t>{who})(?!\w)",
         re.IGNORECASE),
        # Zhou Min is Li Na's manager
        (rf"(?<!\w)(?P<t>{who})\s+(?:is|was)\s+(?P<o>{who}){_POSS}(?P<r>{_RELS_EN})\b", re.IGNORECASE),
        # 陆远的上司是周敏 / 陆远的上司周敏讨厌开会
        (rf"(?P<o>{who})的(?P<r>{_RELS_ZH})(?P<sep>是|叫|名叫|，|,)?(?P<t>{who})", 0),
        # 周敏是陆远的上司
        (rf"(?P<t>{who})是(?P<o>{who})的(?P<r>{_RELS_ZH})", 0),
    ]
    for pattern, flags in patterns:
        for m in re.finditer(pattern, text, flags):
            sep = m.groupdict().get("sep")
            on_target = "sep" in m.groupdict() and (not sep or not sep.strip(" ,，")) and m.end() < len(text.rstrip("。.!！"))
            out.append(Tie(_named(m.group("o"), names), relation_of(m.group("r")),
                           _named(m.group("t"), names), on_target))
    if subject and subject in names:  # Sam ... to see his sister Mei
        gender: dict[str, str] = {}  # what the text tells of a person's: "his sister Olga" -> Olga is "f"
        for m in re.finditer(rf"\b(?P<p>his|her|their)\s+(?P<r>{_RELS_EN}),?\s+(?P<t>{who})(?!\w)", text, re.IGNORECASE):
            relation, target = relation_of(m.group("r")), _named(m.group("t"), names)
            owner = _owner(m.group("p").casefold(), text[:m.start()], who, names, subject, gender)
            if owner:
                out.append(Tie(owner, relation, target))
            if relation in _GENDER:
                gender.setdefault(target.casefold(), _GENDER[relation])
    return [t for t in dict.fromkeys(out) if t.owner.casefold() != t.target.casefold()]


_GENDER = {**dict.fromkeys(("sister", "wife", "mother", "daughter", "grandmother", "aunt"), "f"),
           **dict.fromkeys(("brother", "husband", "father", "son", "grandfather", "uncle"), "m")}


def _owner(pronoun: str, before: str, who: str, names: Sequence[str], subject: str,
           gender: dict[str, str]) -> str | None:
    """Whose relation "his / her / their <relation>" is: the subject's, unless the text has told
    the subject is of the other gender and named since someone the pronoun fits ("Marek
    introduces his sister Olga and her husband Henrik": Olga's husband, not Marek's); nobody's
    where no one fits. Records the owner's gender."""
    want = {"his": "m", "her": "f"}.get(pronoun)
    if want is None:
        return subject
    if gender.get(subject.casefold(), want) != want:
        named = [_named(m.group(0), names) for m in re.finditer(rf"(?<!\w)(?:{who})(?!\w)", before, re.IGNORECASE)]
        subject = next((n for n in reversed(named) if gender.get(n.casefold()) == want), None)
    if subject:
        gender.setdefault(subject.casefold(), want)
    return subject


def _named(found: str, names: Sequence[str]) -> str:
    return next((n for n in names if n.casefold() == found.casefold()), found)


def unnamed_relation(text: str, names: Sequence[str]) -> tuple[str, str] | None:
    """(owner, relation) when the text starts with a relation of a named person and names no
    one for it ("陆远的上司讨厌周五下午开会", "Wei's mother runs a hotpot restaurant")."""
    who = _alternation(n for n in names if n and n.strip())
    if not who:
        return None
    m = (re.match(rf"\s*(?P<o>{who}){_POSS}(?P<r>{_RELS_EN})\b(?!\s*,?\s*(?:is|was)\b)", text, re.IGNORECASE)
         or re.match(rf"\s*(?P<o>{who})的(?P<r>{_RELS_ZH})(?!是|叫)", text))
    return (_named(m.group("o"), names), relation_of(m.group("r"))) if m else None


# second person ---------------------------------------------------------------------------
_YOU = frozenset({"you", "your", "yourself", "你", "您", "你自己"})
_IRREGULAR = {"are": "is", "were": "was", "have": "has", "do": "does", "go": "goes", "'re": " is", "'ve": " has"}
_UNINFLECTED = frozenset({"can", "could", "will", "would", "shall", "should", "may", "might", "must"})
# words between the person and the verb ("You sometimes walk" -> "Ana sometimes walks")
_ADVERBS = ("also", "still", "often", "usually", "always", "never", "now", "just", "really", "recently", "sometimes",
            "only", "already", "rarely", "mostly", "generally")
# words after "you" / "I" that are no verb ("You and Tom went hiking")
_NOT_VERBS = frozenset({"and", "or", "too", "as", "both", "all", "alone", "to", "in", "at", "on", "with", "for", "from",
                        "of", "by", "about", "two"})
_AS_SAID = rf"(?:((?:{'|'.join(_ADVERBS)}) )?(\w+n't|\w+))"


_PRESENT_ED = frozenset({"need", "feed", "bleed", "breed", "speed", "heed", "proceed", "succeed", "exceed", "shed"})


def _third_person(verb: str) -> str:
    low = verb.casefold()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _UNINFLECTED or low.endswith("ed") and low not in _PRESENT_ED:
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def addressed(text: str, subject: str | None, user: str | None) -> tuple[str, str | None]:
    """A memory written to the user ("Your boss is Zhou Min", "You work in Hangzhou", "你的上司是
    周敏") written about them, and its subject "you" or "your boss" made theirs. Only a memory
    whose subject or first word is the second person: "Li Na thanks you" is left as it is."""
    if not user:
        return text, subject
    second = re.match(r"\s*(?:you|your)\b|\s*(?:你|您)(?!们)", text, re.IGNORECASE) or (
        subject and (subject.strip().casefold() in _YOU or re.match(r"(?:your\s|你的|您的)", subject.strip().casefold())))
    if not second:
        return text, subject
    if subject:
        low = subject.strip().casefold()
        if low in _YOU:
            subject = user
        elif re.match(r"your\s+", low):
            subject = f"{user}'s {subject.strip()[5:].strip()}"
        elif subject.strip().startswith(("你的", "您的")):
            subject = f"{user}的{subject.strip()[2:]}"
    if _HAN.search(text):
        return re.sub(r"(你|您)(?!们)", user, text), subject
    text = re.sub(rf"\b[Yy]ou(?:'re|'ve| {_AS_SAID})", lambda m: (
        f"{user} {m.group(1) or ''}{_said(m.group(2))}" if m.group(2) else user + _IRREGULAR[m.group(0)[3:]]), text)
    text = re.sub(r"\b[Yy]our\b", f"{user}'s", text)
    return re.sub(r"\b[Yy]ou\b", user, text), subject


_FIRST = {"i'm": "is", "i've": "has", "i'd": "would", "i'll": "will"}
_FIRST_VERBS = {"am": "is", "was": "was", "don't": "doesn't"}  # the rest as ``_third_person`` reads them
_PAST = frozenset("sold bought got left went had took made met gave lost began came saw found felt kept ran quit put set "
                  "read won wrote drove rode ate drank sang swam taught thought told spent sent built broke chose fell "
                  "forgot grew knew paid said slept spoke stood woke wore flew".split())


def _said(word: str) -> str:
    """A verb said in the first or second person, in the third ("walk" -> "walks", "sold",
    "don't" -> "doesn't"); a word that is no verb stays as it is."""
    low = word.casefold()
    if low in _NOT_VERBS or low in _PAST:
        return word
    return _FIRST_VERBS.get(low) or (word if low.endswith("n't") else _third_person(word))


def first_person(text: str, user: str | None) -> str:
    """A memory the model wrote in the speaker's own words ("I drink mint tea in the afternoon",
    "My wife Chloe and I have a tortoise", "我每周五学画画") written about them: a memory is read
    away from its turn, where "I" is nobody. Only a memory that opens in the first person."""
    if not user:
        return text
    named = re.match(rf"\s*{re.escape(user)}\s*[,:]?\s+(?=(?:I\b|I'|my\b))", text, re.IGNORECASE)
    if named:  # "Henrik Berg my favourite sport is rowing": the name, then the speaker's words
        text = text[named.end():]
    if not re.match(r"\s*(?:I\b|I'|my\b)|\s*我(?!们)", text, re.IGNORECASE):
        return text
    if _HAN.search(text) and not re.match(r"\s*[A-Za-z]", text):
        return re.sub(r"我(?!们)", user, text)

    def verb(m: re.Match[str]) -> str:
        if not m.group(2):
            return f"{user} {_FIRST[m.group(0).strip().casefold()]}"
        return f"{user} {m.group(1) or ''}{_said(m.group(2))}"

    text = re.sub(rf"^\s*I(?:'m|'ve|'d|'ll| {_AS_SAID})", verb, text)
    text = re.sub(r"\b[Mm]y\b", f"{user}'s", text)
    return re.sub(r"\b(?:I|me|myself)\b", user, text)


def about_whom(memories: Sequence[ExtractedMemory], names: Sequence[str]) -> list[tuple[ExtractedMemory, list[Tie]]]:
    """Each memory with its subject set to the person it is about, and the relations it states.
    A memory that names a relation's target and goes on about them ("Priya's husband Arjun works
    at Infosys", subject Priya) is the target's; one that speaks of a relation it does not name
    ("陆远的上司讨厌周五下午开会") is the person another memory of the window names for it."""
    found = [ties(m.text, names, m.subject) for m in memories]
    named = {(t.owner.casefold(), t.relation): t.target for ts in found for t in ts}
    out = []
    for m, ts in zip(memories, found):
        owner = (m.subject or "").casefold()
        # "Nadia's boyfriend Tariq and I share a flat" (Nadia, relationship, Tariq) is about them both
        on = None if relational(m.predicate) else next(
            (t for t in ts if t.on_target and t.owner.casefold() == owner), None)
        unnamed = None if on or ts else unnamed_relation(m.text, names)
        target = on.target if on else named.get((unnamed[0].casefold(), unnamed[1])) if unnamed and \
            unnamed[0].casefold() == owner else None
        if target:
            obj = None if (m.object or "").casefold() == target.casefold() else m.object
            m = m.model_copy(update={"subject": target, "object": obj})
        out.append((m, ts))
    return out


# what a turn states of its own speaker -------------------------------------------------------
# relations read from either end: A's sister B is B's brother or sister, A's son B has A for a
# mother or father; a relation missing here (manager, aunt) is read from its own end only
_SIBLING, _SPOUSE, _PARENT, _CHILD = ({"sister", "brother"}, {"husband", "wife"}, {"mother", "father"},
                                      {"son", "daughter", "child"})
_INVERSE: dict[str, set[str]] = {
    **{r: _SIBLING for r in _SIBLING}, **{r: _SPOUSE for r in _SPOUSE}, **{r: _CHILD for r in _PARENT},
    **{r: _PARENT for r in _CHILD}, "teacher": {"student"}, "student": {"teacher"},
    **{r: {r} for r in ("colleague", "friend", "roommate", "neighbour", "cousin", "partner")},
}


def stated_ties(text: str, speaker: str, names: Sequence[str]) -> list[tuple[Tie, str]]:
    """The relations a turn states between its speaker and a named person, each with the turn's
    word for it: "My sister is Olga Berg", "my boss, Tom Keller, ...", "我的姐姐是李娜", "我姐姐叫李娜"
    -> speaker -relation-> the name."""
    names = [n for n in names if n and n.strip() and n.casefold() != (speaker or "").casefold()]
    if not (speaker and names):
        return []
    who = _alternation(names)
    found = [*re.finditer(rf"\bmy\s+(?P<r>{_RELS_EN})(?:,|\s+(?:is|was|named|called))?\s+(?P<t>{who})(?!\w)",
                          text, re.IGNORECASE),
             *re.finditer(rf"我的?(?P<r>{_RELS_ZH})(?:是|叫|名叫|，|,)?(?P<t>{who})", text)]
    return list(dict.fromkeys((Tie(speaker, relation_of(m.group("r")), _named(m.group("t"), names)), m.group("r"))
                              for m in found))


def written_as(text: str, names: Sequence[str]) -> Callable[[Tie], Tie]:
    """A tie with its people named as ``text`` names them where it gives a name in two scripts
    ("My manager is 周敏 (Zhou Min)": a memory's "Zhou Min" is 周敏)."""
    who = _alternation(n for n in names if n and n.strip())
    same: dict[str, str] = {}
    for m in re.finditer(rf"(?P<a>{who})\s*[(\uff08]\s*(?P<b>[^()\uff08\uff09]{{1,40}}?)\s*[)\uff09]", text) if who else ():
        same[m.group("b").casefold()] = m.group("a")

    def named(tie: Tie) -> Tie:
        return Tie(same.get(tie.owner.casefold(), tie.owner), tie.relation, same.get(tie.target.casefold(), tie.target),
                   tie.on_target)
    return named


def agrees(tie: Tie, said: Tie) -> bool:
    """Whether a memory's relation says what a turn said: the same one, or the same pair read from
    the other end (B is A's sister's brother or sister)."""
    owner, target = tie.owner.casefold(), tie.target.casefold()
    if (owner, target) == (said.owner.casefold(), said.target.casefold()):
        return tie.relation == said.relation
    return (owner, target) == (said.target.casefold(), said.owner.casefold()) and \
        tie.relation in _INVERSE.get(said.relation, set())


def relation_memory(tie: Tie, word: str, turn: int) -> ExtractedMemory:
    """A memory of a relation a turn states and the window's memories do not ("My sister is Olga
    Berg" said by Marek Nowak -> "Marek Nowak's sister is Olga Berg", "王磊的姐姐是李娜"), in the
    turn's language and with its word for the relation."""
    text = f"{tie.owner}的{word}是{tie.target}" if _HAN.search(word) else f"{tie.owner}'s {word.casefold()} is {tie.target}"
    return ExtractedMemory(text=text, kind="fact", subject=tie.owner, predicate=tie.relation, object=tie.target,
                           importance=0.75, source="user_stated", turns=[turn])


# who said it ---------------------------------------------------------------------------------
def value_share(terms: Sequence[str], turn: Message) -> float:
    """The share of a fact's key words a turn says (a Chinese one anywhere in it)."""
    said, text = set(turn.keywords or keywords(turn.content)), turn.content.casefold()
    return sum(1 for k in terms if k in said or (_HAN.search(k) and k in text)) / len(terms)


def _names(person: str, text: str) -> bool:
    """Whether ``text`` names ``person``: the whole name, a part of a Latin one, a Chinese given name."""
    low, name = text.casefold(), person.strip().casefold()
    if name in low:
        return True
    if _HAN.search(name):
        return len(name) >= 3 and name[1:] in low
    return any(re.search(rf"(?<!\w){re.escape(part)}(?!\w)", low) for part in name.split() if len(part) > 1)


def _renamed(text: str, old: Sequence[str], new: str) -> str:
    """``text`` with the person it names by one of ``old`` (the longest it has; a Latin first
    name last) named ``new``."""
    forms = sorted({o for o in old if o}, key=len, reverse=True)
    forms += [o.split()[0] for o in forms if not _HAN.search(o) and " " in o.strip()]
    for form in forms:
        pattern = re.escape(form) if _HAN.search(form) else rf"(?<!\w){re.escape(form)}(?!\w)"
        if re.search(pattern, text):
            return re.sub(pattern, new, text)
    return text


def whose(m: ExtractedMemory, msgs: Sequence[Message]) -> ExtractedMemory | str | None:
    """Whose fact a memory states, where several people speak in its window and the model made
    one of them its subject: None when that speaker said it (a turn of theirs, or one naming them,
    says at least half of its value) or nothing tells; the memory given to the one other speaker
    whose turns say it best ("Sven Lindqvist moved to Umea" cited to Erik Holm's "My office moved
    to Umea last year."), its text naming them; why it is dropped when several others say it and
    its subject does not ("Sven Lindqvist finally finished that long novel", said by two others)."""
    users = [x for x in msgs if x.role != "assistant" and x.speaker]
    speakers = list(dict.fromkeys(x.speaker for x in users))
    subject = (m.subject or "").strip()
    who = [p for p in speakers if p.casefold() == subject.casefold()] or \
        [p for p in speakers if subject and _names(subject, p)]  # "Ada" for Ada Okafor
    if not who and subject and not any(subject.casefold() in x.content.casefold() for x in msgs):
        who = [subject]  # a name no turn gives: the model's blend of two ("刘小雨" of 刘强 and 马小雨)
    if len(speakers) < 2 or len(who) != 1:
        return None
    named = set(keywords(subject)) | set(keywords(who[0]))
    terms = [k for k in keywords(m.object or m.text) if k not in named]
    if not terms:
        return None
    shares = [(value_share(terms, x), x) for x in users]
    if any(s >= 0.5 and (x.speaker == who[0] or _names(who[0], x.content)) for s, x in shares):
        return None
    best = max(s for s, _ in shares)
    if best < 0.5:
        return None
    top = [x for s, x in shares if s == best]
    owners = list(dict.fromkeys(x.speaker for x in top))
    if len(owners) > 1:
        return f"said by {' and '.join(owners)}, not by {who[0]}"
    turns = [i for i, x in enumerate(msgs, 1) if any(x is t for t in top)]
    return m.model_copy(update={"subject": owners[0], "text": _renamed(m.text, (who[0], subject), owners[0]),
                                "turns": turns})
