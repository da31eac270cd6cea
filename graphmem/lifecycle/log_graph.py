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
from ..text import TaggedEntity, keywords, name_grams, normalise_name
from ..text.entities import Normalised, cased_words, holds_name, is_noise_name, longest_names
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


def _two_names(span: str, tagged: Sequence[TaggedEntity], known: dict[str, Entity]) -> bool:
    """A tagged span that holds two names, known or tagged beside it ("Globex in Lisbon"):
    the two are the entities, the span is none."""
    norm = normalise_name(span)
    inside = name_grams(span) & known.keys()
    inside |= {normalise_name(t.name) for t in tagged if t.name != span and holds_name(norm, normalise_name(t.name))}
    return len(longest_names(n for n in inside if n != norm)) >= 2