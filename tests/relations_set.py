"""The relationship question set (``tests/data/relations/households.json``): six small
households and teams, English and Chinese, turned into conversations and into questions that
follow 1-3 relations to a person and ask one of their facts ("Which city does Marek Nowak's
sister's husband work in?", "王磊的姐姐的丈夫在哪个城市工作？"). The evidence of a question is
the turn in which that person states the fact; the turns that state each relation on the way
are its path. Used by ``tests/test_relations.py`` and ``benchmarks/relations.py``."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "relations" / "households.json"
RECORDINGS = DATA.with_name("recordings.json")  # the model's replies to the set's windows (extraction on)
HELDOUT = DATA.with_name("heldout.json")
HELDOUT_RECORDINGS = DATA.with_name("heldout_recordings.json")
ATTRIBUTES = ("sport", "drink", "pet", "city")
# The day the set's conversations are said on: a window's prompt carries its date, so turns
# stamped with the day of the run would ask for other recorded replies every day. The day the
# replies were recorded on, so the recordings still match.
SAID_ON = datetime(2026, 12, 7, 9, tzinfo=timezone.utc)

# the words of the set (households.json) and of the held-out households (heldout.json, "wording":
# "heldout"): facts, relations and questions said otherwise, relations stated in passing
FACT = {
    "en": {"sport": "My favourite sport is {x}.", "drink": "I start every morning with {x}.",
           "pet": "Our pet is a {x}.", "city": "I work in {x} these days."},
    "zh": {"sport": "我最喜欢的运动是{x}。", "drink": "我每天早上都喝{x}。",
           "pet": "我养的宠物是一只{x}。", "city": "我现在在{x}工作。"},
    "en-heldout": {"sport": "Most weekends you'll find me doing {x}.", "drink": "Nothing beats {x} right after I wake up.",
                   "pet": "We adopted a {x} last spring.", "city": "My office moved to {x} last year."},
    "zh-heldout": {"sport": "我的爱好是{x}，每周都练。", "drink": "我一起床就要喝一杯{x}。",
                   "pet": "去年春天我们领养了一只{x}。", "city": "去年我的办公室搬到了{x}。"},
}
ASK = {
    "en": {"sport": "What is {who}'s favourite sport?", "drink": "What does {who} drink in the morning?",
           "pet": "What pet does {who} have?", "city": "Which city does {who} work in?"},
    "zh": {"sport": "{who}最喜欢什么运动？", "drink": "{who}早上喝什么？",
           "pet": "{who}养了什么宠物？", "city": "{who}在哪个城市工作？"},
    "en-heldout": {"sport": "Which sport does {who} do on weekends?", "drink": "What does {who} have after waking up?",
                   "pet": "What animal did {who} adopt?", "city": "Where is the office of {who}?"},
    "zh-heldout": {"sport": "{who}每周练什么？", "drink": "{who}起床后喝什么？",
                   "pet": "{who}领养了什么动物？", "city": "{who}的办公室搬到了哪里？"},
}
RELATION = {"en": "My {rel} is {other}.", "zh": "我的{rel}是{other}。",
            "en-heldout": "I had dinner with my {rel} {other} yesterday.", "zh-heldout": "昨天我和我{rel}{other}一起吃了晚饭。"}
FILLER = {
    "en": ["The weather has been lovely this week.", "I need to fix the garage door soon.",
           "We grilled on the balcony last night.", "Traffic was terrible this morning.",
           "I finally finished that long novel."],
    "zh": ["这周天气很好。", "我得尽快把车库门修好。", "昨晚我们在阳台上烧烤。", "今天早上路上很堵。",
           "我终于看完了那本很长的小说。"],
}


@dataclass(frozen=True)
class Question:
    household: str
    lang: str
    text: str
    hops: int
    answer: str
    evidence: str  # the turn id where the person asked about states the fact
    path: tuple[str, ...]  # the turn ids that state each relation on the way


@dataclass(frozen=True)
class Household:
    id: str
    lang: str
    sessions: dict[str, list[dict]]  # session id -> turns (id, speaker, content)
    questions: list[Question]
    relations: tuple[tuple[str, str, str], ...]  # (person, relation, person) as the turns state them
    facts: tuple[tuple[str, str], ...] = ()  # (person, value) of each fact a person states


def _who(lang: str, start: str, rels: list[str]) -> str:
    if lang == "zh":
        return "的".join([start, *rels])
    return "".join([start] + [f"'s {r}" for r in rels])


def load(path: Path = DATA) -> list[Household]:
    out = []
    for h in json.loads(path.read_text(encoding="utf-8"))["households"]:
        lang, hid, people = h["lang"], h["id"], h["people"]
        words = f"{lang}-{h['wording']}" if h.get("wording") else lang
        fact_turn: dict[tuple[str, str], str] = {}
        facts: list[dict] = []
        for i, (name, attrs) in enumerate(people.items()):
            for a in ATTRIBUTES:
                tid = f"{hid}-{i}-{a}"
                fact_turn[(name, a)] = tid
                facts.append({"id": tid, "speaker": name, "content": FACT[words][a].format(x=attrs[a])})
            for j in range(2):
                facts.append({"id": f"{hid}-{i}-filler{j}", "speaker": name,
                              "content": FILLER[lang][(i + j) % len(FILLER[lang])]})
        said: dict[str, list[tuple[str, str, str]]] = {}
        rel_turns = []
        for n, (a, rel, b) in enumerate(h["relations"]):
            tid = f"{hid}-rel{n}"
            said.setdefault(a, []).append((rel, b, tid))
            rel_turns.append({"id": tid, "speaker": a, "content": RELATION[words].format(rel=rel, other=b)})
        questions = []

        def walk(start: str, at: str, rels: list[str], path: list[str], seen: set[str]) -> None:
            for rel, other, tid in said.get(at, []):
                if other in seen:
                    continue
                chain, way = [*rels, rel], [*path, tid]
                # two of the four facts per chain, rotating, so every fact is asked about
                for a in (ATTRIBUTES[len(questions) % 4], ATTRIBUTES[(len(questions) + 2) % 4]):
                    questions.append(Question(hid, lang, ASK[words][a].format(who=_who(lang, start, chain)), len(chain),
                                              people[other][a], fact_turn[(other, a)], tuple(way)))
                if len(chain) < 3:
                    walk(start, other, chain, way, seen | {other})

        for person in people:
            walk(person, person, [], [], {person})
        # facts first (each person is a speaker, so a known name, before anyone names them)
        out.append(Household(hid, lang, {f"{hid}-facts": facts, f"{hid}-family": rel_turns}, questions,
                             tuple(map(tuple, h["relations"])),
                             tuple((name, attrs[a]) for name, attrs in people.items() for a in ATTRIBUTES)))
    return out


def ingest(mem, household: Household) -> str:
    """The household's conversation in its own namespace (returned)."""
    ns = f"rel-{household.id}"
    said = itertools.count()
    for session, turns in household.sessions.items():
        mem.add_messages(session, [{**t, "created_at": SAID_ON + timedelta(seconds=next(said))} for t in turns],
                         namespace=ns)
    return ns


def evaluate(mem, households: list[Household], k: int = 5, options=None,
             layers: tuple[str, ...] | None = ("message",), by: str = "turns") -> dict[tuple[str, int], list[float]]:
    """(language, hops) -> per question 1.0 when its evidence turn is found. ``by="turns"``: among
    the first ``k`` distinct turns the ranked items carry (a turn itself, the turns a memory was
    read from, an episode's window: an equal budget of turns, whatever the layers); ``by="items"``:
    among the turns of the top ``k`` items. ``layers=None``: every layer recall searches by default
    (asked for 3k items, enough to carry k turns; a message is one turn, so turns alone ask for k)."""
    from graphmem.settings import RecallFilter

    out: dict[tuple[str, int], list[float]] = {}
    for h in households:
        ns = f"rel-{h.id}"
        for q in h.questions:
            hits = mem.recall(q.text, k=k if layers == ("message",) else 3 * k, namespace=ns, layers=list(layers) if layers else None,
                              filter=RecallFilter.READ_ONLY, options=options)
            out.setdefault((q.lang, q.hops), []).append(float(q.evidence in carried(hits, k, by)))
    return out


def carried(hits, k: int, by: str) -> list[str]:
    """The turns ``evaluate`` counts: the first ``k`` distinct turns of the ranked items, or every
    turn of the top ``k`` items."""
    if by == "items":
        return [t for s in hits[:k] for t in s.turns]
    turns: list[str] = []
    for s in hits:
        turns.extend(t for t in s.turns if t not in turns)
    return turns[:k]


def facts_stored(mem, households: list[Household]) -> tuple[int, int, int]:
    """(facts stated by a person that an active memory of that person holds, memories that hold a
    person's fact under another person's name, facts stated): what extraction kept of "We adopted a
    cockatiel last spring." said by Erik Holm, and whether it stayed his."""
    right = elsewhere = 0
    for h in households:
        memories = [m for m in mem.list("memory", namespace=f"rel-{h.id}", limit=10_000) if m.status.value == "active"]
        for person, value in h.facts:
            holding = [m for m in memories if value.casefold() in f"{m.text} {m.object or ''}".casefold()]
            mine = [m for m in holding if _same_person(m.subject or "", person)]
            right += bool(mine)
            elsewhere += sum(1 for m in holding if m.subject and m not in mine)
    return right, elsewhere, sum(len(h.facts) for h in households)


def _same_person(subject: str, person: str) -> bool:
    """A memory's subject names the person: the whole name, or a part of it ("Ada" for Ada Okafor)."""
    s, p = subject.strip().casefold(), person.casefold()
    return s == p or (bool(s) and s in p.split())


def relation_edges(mem, households: list[Household]) -> tuple[int, int]:
    """(stated relations that are a relation edge from the person who states it to the one named,
    stated relations): what extraction made of "My sister is Olga Berg." said by Marek Nowak."""
    from graphmem.errors import NotFoundError

    found = 0
    for h in households:
        ns = f"rel-{h.id}"
        for owner, _, other in h.relations:
            try:
                near = mem.neighbourhood(owner, depth=1, namespace=ns)
            except NotFoundError:  # no entity of that name
                continue
            names = {e.id: e.name for e in near.entities}
            found += any(r.source_id == near.entity.id and names.get(r.target_id) == other for r in near.relations)
    return found, sum(len(h.relations) for h in households)
