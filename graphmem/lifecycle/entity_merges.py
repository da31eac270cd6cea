"""Entities that are one real thing written two ways: found (``merge_candidates``), and folded
one into the other (``fold_entity``), by ``Memory.merge_entities``, by ``maintain`` for the
sure ones, and listed by ``Memory.suggest_merges`` with the reason for each.

Sure (``maintain`` merges them):
- **a short form**: a one-word person ("Daniel", "Okafor") whose name is a part of exactly one
  person's full name ("Daniel Marquez"), and of no other entity's;
- **one name, two records**: two entities that share a name or an alias and have one type (or
  one has none), unless the shared word is a name part two people share; with two types of
  which one is only NER's guess, it is a suggestion;
- **a nickname others address a speaker by**: a one-word name only NER typed that exactly one
  speaker may be called (``addressed_by``: "Mel" of Melanie, "Deb" of Deborah, "志强" of
  曹志强), that never spoke and is written only by others, in sessions that speaker speaks in,
  to speak to her ("Thanks, Deb"; what linking does as turns are written).

Only suggested (a person decides):
- a one-word entity NER typed as something else whose name is a part of one person's name
  ("Agnieszka", typed a place, beside Agnieszka Nowak);
- **a nickname** otherwise: a one-word person exactly one other person may be called so
  ("Jon", "Jonathan") who turns up in the same sessions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from ..errors import NotFoundError
from ..models import Edge, EdgeType, Entity, Message, embed_text
from ..models.results import MergeSuggestion
from ..store import no_vectors
from ..text import normalise_name
from ..text.entities import addressed_by, addressed_in, name_parts, self_named
from .builders import shared_part
from .parts import Parts, check


def _names(e: Entity) -> set[str]:
    return {normalise_name(n) for n in (e.name, *e.aliases)} - {""}


def _said(e: Entity) -> dict:
    """What an entity says, without when it last changed."""
    return e.model_dump(exclude={"updated_at"})


def _stated(e: Entity) -> bool:
    return e.typed or any(source != "ner" for source in e.type_votes)


def merge_candidates(store, namespace: str) -> list[MergeSuggestion]:
    """Pairs of the namespace's live entities that look like one (see the module's text), the
    one to keep first: the longer name, else the more often typed by a person, else the older."""
    live = [e for e in store.query(namespace, "entity", limit=1_000_000)
            if isinstance(e, Entity) and not e.merged_into and e.feedback != "rejected"]
    out: dict[tuple[str, str], MergeSuggestion] = {}

    def add(keep: Entity, gone: Entity, reason: str, sure: bool) -> None:
        pair = (keep.id, gone.id)
        if pair not in out and (gone.id, keep.id) not in out:
            out[pair] = MergeSuggestion(keep_id=keep.id, keep_name=keep.name, merge_id=gone.id, merge_name=gone.name,
                                        reason=reason, sure=sure)

    people = [e for e in live if e.type == "person" and len(name_parts(e.name)) > 1]
    by_part: dict[str, list[Entity]] = defaultdict(list)
    for p in people:
        for part in name_parts(p.name):
            by_part[normalise_name(part)].append(p)
    holders: dict[str, list[Entity]] = defaultdict(list)
    for e in live:
        for n in _names(e):
            holders[n].append(e)
    for e in live:
        key = normalise_name(e.name)
        if len(e.name.split()) != 1 or e.type == "person" and len(name_parts(e.name)) > 1:
            continue
        owners = [p for p in by_part.get(key, ()) if p.id != e.id]
        if len(owners) == 1:
            others = [h for h in holders[key] if h.id not in (e.id, owners[0].id)]
            if e.type == "person" and not others:
                add(owners[0], e, f"{e.name!r} is a part of {owners[0].name!r}, the only person named so", True)
            elif not _stated(e) and not others:
                add(owners[0], e, f"{e.name!r} ({e.type}, typed by NER alone) is a part of the person "
                                  f"{owners[0].name!r}", False)
    for name, found in holders.items():
        if len(found) < 2:
            continue
        for i, a in enumerate(found):
            for b in found[i + 1:]:
                if _stated(a) and _stated(b) and a.type != b.type:
                    continue  # a person and a country called Jordan, as someone said
                if shared_part(name, [a, b]):
                    continue  # a first name or a surname two people share: Sofia and Daniel Marquez
                keep, gone = sorted((a, b), key=lambda x: (-len(x.name), -_stated(x), x.created_at))
                sure = a.type == b.type or (gone.type == "thing" and not gone.type_votes)
                add(keep, gone, f"both are named {name!r}" + ("" if sure else f" ({keep.type} and {gone.type})"), sure)
    _nicknames(store, namespace, live, add)
    return list(out.values())


def _nicknames(store, namespace: str, live: Sequence[Entity], add) -> None:
    """A one-word person exactly one other person may be addressed as (``addressed_by``) who is
    said or named in a session that person is in ("Mel", "Melanie"). Sure where it is what
    linking does as turns are written (``log_graph._addressed``) and the turns tell no other
    story: the other is a speaker, the short form never spoke and only NER typed it (a person,
    or the org or thing the small model makes of a short first name, "Deb"), every turn naming
    it is in a session the other speaks in and another speaker's (or hers, giving it as her
    own: "call me 志强"), and one speaks to her by it ("Thanks, Deb": ``addressed_in``); a
    store written before that rule (or turn by turn, the short form first) is made one person
    by ``maintain``."""
    people = [e for e in live if e.type == "person"]
    for short in live:
        key = normalise_name(short.name)
        if len(short.name.split()) != 1 or short.type != "person" and (_stated(short) or short.type not in ("org", "thing")):
            continue
        longer = [p for p in people if p.id != short.id and addressed_by(key, normalise_name(p.name))]
        if len(longer) > 1:  # "Melanie" who speaks, and "Mell", a slip of one turn: the speaker
            longer = [p for p in longer if "speaker" in p.type_votes]
        if len(longer) != 1:
            continue
        spoke, named = _turns(store, namespace, short.id, "said"), _turns(store, namespace, short.id, "named")
        heard = {m.session_id for m in _turns(store, namespace, longer[0].id, "said")}
        if not (heard | {m.session_id for m in _turns(store, namespace, longer[0].id, "named")}) \
                & {m.session_id for m in [*spoke, *named]}:
            continue
        own = _names(longer[0])
        hers = [m for m in named if normalise_name(m.speaker or "") in own]
        others = [m for m in named if normalise_name(m.speaker or "") not in own]
        sure = "speaker" in longer[0].type_votes and not spoke and all(m.session_id in heard for m in named) \
            and all(self_named(m.said, short.name) or longer[0].name in m.said for m in hers) \
            and any(addressed_in(m.said, short.name) for m in others)  # "我叫曹志强": 志强 inside her own name
        if short.type != "person" and not sure:
            continue
        add(longer[0], short, f"{short.name!r} may be a short form of {longer[0].name!r}: it starts that name and "
                              "both are in the same conversations" + (
                                  f"; {longer[0].name} speaks there and only others write {short.name!r}" if sure else ""),
            sure)


def _turns(store, namespace: str, entity_id: str, how: str) -> list[Message]:
    """The turns (at most 500) an entity said, or that name it."""
    said = how == "said"
    edges = store.edges(namespace, [entity_id], types=[EdgeType.SAID if said else EdgeType.MENTIONS],
                        direction="out" if said else "in")
    ids = [e.target if said else e.source for e in edges][:500]
    return [n for n in store.get(namespace, ids) if isinstance(n, Message)]


def absorbed(keep: Entity, gone: Entity, now: datetime, name: str | None = None) -> Entity:
    """``keep`` once it holds ``gone``: called ``name`` (default its own), the other names as
    aliases; ``gone``'s type, votes and description fill what ``keep`` lacks."""
    name = name or keep.name
    aliases = [a for a in dict.fromkeys([keep.name, *keep.aliases, gone.name, *gone.aliases])
               if normalise_name(a) != normalise_name(name)]
    return check(Entity, {**keep.model_dump(), "name": name, "aliases": aliases, "updated_at": now,
                          "type": gone.type if keep.type == "thing" else keep.type,
                          "type_votes": {**gone.type_votes, **keep.type_votes},
                          "description": keep.description or gone.description}, "entity")


def imported_identities(store, namespace: str, imported: Sequence[Entity], now: datetime
                        ) -> tuple[dict[str, str], list[Entity]]:
    """The resolver's rules for an import: an imported entity that is an entity the namespace
    already holds (or one an earlier line of the import brought) is folded into it instead of
    becoming a second node. Two entities are one when one's name is the other's name or alias
    ("Greta", "Greta Lind" with the alias Greta) and their types agree or one is only NER's
    guess; a name several entities hold stays apart (``suggest_merges`` lists it). Returns
    imported id -> the id it became, and the entities that took another's names (as aliases;
    called by the longer name when one is a part of the other), stored or imported."""
    live = [e for e in imported if not e.merged_into]
    stored = store.entities_named(namespace, {normalise_name(n) for e in live for n in (e.name, *e.aliases)})
    current: dict[str, Entity] = {c.id: c for found in stored.values() for c in found if not c.merged_into}
    holders: dict[str, set[str]] = defaultdict(set)
    for c in current.values():
        for n in _names(c):
            holders[n].add(c.id)
    into: dict[str, str] = {}
    changed: dict[str, Entity] = {}
    for e in live:
        key = normalise_name(e.name)
        same = [current[i] for i in holders[key] | {i for n in _names(e) for i in holders[n]}
                if key in _names(current[i]) or normalise_name(current[i].name) in _names(e)]
        same = [c for c in same if c.type == e.type or not (_stated(c) and _stated(e))]
        if len(same) == 1:
            keep = same[0]
            name = e.name if normalise_name(keep.name) in _names(e) and len(e.name) > len(keep.name) else None
            grown = absorbed(keep, e, now, name)
            if _said(grown) != _said(keep):
                current[keep.id] = changed[keep.id] = grown
            into[e.id] = keep.id
        else:
            current[e.id] = e
        for n in _names(current[into.get(e.id, e.id)]):
            holders[n].add(into.get(e.id, e.id))
    return into, list(changed.values())


def fold_entity(parts: Parts, namespace: str, keep_id: str, merge_id: str, now: datetime) -> Entity:
    """Fold ``merge_id`` into ``keep_id``: every edge of it (mentions, relations with their
    memory ids, SAID) moves to the kept entity, its name and aliases become aliases there (its
    type, votes and description fill what the kept one lacks), and it stays only as a record
    found by no name, with a MERGED_INTO edge. One store write; the caller holds the lock."""
    store = parts.store
    got = {e.id: e for e in store.get(namespace, [keep_id, merge_id]) if isinstance(e, Entity)}
    for i in (keep_id, merge_id):
        if i not in got or got[i].merged_into:
            raise NotFoundError(f"no entity {i!r} in namespace {namespace!r}")
    keep, gone = got[keep_id], got[merge_id]
    old = store.edges(namespace, [merge_id], direction="both")
    moved = [e.model_copy(update={"source": keep_id if e.source == merge_id else e.source,
                                  "target": keep_id if e.target == merge_id else e.target}) for e in old]
    kept = absorbed(keep, gone, now)
    folded = gone.model_copy(update={"merged_into": keep_id, "updated_at": now})
    link = Edge(namespace=namespace, source=merge_id, type=EdgeType.MERGED_INTO, target=keep_id,
                props={"at": now.isoformat()})
    vecs = np.vstack([parts.embedder.embed([embed_text(kept)]), no_vectors(1, parts.embedder.dim)])
    # the moved edges first, the old ones after: a failure between leaves a link twice, never none
    store.put(namespace, [kept, folded], vecs, [*(e for e in moved if e.source != e.target), link],
              expect={keep_id: keep.updated_at, merge_id: gone.updated_at})
    store.delete_edges(namespace, old)
    return kept
