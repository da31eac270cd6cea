"""The message log as a graph: Session -[:HAS_MESSAGE]-> Message, messages chained in order
(NEXT), each speaker a person entity that SAID its turns, and MENTIONS edges from every turn to
the entities it names.

Entity links are made two ways and unioned: the tagger (spaCy, jieba) proposes new names, and
a dictionary match links every name already known in the namespace (any entity name or
alias, found by looking up the text's 1-4 word n-grams in the names index), so a person is
linked in every sentence that names them, not only where the small NER model fires."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ..errors import ValidationError
from ..models import Edge, EdgeType, Entity, Message, MessageIn, Session, embed_text
from ..store import Store
from ..text import TaggedEntity, keywords, name_grams, normalise_name
from ..text.entities import (Normalised, addressed_by, addressed_in, cased_words, holds_name, is_noise_name,
                             longest_names, self_named)
from .builders import EntityResolver, SpeakerIn, TaggedIn, dictionary, dictionary_links, scope_of
from .parts import Parts, check


def message_inputs(messages: Sequence[MessageIn | dict | str] | MessageIn | dict | str, limit: int) -> list[MessageIn]:
    """What a caller passed as turns (one or many; text, dicts or ``MessageIn``), validated."""
    if isinstance(messages, (str, dict, MessageIn)):
        messages = [messages]
    if not messages:
        raise ValidationError("no messages given")
    if len(messages) > limit:
        raise ValidationError(f"{len(messages)} messages in one call; the limit is {limit}")
    return [m if isinstance(m, MessageIn) else check(MessageIn, {"content": m} if isinstance(m, str) else m,
                                                     f"message {i}") for i, m in enumerate(messages)]


def append_turns(session: Session, inputs: Sequence[MessageIn], now: datetime) -> tuple[list[Message], list[Edge]]:
    """New turns at the end of ``session`` (numbered from its ``next_seq``; its count, next
    number, last time and chain tail move on) with their HAS_MESSAGE and NEXT edges."""
    records = [
        check(Message, {
            "id": m.id or "", "namespace": session.namespace, "session_id": session.id, "role": m.role,
            "speaker": m.speaker, "content": m.content, "tool_calls": m.tool_calls, "tool_call_id": m.tool_call_id,
            "seq": session.next_seq + i, "created_at": m.created_at or now, "updated_at": now,
            "keywords": keywords(m.said), "metadata": m.metadata, **scope_of(m, [session]),  # else the session's
        }, f"message {i}")
        for i, m in enumerate(inputs)
    ]
    session.message_count += len(records)
    session.next_seq += len(records)
    session.last_message_at = max([r.created_at for r in records] + [session.last_message_at or records[0].created_at])
    session.updated_at = now
    return records, chain_edges(session, records)


def chain_edges(session: Session, records: Sequence[Message]) -> list[Edge]:
    """HAS_MESSAGE from the session to each new turn and NEXT from the session's last turn
    through the new ones; moves the session's ``last_message_id`` on."""
    ns = session.namespace
    edges = [Edge(namespace=ns, source=session.id, type=EdgeType.HAS_MESSAGE, target=m.id) for m in records]
    previous = session.last_message_id
    for m in records:
        if previous:
            edges.append(Edge(namespace=ns, source=previous, type=EdgeType.NEXT, target=m.id))
        previous = m.id
    session.last_message_id = previous
    return edges


@dataclass
class Linked:
    """What linking a batch of turns writes: the turns (their ``entities`` filled), the new
    entities with their vectors, and the SAID and MENTIONS edges."""

    messages: list[Message]
    entities: list[Entity] = field(default_factory=list)
    vectors: np.ndarray | None = None
    edges: list[Edge] = field(default_factory=list)

    def rows(self, message_vectors: np.ndarray) -> tuple[list, np.ndarray]:
        """The turns and new entities as one ``Store.put`` batch, with one vector row each."""
        vectors = [message_vectors] + ([self.vectors] if self.entities else [])
        return [*self.messages, *self.entities], np.vstack(vectors)


class LogLinker:
    """Links turns to their speakers and the entities they mention (see the module docstring)."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def link(self, namespace: str, messages: Sequence[Message], tags: Sequence[Sequence[TaggedEntity]],
             now: datetime) -> Linked:
        store = self.parts.store
        resolver = EntityResolver(store, namespace, now)
        grams = [name_grams(m.said) for m in messages]
        speakers = [SpeakerIn(name=m.speaker, type="person") if not is_noise_name(m.speaker) else None for m in messages]
        # one names-index lookup for every n-gram of the batch, then each turn's own grams
        known = dictionary(store.entities_named(namespace, Normalised(chain.from_iterable(grams)))) if grams else {}
        tagged = [[TaggedIn(name=t.name, type=t.type) for t in ts if not _two_names(t.name, ts, known)] for ts in tags]
        resolver.prefetch([e for e in speakers if e] + [e for ts in tagged for e in ts])
        if any(_may_be_short(e, resolver) for ts in tagged for e in ts):
            called = _addressed(messages, tagged, _speakers_around(store, namespace, messages), resolver)
            tagged = [[TaggedIn(name=called[key], type="person", aliases=[e.name])
                       if (key := normalise_name(e.name)) in called else e for e in ts] for ts in tagged]
        for e in [*filter(None, speakers), *(e for ts in tagged for e in ts)]:
            resolver.resolve(e)
        out: list[Message] = []
        edges: list[Edge] = []
        for m, speaker, ts, gs in zip(messages, speakers, tagged, grams):
            found: dict[str, Entity] = {}
            for e in ts:
                if (ent := resolver.resolve(e)) is not None:
                    found.setdefault(ent.id, ent)
            for ent in dictionary_links(gs, known, cased_words(m.said), resolver.resolved):
                found.setdefault(ent.id, ent)
            said_by = resolver.resolve(speaker) if speaker is not None else None
            if said_by is not None:
                edges.append(Edge(namespace=namespace, source=said_by.id, type=EdgeType.SAID, target=m.id))
            edges += [Edge(namespace=namespace, source=m.id, type=EdgeType.MENTIONS, target=eid, key="mention",
                           props={"role": "mention"}) for eid in found]
            out.append(m.model_copy(update={"entities": [e.name for e in found.values()]}))
        entities = resolver.new_entities()
        vectors = self.parts.embedder.embed([embed_text(e) for e in entities]) if entities else None
        return Linked(out, entities, vectors, edges)


_NICKNAME_TYPES = ("person", "org", "thing")  # the small NER model types a short first name as an org ("Deb")
_RECENT_TURNS = 10  # turns before a batch whose speakers a short form may address


def _may_be_short(e: TaggedIn, resolver: EntityResolver) -> bool:
    """Whether a tagged name could be a short form of a speaker's name (``_addressed``)."""
    key = normalise_name(e.name)
    return e.type in _NICKNAME_TYPES and len(key) >= 2 and " " not in key and not resolver.holders(key)


def _speakers_around(store: Store, namespace: str, messages: Sequence[Message]) -> dict[str | None, set[str]]:
    """Each session's speakers in the batch and in the turns just before it: who a turn may
    address (a chat written one turn at a time has one speaker a batch)."""
    out: dict[str | None, set[str]] = {}
    for m in messages:
        out.setdefault(m.session_id, set()).add(m.speaker or "")
    for session_id, names in out.items():
        first = min((m.seq for m in messages if m.session_id == session_id and m.seq is not None), default=None)
        if session_id is not None and first:
            before = store.query(namespace, "message", session_id=session_id, limit=_RECENT_TURNS,
                                 seq_range=(max(0, first - _RECENT_TURNS), first))
            names.update(n.speaker or "" for n in before if isinstance(n, Message))
    return {sid: {n for n in names if n and not is_noise_name(n)} for sid, names in out.items()}


def _addressed(messages: Sequence[Message], tagged: Sequence[Sequence[TaggedIn]], talking: dict[str | None, set[str]],
               resolver: EntityResolver) -> dict[str, str]:
    """Short forms of speakers' names in a batch -> the speaker each names: a name no entity
    holds yet (``_may_be_short``) that exactly one speaker of the turn's session (in the batch
    or the turns just before it) may be called (``addressed_by``), where another speaker speaks
    to her by it ("Hey Mel!" to Melanie, "Thanks, Deb", "你好，志强": ``addressed_in``) or she
    gives it as her own ("call me Mel", "你也可以叫我志强": ``self_named``). It names her in every
    turn of the batch and becomes her alias, so later turns link it too. On LoCoMo "Mel",
    "Deb", "Cal", "Caro", "Jo" and "Ev" had been people apart from the speakers they name (58,
    41, 25, 2, 5 and 2 turns), on MemoryBank the AI's "志强" a person apart from the user 曹志强
    (20 turns). A name talked about ("How's Chris doing?" to Christina) or one the speaker
    writes of someone else ("my brother Max", by Maxine) stays apart, and one already known
    stays what it is (``merge_candidates`` suggests, or ``maintain`` makes, the merge)."""
    called: dict[str, set[str]] = {}
    for m, ts in zip(messages, tagged):
        named = {normalise_name(s): s for s in talking[m.session_id]}
        for e in ts:
            key = normalise_name(e.name)
            if key in named or not _may_be_short(e, resolver):
                continue
            longer = [n for n in named if addressed_by(key, n)]
            if len(longer) == 1 and (self_named(m.said, e.name) if normalise_name(m.speaker or "") == longer[0]
                                     else addressed_in(m.said, e.name)):
                called.setdefault(key, set()).add(named[longer[0]])
    return {key: names.pop() for key, names in called.items() if len(names) == 1}


def _two_names(span: str, tagged: Sequence[TaggedEntity], known: dict[str, Entity]) -> bool:
    """A tagged span that holds two names, known or tagged beside it ("Globex in Lisbon"):
    the two are the entities, the span is none."""
    norm = normalise_name(span)
    inside = name_grams(span) & known.keys()
    inside |= {normalise_name(t.name) for t in tagged if t.name != span and holds_name(norm, normalise_name(t.name))}
    return len(longest_names(n for n in inside if n != norm)) >= 2