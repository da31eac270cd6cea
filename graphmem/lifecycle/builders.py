"""Builders that turn inputs (explicit writes, extracted windows) into nodes and edges ready
for one ``Store.put``: memories with their entities, relations and provenance, supersession,
episodes and procedures. They read the store but never write it: the caller writes the
result in one transaction, under the write lock."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from itertools import chain
from datetime import datetime
from typing import Any, ClassVar

import numpy as np

from ..errors import NotFoundError
from ..models import (
    SOURCE_CONFIDENCE, Edge, EdgeType, Entity, EntityIn, Episode, MemoryIn, MemoryRecord, Message, Node,
    Relation, RelationIn, Source, Status, SupersededBy, embed_text,
)
from ..models.entity_types import voted_type
from ..models.fields import MAX_TEXT_CHARS
from ..models.records import SCOPE_FIELDS
from ..store import Store
from ..text import keywords, normalise_name
from ..text.entities import Normalised, cased_words, is_noise_name, is_role_word, longest_names, name_grams, name_parts
from .parts import Parts, check
from .traces import relations_carrying

class TaggedIn(EntityIn):
    """An entity NER proposed: its type is a guess (the small model types people as places),
    so it never splits an identity; it is a vote (``with_vote``)."""

    EVIDENCE: ClassVar[str] = "ner"


class SpeakerIn(EntityIn):
    """The speaker of a turn: a person, the strongest evidence of a type."""

    EVIDENCE: ClassVar[str] = "speaker"


class ModelIn(EntityIn):
    """An entity the extraction model listed: its type is a vote, never a split of identity."""

    EVIDENCE: ClassVar[str] = "model"


class KnownIn(EntityIn):
    """A known entity a dictionary match found in a text: no new evidence of its type."""

    EVIDENCE: ClassVar[str] = "known"


def evidence(e: EntityIn) -> str:
    """Which kind of evidence an entity input's type is (``Entity.type_votes``): a plain
    ``EntityIn`` is the caller's."""
    return getattr(e, "EVIDENCE", "caller")


def with_vote(ent: Entity, source: str, etype: str) -> dict[str, Any]:
    """The changes a type vote makes to ``ent``: its votes (NER's first guess stays; a stated
    type replaces that source's earlier one) and its type, by the strongest stated vote, else
    the type stated before votes were kept, else NER's guess."""
    votes = dict(ent.type_votes)
    if etype != "thing" and source != "known" and not (source == "ner" and "ner" in votes):
        votes[source] = etype
    stated = {k: v for k, v in votes.items() if k != "ner"}
    if stated:
        return {"type_votes": votes, "type": voted_type(stated, ent.type), "typed": True}
    return {"type_votes": votes, "type": ent.type if ent.typed else votes.get("ner", ent.type)}


def shared_part(key: str, entities: Sequence[Entity]) -> bool:
    """Whether ``key`` (a normalised name) is only a part of the names of two or more people
    ("ingrid" of Ingrid Halvorsen and Ingrid Berg): it names neither of them for sure."""
    return len(entities) > 1 and all(
        e.type == "person" and key != normalise_name(e.name) and key in {normalise_name(p) for p in name_parts(e.name)}
        for e in entities)


def dictionary(named: dict[str, list[Entity]]) -> dict[str, Entity]:
    """The entity each known name links to in a dictionary match; a first name two people
    share links to neither (``shared_part``)."""
    return {norm: found[0] for norm, found in named.items() if found and not shared_part(norm, found)}


def dictionary_links(grams: Iterable[str], known: dict[str, Entity], cased: Collection[str] | None,
                     batch: Callable[[str], Entity | None] = lambda norm: None) -> list[Entity]:
    """The entities a text's n-grams (``name_grams``: normalised) name, the longest name first
    ("Maya Singh", not "Maya"): each found in ``known`` (``dictionary``) or in this batch's
    own entities (``batch``, by normalised name). A one-word name written with a capital links
    only where the text writes it with one, if its writer capitalises (``cased``: ``cased_words``
    of the text): "time" and "dance" do not name the "Time" and "Dance" that NER made of a
    sentence's first word (on LoCoMo's conversations 0-4 they were linked in 140 and 88 turns),
    nor does "Super excited!" (a word mostly written in lower case, starting a sentence)."""
    def links(gram: str) -> bool:
        ent = batch(gram) or known.get(gram)
        return ent is not None and (cased is None or " " in gram or gram in cased or ent.name == ent.name.lower())
    return [batch(n) or known[n] for n in longest_names(g for g in grams if links(g))]


class EntityResolver:
    """Maps entity names to existing entities (normalised name or alias), creating new ones
    once per batch, so one name never becomes two nodes of one kind. Identity is the name and,
    when a caller states it, the type: a person and a country both called "Jordan" are two
    entities. A stated type joins an entity of that name and type, else one whose type nobody
    stated (NER's guesses never split a name). A mention without a stated type takes the only
    entity of its name, or the most mentioned one, and its MENTIONS edge says so (``explain``).
    A name that is only a part of two people's names resolves to nobody (``resolve`` returns
    None): no silent pick, and ``explain`` lists it."""

    def __init__(self, store: Store, namespace: str, now: datetime) -> None:
        self.store = store
        self.namespace = namespace
        self.now = now
        self._known: dict[tuple[str, str | None], Entity | None] = {}  # (name, stated type or None) -> entity
        self._by_name: dict[str, Entity] = {}  # the last entity each name resolved to in this batch
        self._new: dict[str, Entity] = {}  # entities made or changed in this batch, by id
        self._new_named: dict[str, dict[str, Entity]] = {}  # the same, by each normalised name
        self._found: dict[str, list[Entity]] = {}  # stored entities by normalised name, of the names looked up
        self._looked_up: set[str] = set()
        self.notes: dict[str, str] = {}  # entity id -> how an ambiguous name was resolved to it

    def prefetch(self, entities: Iterable[EntityIn]) -> None:
        """Look up the stored entities of many names and aliases in one store call."""
        names = {normalise_name(n) for e in entities for n in (e.name, *e.aliases)} - {""} - self._looked_up
        if names:
            self._found.update(self.store.entities_named(self.namespace, names))
            self._looked_up |= names

    def resolve(self, e: EntityIn) -> Entity | None:
        key = normalise_name(e.name)
        # a type a person gave (a caller, a speaker) can tell two entities apart; a model's or NER's is a vote only
        stated = e.type if e.type != "thing" and evidence(e) in ("caller", "speaker") else None
        if (key, stated) in self._known and (
                (ent := self._known[(key, stated)]) is None
                or {normalise_name(a) for a in e.aliases} <= {normalise_name(n) for n in (ent.name, *ent.aliases)}):
            return ent  # resolved before in this batch, and no new alias to add
        wanted = [key, *(normalise_name(a) for a in e.aliases)]
        self.prefetch([e])
        candidates = list({c.id: c for n in wanted for c in self.holders(n)}.values())
        if stated in (None, "person") and not e.aliases and shared_part(key, candidates):
            self._known[(key, stated)] = None
            return None
        if stated is not None:  # the same name and type; else one whose type nobody stated (NER guessed it)
            ent = next((c for c in candidates if c.type == stated), None) or \
                self._most_mentioned(key, [c for c in candidates if not c.typed])
        else:
            ent = self._most_mentioned(key, candidates)
        source = evidence(e)
        if ent is None and e.type == "person" and (short := self._short_form(e)) is not None:
            # "Alice" spoke first, "Alice Chen" is named now: one person, called by the full name
            ent = short.model_copy(update={"name": e.name, "updated_at": self.now, "aliases": [
                short.name, *(a for a in [*short.aliases, *e.aliases, *self._parts(e, "person")]
                              if normalise_name(a) != normalise_name(short.name))]})
            self._keep(ent)
        if ent is None:
            ent = Entity(namespace=self.namespace, name=e.name, type=e.type, aliases=[*e.aliases, *self._parts(e, e.type)],
                         created_at=self.now, updated_at=self.now, typed=stated is not None,
                         type_votes={source: e.type} if e.type != "thing" else {})
            self._keep(ent)
        else:
            changes = with_vote(ent, source, e.type)
            aliases = [*ent.aliases, *(a for a in e.aliases if a not in ent.aliases)]
            if changes.get("type") == "person" and ent.type != "person":  # a person now: her name parts too
                aliases += [p for p in self._parts(ent, "person") if p not in aliases]
            if aliases != ent.aliases or any(getattr(ent, k) != v for k, v in changes.items()):
                ent = ent.model_copy(update={**changes, "aliases": aliases, "updated_at": self.now})
                self._keep(ent)
        for name in {key, *(normalise_name(a) for a in e.aliases)}:
            self._known[(name, stated)] = ent
            self._by_name[name] = ent
        return ent

    def _parts(self, e: EntityIn, stated: str | None) -> list[str]:
        """A person's name parts ("Agnieszka" of "Agnieszka Nowak") as aliases, each unless an
        entity other than a namesake has it: a later "Agnieszka" then links to her, never becomes
        a second entity; a part two people share is an alias of both and names neither
        (``shared_part``)."""
        if stated != "person" and e.type != "person":
            return []
        parts = [p for p in name_parts(e.name) if normalise_name(p) not in {normalise_name(a) for a in e.aliases}]
        self.prefetch(EntityIn(name=p) for p in parts)
        return [p for p in parts
                if all(o.type == "person" and normalise_name(o.name) != normalise_name(p)  # shared with a namesake
                       for o in self.holders(normalise_name(p)))]

    def _short_form(self, e: EntityIn) -> Entity | None:
        """The one person already known by a single word that is a part of ``e``'s name (the
        speaker "Daniel" when "Daniel Marquez" is named), if no one else holds that word."""
        parts = {normalise_name(p) for p in name_parts(e.name)}
        self.prefetch(EntityIn(name=p) for p in parts)
        holding = {p: {c.id: c for c in self.holders(p)} for p in parts}
        short = [c for p, held in holding.items() for c in held.values()
                 if c.type == "person" and normalise_name(c.name) == p and len(held) == 1]
        return short[0] if len(short) == 1 else None

    def _keep(self, ent: Entity) -> None:
        self._new[ent.id] = ent
        for name in {normalise_name(n) for n in [ent.name, *ent.aliases]}:
            self._new_named.setdefault(name, {})[ent.id] = ent

    def holders(self, norm: str) -> list[Entity]:
        """The entities, stored or made in this batch, that a normalised name or alias names."""
        return [*self._found.get(norm, ()), *self._new_named.get(norm, {}).values()]

    def _most_mentioned(self, key: str, candidates: list[Entity]) -> Entity | None:
        if len(candidates) < 2:
            return candidates[0] if candidates else None
        counts = Counter(e.target for e in self.store.edges(self.namespace, [c.id for c in candidates],
                                                             types=[EdgeType.MENTIONS], direction="in"))
        ent = max(candidates, key=lambda c: counts[c.id])  # ties: the oldest (candidates are oldest first)
        self.notes[ent.id] = (f"{len(candidates)} entities are named {key!r} "
                              f"({', '.join(f'{c.type} {c.id}' for c in candidates)}); no type was given, so the most "
                              f"mentioned one ({counts[ent.id]} mentions)")
        return ent

    def resolved(self, norm: str) -> Entity | None:
        """The entity a normalised name was resolved to in this batch, if it was."""
        return self._by_name.get(norm)

    def new_entities(self) -> list[Entity]:
        return list(self._new.values())


def scope_of(given: Any, sources: Sequence[Any]) -> dict[str, str | None]:
    """A record's user, agent and run: as given, else those its source turns agree on (a memory
    from one user's turns is that user's; from two users' turns, shared)."""
    out: dict[str, str | None] = {}
    for field in SCOPE_FIELDS:
        values = {getattr(s, field, None) for s in sources}
        out[field] = getattr(given, field, None) or (values.pop() if len(values) == 1 else None)
    return out


class GraphBuilder:
    """Nodes and edges from inputs; see the module docstring."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    @property
    def store(self) -> Store:
        return self.parts.store

    def memories(self, namespace: str, inputs: Sequence[MemoryIn], now: datetime) -> tuple[list[Node], np.ndarray, list[Edge]]:
        """Memory records, the entities they create and their edges, with one vector row per node."""
        sources = {sid for m in inputs for sid in m.source_message_ids}
        said: dict[str, datetime] = {}
        turns: dict[str, Node] = {}
        if sources:
            turns = {n.id: n for n in self.store.get(namespace, list(sources)) if n.kind == "message"}
            said = {i: n.created_at for i, n in turns.items()}
            if sources - said.keys():
                raise NotFoundError(f"source message {sorted(sources - said.keys())[0]!r} not found in {namespace!r}")
        tagged = [m.entities is None and not _triple_text(m) for m in inputs]  # a triple written out names its two
        tag_iter = iter(self.parts.tagger.tag_many([m.text for m, t in zip(inputs, tagged) if t]))
        all_mentions = [_mentions(m, next(tag_iter) if t else None) for m, t in zip(inputs, tagged)]
        grams = [name_grams(m.text) for m in inputs]
        known = dictionary(self.store.entities_named(namespace, Normalised(chain.from_iterable(grams)))) \
            if any(grams) else {}
        for m, mentions, gs in zip(inputs, all_mentions, grams):  # every name the namespace knows, not only where NER fires
            have = {normalise_name(e.name) for e, _ in mentions}
            for ent in dictionary_links(gs, known, cased_words(m.text)):
                if not have & {normalise_name(n) for n in (ent.name, *ent.aliases)}:
                    mentions.append((KnownIn(name=ent.name, type=ent.type), "mention"))
        resolver = EntityResolver(self.store, namespace, now)
        resolver.prefetch(e for mentions in all_mentions for e, _ in mentions)  # one lookup, not one per name
        records: list[MemoryRecord] = []
        edges: list[Edge] = []
        for m, mentions in zip(inputs, all_mentions):
            rec = MemoryRecord(
                id=m.id or "", namespace=namespace, text=m.text, category=m.category, subject=m.subject,
                predicate=m.predicate, object=m.object, importance=m.importance,
                confidence=m.confidence if m.confidence is not None else SOURCE_CONFIDENCE[m.source],
                source=m.source, pinned=m.pinned, valid_at=m.valid_at or now, invalid_at=m.invalid_at,
                source_message_ids=m.source_message_ids, episode_id=m.episode_id, created_at=now,
                said_at=max((said[i] for i in m.source_message_ids), default=None),
                updated_at=now, entities=[e.name for e, _ in mentions], keywords=keywords(m.text),
                metadata=m.metadata, **scope_of(m, [turns[i] for i in m.source_message_ids]),
            )
            records.append(rec)
            edges += _memory_edges(rec, mentions, m.relations, resolver)
        entities = resolver.new_entities()
        vectors = self.parts.embedder.embed([r.text for r in records] + [embed_text(e) for e in entities])
        return [*records, *entities], vectors, edges

    @staticmethod
    def patched(old: MemoryRecord, changes: dict[str, Any], now: datetime) -> MemoryRecord:
        """``old`` with fields changed in place (no correction); archiving by hand is dated and
        says so, so the purge rule and ``explain`` treat it like any other archived memory."""
        if changes.get("status") == "archived" and old.status is not Status.archived:
            changes = {**changes, "archived_at": now, "status_reason": "archived by hand"}
        elif changes.get("status") == "active":
            changes = {**changes, "archived_at": None, "status_reason": ""}
        return MemoryRecord.model_validate({**old.model_dump(), **changes, "updated_at": now})

    def retire(self, namespace: str, old: MemoryRecord, new: MemoryRecord, reason: str, now: datetime
               ) -> tuple[MemoryRecord, list[Edge]]:
        """The superseded version of ``old``, its SUPERSEDES edge from ``new`` and its relation
        edges closed. Bi-temporal: the old fact stopped holding when the new one began
        (``invalid_at`` = the new ``valid_at``); graphmem retired it now (``expired_at``)."""
        ended_at = min(new.valid_at or now, now)
        retired = MemoryRecord.model_validate({
            **old.model_dump(), "status": Status.superseded, "invalid_at": old.invalid_at or ended_at,
            "expired_at": now, "status_reason": f"superseded by {new.id}: {reason}", "updated_at": now,
        })
        ended = [Edge(namespace=namespace, source=new.id, type=EdgeType.SUPERSEDES, target=old.id,
                      props={"reason": reason, "at": now.isoformat()})]
        for edge in relations_carrying(self.store, namespace, [old.id]):
            ended.append(edge.model_copy(update={"props": {**edge.props, "invalid_at": retired.invalid_at.isoformat()}}))
        return retired, ended

    def mark_derived(self, namespace: str, old: MemoryRecord, new: MemoryRecord, now: datetime,
                     pending: dict[str, Node] | None = None, inferred: bool = False) -> list[Node]:
        """The turns ``old`` was derived from, the episode that produced it and the other turns of
        that window that restate its value, marked ``superseded_by`` ``new``: they state the old
        value, so context annotates them (and recall ranks them lower, unless the change was
        ``inferred`` by the model: ``SupersededBy``). Turns ``new`` also cites are left alone
        (they say the new value). ``pending`` holds nodes of the same batch, which are marked
        instead of their stored copy."""
        pending = pending or {}

        def load(ids: Sequence[str]) -> dict[str, Node]:
            missing = [i for i in ids if i not in pending]
            found = {n.id: n for n in self.store.get(namespace, missing)} if missing else {}
            return {i: n for i in ids if (n := pending.get(i) or found.get(i)) is not None}

        cited = [i for i in [*old.source_message_ids, old.episode_id] if i and i not in new.source_message_ids]
        nodes = load(cited)
        episode = nodes.get(old.episode_id or "")
        if isinstance(episode, Episode):  # an acknowledgement beside the cited turn says the old value too
            rest = [i for i in episode.message_ids if i not in nodes and i not in new.source_message_ids]
            nodes |= {i: m for i, m in load(rest).items() if isinstance(m, Message) and restates(m.content, old, new)}
        # turns and episodes no one cited that state the old value of the same subject: a memory
        # written by hand, or a fact the user said before it was extracted
        said = " ".join(x for x in (old.object, *keywords(old.text)) if x)
        found = {i for kind in ("message", "episode")
                 for i, _ in self.store.keyword_search(namespace, kind, said, RESTATING_K, [Status.active])}
        found -= {*nodes, *new.source_message_ids}
        nodes |= {n.id: n for n in load(sorted(found)).values() if _states_old_value(n, old, new)}
        mark = SupersededBy(memory_id=new.id, at=min(new.valid_at or now, now), text=new.text,  # when it changed
                            inferred=inferred)
        return [n.model_copy(update={"superseded_by": mark, "updated_at": now})
                for n in nodes.values() if isinstance(n, (Message, Episode))]

    def mentioned_ids(self, namespace: str, memory_id: str) -> list[str]:
        return [e.target for e in self.store.edges(namespace, [memory_id], types=[EdgeType.MENTIONS])]

    def entities_of(self, namespace: str, memory_id: str) -> list[EntityIn]:
        ents = self.store.get(namespace, self.mentioned_ids(namespace, memory_id))
        return [EntityIn(name=e.name, type=e.type, aliases=e.aliases) for e in ents]

    def episode(self, namespace: str, summary: Any, session_id: str | None, messages: Sequence[Message],
                memory_ids: Sequence[str], importance: float, confidence: float = 1.0) -> tuple[Episode, list[Edge]]:
        """An episode and its COVERS, PRODUCED and NEXT edges (``confidence``: 1.0 for one a
        person wrote, the inferred 0.7 for the model's summary of a window)."""
        previous = None
        if session_id is not None:
            prior = self.store.query(namespace, "episode", session_id=session_id, limit=1)
            previous = prior[0].id if prior else None
        times = [m.created_at for m in messages]
        episode = check(Episode, {
            "namespace": namespace, "summary": summary, "session_id": session_id,
            "message_ids": [m.id for m in messages], "memory_ids": list(memory_ids), "importance": importance,
            "confidence": confidence, "previous_episode_id": previous,
            "start_at": min(times, default=None), "end_at": max(times, default=None),
            # a summary over the limit is refused by the check, not tokenized first (10 MB took 7 s)
            "keywords": keywords(summary) if isinstance(summary, str) and len(summary) <= MAX_TEXT_CHARS else [],
            **scope_of(None, messages),
        }, "episode")
        edges = [Edge(namespace=namespace, source=episode.id, type=EdgeType.COVERS, target=m.id) for m in messages]
        edges += [Edge(namespace=namespace, source=episode.id, type=EdgeType.PRODUCED, target=i) for i in memory_ids]
        if previous:
            edges.append(Edge(namespace=namespace, source=previous, type=EdgeType.NEXT, target=episode.id))
        return episode, edges


def _triple_text(m: MemoryIn) -> bool:
    """Whether the text is only the given triple written out ("Ann WORKS_AT Initech"): its
    entities are the subject and the object, and NER must not read it as one name."""
    if not (m.subject and m.predicate and m.object):
        return False
    said = " ".join(m.text.replace("_", " ").split()).casefold()
    return said == " ".join(f"{m.subject} {m.predicate} {m.object}".replace("_", " ").split()).casefold()


def _mentions(m: MemoryIn, tagged: list | None) -> list[tuple[EntityIn, str]]:
    """(entity, role) pairs a memory mentions: subject and object first, then the rest."""
    out: dict[str, tuple[EntityIn, str]] = {}
    for name, role in ((m.subject, "subject"), (m.object, "object")):
        if name:
            out.setdefault(normalise_name(name), (EntityIn(name=name), role))
    voter = ModelIn if m.source is not Source.user_stated else EntityIn
    listed = [voter(**e.model_dump()) if type(e) is EntityIn else e for e in m.entities] if m.entities is not None else \
        [TaggedIn(name=t.name, type=t.type) for t in tagged or []]
    for e in listed:
        key = normalise_name(e.name)
        if key in out and out[key][0].type == "thing":
            out[key] = (e, out[key][1])  # the listed entity carries a better type
        out.setdefault(key, (e, "mention"))
    for r in m.relations:
        for name in (r.source, r.target):
            out.setdefault(normalise_name(name), (EntityIn(name=name), "mention"))
    # what a caller listed by hand is kept unless it is a role word or a greeting; the rest is checked whole
    named = {normalise_name(e.name) for e in listed if evidence(e) == "caller"}
    return [v for k, v in out.items() if k and not (is_role_word(k) if k in named else is_noise_name(k))]


def _memory_edges(rec: MemoryRecord, mentions: list[tuple[EntityIn, str]], relations: list[RelationIn],
                  resolver: EntityResolver) -> list[Edge]:
    ns = rec.namespace
    edges = [
        Edge(namespace=ns, source=rec.id, type=EdgeType.MENTIONS, target=ent.id, key=role,
             props={"role": role, **({"resolved": resolver.notes[ent.id]} if ent.id in resolver.notes else {})})
        for e, role in mentions for ent in [resolver.resolve(e)] if ent is not None
    ]
    edges += [Edge(namespace=ns, source=rec.id, type=EdgeType.DERIVED_FROM, target=mid) for mid in rec.source_message_ids]
    triples = [(r.source, r.predicate, r.target) for r in relations]
    if rec.subject and rec.predicate and rec.object:
        triples.append((rec.subject, rec.predicate, rec.object))
    for source, predicate, target in triples:
        if is_noise_name(source) or is_noise_name(target):  # "User prefers tea": the triple stays on the memory
            continue
        ends = resolver.resolve(EntityIn(name=source)), resolver.resolve(EntityIn(name=target))
        if ends[0] is None or ends[1] is None:  # a first name two people share: no relation to a guess
            continue
        edges.append(Relation(namespace=ns, source_id=ends[0].id, predicate=predicate, target_id=ends[1].id,
                              memory_id=rec.id, valid_at=rec.valid_at, invalid_at=rec.invalid_at).to_edge())
    return edges


RESTATING_K = 20  # turns and episodes a correction looks through for its old value, of each kind


def _states_old_value(node: Node, old: MemoryRecord, new: MemoryRecord) -> bool:
    """Whether a turn or an episode no memory cites states ``old``'s value about ``old``'s
    subject: the subject spoke it, or it names the subject, or (no subject) anyone did. A turn
    that names something the old fact does not ("I moved to Lisbon and I prefer green tea")
    says more than the old value and is left unmarked: marked, recall would damp what else it says."""
    if isinstance(node, Message):
        text, who = node.content, node.speaker
        if {normalise_name(n) for n in node.entities} - {normalise_name(n) for n in (*old.entities, who)}:
            return False
    elif isinstance(node, Episode) and isinstance(node.summary, str):
        text, who = node.summary, ""
    else:
        return False
    if node.superseded_by is not None or not restates(text, old, new):
        return False
    about = normalise_name(old.subject or "")
    return not about or about == normalise_name(who) or about in normalise_name(text)


def corrected_triple(old: MemoryRecord, text: str) -> dict[str, str | None]:
    """The subject and object of ``old`` as a corrected ``text`` states them: each kept while
    the text still names it (or never named it: "User" behind "I prefer tea"); a value the
    text replaced ("Ana prefers green tea" -> "Ana prefers oolong now") becomes what stands in
    its place ("oolong"); one it no longer names, with nothing in its place, is cleared, so a
    correction never keeps a stale object. The predicate goes with an object that went."""
    out: dict[str, str | None] = {"subject": old.subject, "predicate": old.predicate, "object": old.object}
    for field in ("subject", "object"):
        value = out[field]
        if value and value.casefold() in old.text.casefold() and value.casefold() not in text.casefold():
            out[field] = _in_place(old.text, text, value)
    if old.object and out["object"] is None:
        out["predicate"] = None
    return out


_NOW_WORDS = re.compile(r"(?:\s*\b(?:now|instead|these days|nowadays|from now on|anymore)\b|现在|如今|改成|换成|了)+", re.I)
_END = re.compile(r"[\s.!。！]+$")


def _in_place(before: str, after: str, value: str) -> str | None:
    """What ``after`` says where ``before`` said ``value``: the text between the words before it
    and the words after it, both unchanged (time words such as "now" or 现在 aside)."""
    start = before.casefold().find(value.casefold())
    head, tail = before[:start].casefold(), _END.sub("", before[start + len(value):]).casefold()
    for said in (after, _NOW_WORDS.sub("", after)):
        rest = _END.sub("", said).casefold()
        if rest.startswith(head) and rest.endswith(tail) and len(rest) > len(head) + len(tail):
            span = _NOW_WORDS.sub("", _END.sub("", said)[len(head) : len(rest) - len(tail)]).strip(" ,，")
            if span and len(span) <= 80 and value.casefold() not in span.casefold():
                return span
    return None


def restates(text: str, old: MemoryRecord, new: MemoryRecord) -> bool:
    """Whether ``text`` states ``old``'s value: it names the old value (the object, or the
    keywords only the old text has) with some of what the old memory is about, and nothing
    of the new value."""
    before, after = set(keywords(old.text)), set(keywords(new.text))
    was = set(keywords(old.object)) if old.object else before - after
    is_now = set(keywords(new.object)) if new.object else after - before
    said = set(keywords(text))
    return bool(was) and was <= said and not is_now & said and bool((before - was) & said)
