"""Recall's graph walk: the entities a query names, their relation rings, and
the people one step further along a relation the question follows, named by its best hits
(multi-hop through what people said)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..embed import Embedder
from ..extract.people import relation_named
from ..models import EdgeType
from ..store import Store
from ..store.layers import Walked
from ..text import STOPWORDS, keywords, segment
from ..text.relations import RELATIONS, relation_of
from ..text.tokens import scripts_apart
from .scoring import specificity


class Walk:
    """The query's entities and their relation neighbourhood: entity -> hop, graph score and
    the step that reached it. A named entity's evidence is its specificity in the namespace
    (``specificity``: naming someone the whole namespace is about says little); each hop costs
    evidence (``RecallOptions.hop_decay``), except a first hop across a relation the query
    names ("Dave's *manager*" crossing ``manages``, "周敏的姐姐" crossing ``sister``): that is
    the question's own path. A relation is named when it shares a keyword with the query or
    means one of its words (``_PREDICATE_COS``). Paths further out are read only for the
    items shown."""

    def __init__(self, store: Store, namespace: str, walked: Walked, query: str, size: int,
                 decay: float, embedder: Embedder | None = None) -> None:
        self.store, self.namespace, self.size = store, namespace, size
        self.hops = walked.hops
        named = _named_relations(query, {step[1] for step in walked.first.values()}, embedder)
        self.score = {}
        for e, h in self.hops.items():
            step = walked.first.get(e)
            self.score[e] = (specificity(walked.mentions.get(e, 0), size) if h == 0
                             else 1.0 if step is not None and step[1] in named else decay ** h)
        self.parent: dict[str, tuple[str, str, bool]] = dict(walked.first)
        self.entities: dict[str, Any] = {e.id: e for e in walked.entities}
        self.named: list[Any] = list(walked.entities)  # the entities the query names
        self.bridged: dict[str, str] = {}  # an entity reached through a hit -> the path there
        self.said: set[tuple[str, str]] = set()  # (turn, bridged entity that said it)
        self.waypoints: set[str] = set()  # entities the question passes through to ask about another
        self.frontier: list[str] = [e.id for e in walked.entities]  # where the question's path stands

    def load(self, ids) -> dict[str, Any]:
        """The entity records of ``ids`` (read once, on demand: most recalls need few or none)."""
        missing = [i for i in ids if i not in self.entities]
        if missing:
            self.entities.update({n.id: n for n in self.store.get(self.namespace, missing) if n.kind == "entity"})
        return {i: self.entities[i] for i in ids if i in self.entities}

    def paths(self, targets: set[str]) -> dict[str, str]:
        """target entity -> "Dave <-manages- Carol" (one path to it, by relation names)."""
        frontier = {t for t in targets if self.hops.get(t, 0) >= 2 and t not in self.parent}
        while frontier:  # further out: read the relations of the few nodes shown, back one ring at a time
            back: dict[str, tuple[str, str, bool]] = {}
            for e in self.store.edges(self.namespace, list(frontier), types=[EdgeType.RELATES_TO], direction="both"):
                here, there = (e.target, e.source) if e.target in frontier else (e.source, e.target)
                if here in back or self.hops.get(there) != self.hops[here] - 1 or e.props.get("invalid_at"):
                    continue
                back[here] = (there, str(e.props.get("predicate") or e.key or "related"), there == e.source)
            self.parent.update(back)
            frontier = {p for p, *_ in back.values() if self.hops.get(p, 0) >= 2 and p not in self.parent}
        chains = {}
        for t in targets:
            steps, node = [], t
            while node in self.parent:
                prev, predicate, forward = self.parent[node]
                steps.append((predicate, forward, node))
                node = prev
            chains[t] = (node, steps[::-1])
        self.load({start for start, _ in chains.values()} | {to for _, steps in chains.values() for *_, to in steps})
        out = {}
        for t, (start, steps) in chains.items():
            text = self._name(start)
            for predicate, forward, to in steps:
                text += f" -{predicate}-> {self._name(to)}" if forward else f" <-{predicate}- {self._name(to)}"
            out[t] = text
        return out

    def _name(self, entity_id: str) -> str:
        ent = self.entities.get(entity_id)
        return ent.name if ent is not None else entity_id

    def bridge(self, starts: list[tuple[Any, str, str]], statuses: dict[str, tuple], relation: str
               ) -> dict[str, dict[str, tuple[float, str]]]:
        """One hop along the question's own path through what was said: among the people the
        given hits name (``(record, path there, the entity it was reached from)``, best first: a
        turn the query's person said, an item that mentions them) and the walk has not reached,
        those a hit puts beside the relation the question follows from a name at this step
        (``relation``: "sister" in "Marek's sister", ``person_relations``; the name within a few
        words of it: "My sister is Olga Berg", "我的姐姐是李娜"), and per layer the nodes they said or are
        named in -> (evidence, entity). "Which sport does Marek's sister play?": Marek -said->
        "My sister Olga Berg is visiting next week." -mentions-> Olga Berg -said-> "I play
        volleyball...". Such a person takes full evidence, and the entity it was reached from
        becomes a waypoint (its own items are not what the question asks about: Marek's
        favourite sport is not his sister's). At most ``_BRIDGES`` people.

        Hops to whatever else a hit names are not taken: on LoCoMo, where the third entities a
        speaker names are mostly the chat's hubs or words the tagger took for names ("Wanna",
        "Nature"), they moved recall@10 by -0.001 / +0.001 (tuning / held-out half), and buried
        among other chats (``benchmarks/long_history.py``) they cost 0.0005 against no hop at all."""
        via = {r.id: (rank, r, path, source) for rank, (r, path, source) in enumerate(starts)}
        # person -> (rank, hit, path there, from): a relation edge of the question's relation says
        # who it is; where none does, the people the hits name beside the relation's word
        found: dict[str, tuple] = self._by_edge(relation)
        hits: dict[str, list[tuple]] = {}  # entity -> the hits that name it, best first
        mentions = () if found else self.store.edges(self.namespace, list(via), types=[EdgeType.MENTIONS],
                                                      direction="out")
        for e in mentions:
            # a person a relation edge reached is taken too (with extraction, "Marek Nowak's sister
            # is Olga Berg" made Marek -sister-> Olga, two steps out decayed; her turns had no evidence)
            if self.hops.get(e.target, 1) > 0 and e.target not in self.bridged:
                hits.setdefault(e.target, []).append(via[e.source])
        for e, n in self.load(hits).items():
            if n.type != "person" or n.feedback == "rejected":
                continue
            own = [hit for hit in sorted(hits[e], key=lambda hit: hit[0])
                   if linked(record_text(hit[1]), relation, (n.name, *n.aliases))]
            if own:
                found[e] = own[0]
        chosen = sorted(found, key=lambda e: (found[e][0], e))[:_BRIDGES]
        if not chosen:
            return {}
        out: dict[str, dict[str, tuple[float, str]]] = {}
        for e in chosen:
            _, rec, path, source = found[e]
            self.bridged[e] = f"{path} {_quote(rec)} -mentions-> {self.entities[e].name}" if rec is not None else path
            self.waypoints.add(source)
        self.frontier = chosen
        if "message" in statuses:
            for e in self.store.edges(self.namespace, chosen, types=[EdgeType.SAID], direction="out"):
                out.setdefault("message", {}).setdefault(e.target, (1.0, e.source))
                self.said.add((e.target, e.source))
        for layer, admitted in statuses.items():
            if layer in ("memory", "message", "episode"):
                for node, e in self.store.mentioned_by(self.namespace, chosen, layer, admitted, _BRIDGE_PAIRS):
                    out.setdefault(layer, {}).setdefault(node, (1.0, e))
        return out

    def _by_edge(self, relation: str) -> dict[str, tuple]:
        """The people a relation edge of the question's own relation leads to from where the path
        stands (the query's people, then those the last step reached): "Marek Nowak's son" crosses
        Marek Nowak -son-> Tomasz Nowak whichever hits the first pass ranked (with every person's
        facts extracted, the sentence that says who the son is ranked below the sport facts the
        question's words find, and no step was taken)."""
        wanted = relation_of(relation)
        if not wanted:
            return {}
        steps: dict[str, tuple[str, str]] = {}  # person -> (predicate, from)
        for e in self.store.edges(self.namespace, self.frontier, types=[EdgeType.RELATES_TO], direction="out"):
            predicate = str(e.props.get("predicate") or e.key or "")
            if not e.props.get("invalid_at") and e.target not in self.bridged and relation_named(predicate) == wanted:
                steps.setdefault(e.target, (predicate, e.source))
        people = self.load({*steps, *(src for _, src in steps.values())})
        return {e: (-1, None, f"{self._name(src)} -{predicate}-> {self._name(e)}", src)
                for e, (predicate, src) in steps.items() if getattr(people.get(e), "type", None) == "person"}

    def is_waypoint(self, name: str) -> bool:
        return any(self.entities[e].name == name for e in self.waypoints if e in self.entities)

    def bridge_path(self, node: str, entity: str) -> str | None:
        """The path a bridged hit was reached by, ending in how it touches the entity."""
        path = self.bridged.get(entity)
        if path is None:
            return None
        return f"{path} -said->" if (node, entity) in self.said else f"{path} <-mentions-"


_BRIDGES = 5  # people one bridge step adds at most
_BRIDGE_PAIRS = 200  # (node, entity) pairs read per layer for them


def record_text(rec: Any) -> str:
    said = getattr(rec, "content", None) or getattr(rec, "text", None) or getattr(rec, "summary", "")
    return " ".join(str(said).split())


def _quote(rec: Any) -> str:
    text = record_text(rec)
    return repr(text if len(text) <= 60 else text[:57] + "...")


_NEAR = 24  # characters between a relation word and the name it introduces ("my sister is ", "的姐姐是")


def linked(text: str, word: str, names: tuple[str, ...]) -> bool:
    """Whether ``text`` puts ``word`` right beside one of ``names``, in one sentence:
    "My sister is Olga Berg", "Olga Berg, my sister", "我的姐姐是李娜" (not "Thanks, Gina! I'm
    expanding my dance studio": a name called out is not the word's)."""
    low = text.casefold()
    spots = [m.span() for n in names if n for m in re.finditer(re.escape(n.casefold()), low)]
    for m in re.finditer(re.escape(word.casefold()), low):
        for start, end in spots:
            between = low[end : m.start()] if end <= m.start() else low[m.end() : start] if start >= m.end() else ""
            if len(between) <= _NEAR and not _SENTENCE_END.search(between):
                return True
    return False


_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f]")


_PREDICATE_COS = 0.7  # a relation means a query word from this cosine (sister: 姐姐 0.79, sibling 0.80, daughter 0.66)
_WORD_VECTORS: dict[tuple[str, str], np.ndarray] = {}  # (embedder, word) -> its vector: relation names, query words
_WORD_CACHE = 4096


def _named_relations(query: str, predicates: set[str], embedder: Embedder | None) -> set[str]:
    """The relation names (``predicate``) the query names, by a shared keyword or by meaning:
    a relation's words against the query's words, one by one, any language the embedder reads."""
    if not predicates:
        return set()
    query = scripts_apart(query)
    terms = set(keywords(query))
    named = {p for p in predicates if terms & set(keywords(p.replace("_", " ")))}
    words = [w for w in dict.fromkeys(segment(query)) if w.casefold() not in STOPWORDS and w.strip()]
    rest = [p for p in predicates if p not in named]
    if not (embedder and words and rest):
        return named
    phrases = {p: " ".join(p.replace("_", " ").split()) for p in rest}
    vec = _word_vectors(embedder, [*words, *phrases.values()])
    q = np.stack([vec[w] for w in words])
    return named | {p for p, text in phrases.items() if float(np.max(q @ vec[text])) >= _PREDICATE_COS}


def person_relations(words: Sequence[str], embedder: Embedder | None) -> tuple[str, ...]:
    """The ``words`` that name how one person stands to another ("Marek's *sister*", "Dave's
    *coworkers*", 王磊的*姐姐*): a word of ``RELATIONS`` or one that means a relation's name
    (sibling -> sister 0.80, kids -> child 0.84). A question follows only those from a name to
    another person: "Caroline's *painting*" or "Melanie's *family*" names no one else (0.34 and
    0.59), and following them made the person asked about a waypoint (long histories: LoCoMo
    questions lost the turns of the person they ask about)."""
    words = [w for w in words if w.strip()]
    out = {w for w in words if relation_of(w)}
    rest = [w for w in dict.fromkeys(words) if w not in out]
    if rest and embedder is not None:
        vec = _word_vectors(embedder, [*rest, *RELATIONS])
        names = np.stack([vec[r] for r in RELATIONS])
        out |= {w for w in rest if float(np.max(names @ vec[w])) >= _PREDICATE_COS}
    return tuple(w for w in words if w in out)  # in the question's order, a relation followed twice twice


def _word_vectors(embedder: Embedder, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """``texts`` -> their vectors, short words and relation names, cached per embedder."""
    model = getattr(embedder, "name", type(embedder).__name__)
    vec = {t: _WORD_VECTORS.get((model, t)) for t in dict.fromkeys(texts)}
    missing = [t for t, v in vec.items() if v is None]
    if missing:
        if len(_WORD_VECTORS) + len(missing) > _WORD_CACHE:
            _WORD_VECTORS.clear()
        for t, v in zip(missing, embedder.embed(missing)):
            vec[t] = _WORD_VECTORS[(model, t)] = v
    return vec
