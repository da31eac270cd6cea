"""What a record leaves in the graph besides itself. A memory written again under its id says
only what it says now (the edges it wrote before and no longer writes go), and forgetting a
record takes the entities nothing links to any more with it: a name, or a PIN, must not
outlive the memory or turn that stated it."""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Edge, EdgeType
from ..store import Store


def relations_carrying(store: Store, namespace: str, memory_ids: Sequence[str]) -> list[Edge]:
    """The relation edges between entities that state one of these memories."""
    ids = set(memory_ids)
    named = [e.target for e in store.edges(namespace, list(ids), types=[EdgeType.MENTIONS])]
    return [e for e in store.edges(namespace, named, types=[EdgeType.RELATES_TO]) if e.props.get("memory_id") in ids]


def written_by(store: Store, namespace: str, memory_ids: Sequence[str]) -> list[Edge]:
    """Every edge these memories wrote: their mentions, their provenance, their relations."""
    own = store.edges(namespace, memory_ids, types=[EdgeType.MENTIONS, EdgeType.DERIVED_FROM])
    return own + relations_carrying(store, namespace, memory_ids)


def drop_unwritten(store: Store, namespace: str, before: Sequence[Edge], written: Sequence[Edge]) -> None:
    """After memories were written again: the edges they wrote ``before`` and not now, and the
    entities left linked to nothing."""
    now = {(e.source, e.type, e.target, e.key) for e in written}
    gone = [e for e in before if (e.source, e.type, e.target, e.key) not in now]
    if gone:
        store.delete_edges(namespace, gone)
        store.delete(namespace, unlinked(store, namespace, [e.target for e in gone if e.type is EdgeType.MENTIONS]))


def named_by(store: Store, namespace: str, ids: Sequence[str]) -> list[str]:
    """The entities these records mention or (turns) were said by."""
    return [e.target for e in store.edges(namespace, ids, types=[EdgeType.MENTIONS])] + \
        [e.source for e in store.edges(namespace, ids, types=[EdgeType.SAID], direction="in")]


def unlinked(store: Store, namespace: str, entity_ids: Sequence[str]) -> list[str]:
    """Those of the entities with no edge left at all."""
    ids = list(dict.fromkeys(entity_ids))
    linked = {x for e in store.edges(namespace, ids, direction="both") for x in (e.source, e.target)}
    return [i for i in ids if i not in linked]
