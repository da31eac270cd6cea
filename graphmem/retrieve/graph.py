"""Reads that walk the graph: a memory's version history, an entity's neighbourhood."""

from __future__ import annotations

from ..errors import NotFoundError
from ..models import EdgeType, Entity, History, MemoryRecord, Neighbourhood, Procedure, Relation, Status
from ..store import Store


def find_entity(store: Store, namespace: str, name_or_id: str) -> Entity:
    """An entity by id (one merged into another: that one), else by normalised name or alias."""
    found = store.get(namespace, [name_or_id])
    for _ in range(64):  # a chain of merges, followed to its end
        if not (found and isinstance(found[0], Entity) and found[0].merged_into):
            break
        found = store.get(namespace, [found[0].merged_into])
    if found and isinstance(found[0], Entity):
        return found[0]
    hit = store.find_entities(namespace, [name_or_id])
    if not hit:
        raise NotFoundError(f"no entity named {name_or_id!r} in namespace {namespace!r}")
    return next(iter(hit.values()))


def history(store: Store, memory: MemoryRecord | Procedure) -> History:
    """``memory`` with every version it superseded and every version that superseded it."""
    namespace = memory.namespace
    reasons: dict[str, str] = {}

    def walk(start: str, direction: str) -> list[str]:
        seen, order, frontier = {start}, [], [start]
        while frontier:
            edges = store.edges(namespace, frontier, types=[EdgeType.SUPERSEDES], direction=direction)
            frontier = []
            for e in edges:
                other = e.target if direction == "out" else e.source
                reasons[e.source] = e.props.get("reason", "")
                if other not in seen:
                    seen.add(other)
                    order.append(other)
                    frontier.append(other)
        return order

    older = store.get(namespace, walk(memory.id, "out"))
    newer = store.get(namespace, walk(memory.id, "in"))
    return History(
        memory=memory,
        supersedes=sorted(older, key=lambda m: m.created_at),
        superseded_by=sorted(newer, key=lambda m: m.created_at),
        reasons=reasons,
    )


def neighbourhood(store: Store, entity: Entity, depth: int, limit: int) -> Neighbourhood:
    """The entities within ``depth`` relation hops of ``entity``, the relations among them and
    the active memories that mention it."""
    namespace = entity.namespace
    hops = store.neighbours(namespace, [entity.id], depth)
    entities = store.get(namespace, list(hops))
    rel_edges = store.edges(namespace, list(hops), types=[EdgeType.RELATES_TO], direction="out")
    relations = [Relation.from_edge(e) for e in rel_edges if e.target in hops]
    mem_ids = [e.source for e in store.edges(namespace, [entity.id], types=[EdgeType.MENTIONS], direction="in")]
    memories = store.query(namespace, "memory", statuses=[Status.active], ids=mem_ids, limit=limit)
    return Neighbourhood(entity=entity, entities=[e for e in entities if e.id != entity.id], relations=relations,
                         memories=memories, hops=hops)
