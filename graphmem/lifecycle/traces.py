"""What a record leaves in the graph besides itself. A memory written again under its id says
only what it says now (the edges it wrote before and no longer writes go), and forgetting a
record takes with it what would repeat its words: a session's turns and episodes, the memories
and episodes derived from a forgotten turn, the marks quoting a forgotten memory, and the
entities nothing links to any more (a name, or a PIN, must not outlive the memory or turn that
stated it). What is left stays whole: the turn chain bridges the gap."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import NotFoundError, ValidationError
from ..models import Edge, EdgeType, Episode, MemoryRecord, Message, Node, Session, Status
from ..store import Store
from ..store.base import node_text
from ..text import keywords

_ALL = 1 << 40  # every record of a session
_CITES = {"memory": "source_message_ids", "episode": "message_ids"}  # the turns a record was derived from


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
    """Those of the entities with no edge left at all, unless a person added, edited or judged
    them (``curated``)."""
    ids = list(dict.fromkeys(entity_ids))
    linked = {x for e in store.edges(namespace, ids, direction="both") for x in (e.source, e.target)}
    loose = [i for i in ids if i not in linked]
    kept = {n.id for n in store.get(namespace, loose) if getattr(n, "curated", False)}
    return [i for i in loose if i not in kept]


@dataclass
class Forgetting:
    """What ``forget`` deletes, and what it rewrites first so that nothing left points at it."""

    ids: list[str]  # every record to delete: those asked for and what goes with them
    nodes: list[Node] = field(default_factory=list)  # records left, rewritten not to name a forgotten one
    edges: list[Edge] = field(default_factory=list)  # NEXT across forgotten turns or episodes
    expect: dict[str, datetime] = field(default_factory=dict)  # the sessions rewritten, as they were read


def forgetting(store: Store, namespace: str, found: Sequence[Node], derived: bool, now: datetime,
               reopen: bool = True) -> Forgetting:
    """The records ``found`` and what goes with them: a session's turns and episodes and, with
    ``derived``, what a forgotten turn's words live on in: a memory citing it (DERIVED_FROM) or an
    episode covering it (COVERS) goes when it was derived from forgotten turns only, or repeats
    a word that only the forgotten turns among its sources said; one that goes on citing turns
    left keeps only those. What is left is rewritten where it would point at a forgotten
    record: a ``superseded_by`` mark quoting a forgotten memory is removed, the NEXT chain
    bridges the gap, and a session whose chain tail is forgotten gets the last turn left."""
    step = next((n for n in found if n.kind == "step"), None)
    if step is not None:  # a version's steps never change: its procedure goes whole, or not at all
        raise ValidationError(f"{step.id} is a step of procedure {step.procedure_id}; forget the procedure")
    gone = {n.id: n.kind for n in found}
    turns = {n.id: n for n in found if isinstance(n, Message)}
    for session in [n.id for n in found if n.kind == "session"]:
        for kind in ("message", "episode", "trace"):
            for n in store.query(namespace, kind, session_id=session, limit=_ALL):
                gone[n.id] = kind
                turns.update({n.id: n} if isinstance(n, Message) else {})
    parts = [i for i, kind in gone.items() if kind in ("procedure", "trace")]  # a chain goes with its head
    for e in store.edges(namespace, parts, types=[EdgeType.HAS_STEP]):
        gone[e.target] = "part"
    for e in store.edges(namespace, [i for i, kind in gone.items() if kind == "part"], types=[EdgeType.CALLED]):
        gone[e.target] = "part"
    rewrites: dict[str, Node] = {}
    for record, left in _derived(store, namespace, turns, gone) if derived else ():
        if left:
            rewrites[record.id] = record.model_copy(update={_CITES[record.kind]: left, "updated_at": now})
        else:
            gone[record.id] = record.kind
    memories = {i for i, kind in gone.items() if kind == "memory"}
    for e in store.edges(namespace, sorted(memories), types=[EdgeType.MERGED_INTO], direction="in"):
        gone[e.source] = "memory"  # a duplicate folded into a forgotten memory says the same: it goes too
    memories = {i for i, kind in gone.items() if kind == "memory"}
    plan = Forgetting(list(gone))
    plan.edges += _versions_left(store, namespace, memories, gone, rewrites, reopen, now)
    for n in _marked_by(store, namespace, memories):
        if n.id not in gone:
            rewrites[n.id] = rewrites.get(n.id, n).model_copy(update={"superseded_by": None, "updated_at": now})
    _unname(store, namespace, gone, rewrites, now)

    chained = [i for i, kind in gone.items() if kind in ("message", "episode")]
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    for e in store.edges(namespace, chained, types=[EdgeType.NEXT], direction="both"):
        before[e.target], after[e.source] = e.source, e.target

    def kept_side(start: str | None, step: dict[str, str]) -> str | None:  # the first record on that side kept
        while start is not None and start in gone:
            start = step.get(start)
        return start

    bridges = {(p, n) for i in chained if (p := kept_side(before.get(i), before)) and (n := kept_side(after.get(i), after))}
    plan.edges += [Edge(namespace=namespace, source=p, type=EdgeType.NEXT, target=n) for p, n in sorted(bridges)]
    lost = Counter(n.session_id for n in turns.values())
    for session in store.get(namespace, sorted(set(lost) - set(gone))):
        if isinstance(session, Session):  # its count stays true, and its chain tail is a turn left
            rewrites[session.id] = session.model_copy(update={
                "last_message_id": kept_side(session.last_message_id, before),
                "message_count": max(0, session.message_count - lost[session.id]), "updated_at": now})
            plan.expect[session.id] = session.updated_at
    plan.nodes = list(rewrites.values())
    return plan


def _versions_left(store: Store, namespace: str, memories: set[str], gone: dict[str, str], rewrites: dict[str, Node],
                   reopen: bool, now: datetime) -> list[Edge]:
    """A fact's history stays whole when a version of it is forgotten. A version between two
    others: the newer one supersedes the older directly. The current version: the one it
    superseded is current again (valid again, its relations open, its reason says why), or with
    ``reopen=False`` stays superseded, by a version since forgotten."""
    links = store.edges(namespace, sorted(memories), types=[EdgeType.SUPERSEDES], direction="both")
    superseded_by = {e.target: e.source for e in links if e.target in memories}
    older = [e for e in links if e.source in memories and e.target not in gone]
    kept = {n.id: n for n in store.get(namespace, sorted({e.target for e in older}))}
    edges: list[Edge] = []
    for link in older:
        old = rewrites.get(link.target, kept.get(link.target))
        if not isinstance(old, MemoryRecord) or old.status is not Status.superseded:
            continue
        successor = link.source
        while successor in gone and successor in superseded_by:  # the nearest newer version left
            successor = superseded_by[successor]
        if successor not in gone:
            edges.append(link.model_copy(update={"source": successor, "props": {
                **link.props, "reason": f"{link.props.get('reason', '')} (through {link.source}, since forgotten)"}}))
            why = {"status_reason": f"superseded by {successor}"}
        elif reopen:
            why = {"status": Status.active, "invalid_at": None, "expired_at": None,
                   "status_reason": f"current again: {link.source}, the version that superseded it, was forgotten"}
            edges += [r.model_copy(update={"props": {**r.props, "invalid_at": None}})
                      for r in relations_carrying(store, namespace, [old.id])]
        else:
            why = {"status_reason": "superseded by a version since forgotten"}
        rewrites[old.id] = old.model_copy(update={**why, "updated_at": now})
    return edges


def _derived(store: Store, namespace: str, turns: dict[str, Message], gone: dict[str, str]
             ) -> list[tuple[Node, list[str]]]:
    """The memories and episodes derived from the forgotten ``turns``, each with the turns it may
    go on citing: none when it was derived from forgotten turns only or repeats a word that only
    they said among its sources."""
    edges = store.edges(namespace, list(turns), types=[EdgeType.DERIVED_FROM, EdgeType.COVERS], direction="in")
    records = [r for r in store.get(namespace, list(dict.fromkeys(e.source for e in edges))) if r.id not in gone]
    cites = {r.id: list(getattr(r, _CITES[r.kind])) for r in records}
    kept = {n.id: n.content for n in store.get(namespace, list({i for c in cites.values() for i in c if i not in gone}))
            if isinstance(n, Message)}
    out = []
    for r in records:
        left = [i for i in cites[r.id] if i not in gone]
        only_gone = set(keywords(" ".join(turns[i].content for i in cites[r.id] if i in turns)))
        only_gone -= set(keywords(" ".join(kept.get(i, "") for i in left)))
        out.append((r, [] if only_gone & set(keywords(node_text(r))) else left))
    return out


def _unname(store: Store, namespace: str, gone: dict[str, str], rewrites: dict[str, Node], now: datetime) -> None:
    """Records left that name a forgotten one in a field, rewritten without it: a memory's
    ``episode_id`` (the episode that produced it), an episode's ``memory_ids``."""
    episodes = [i for i, kind in gone.items() if kind == "episode"]
    memories = [i for i, kind in gone.items() if kind == "memory"]
    produced = store.edges(namespace, episodes, types=[EdgeType.PRODUCED]) + \
        store.edges(namespace, memories, types=[EdgeType.PRODUCED], direction="in")
    naming = {x for e in produced for x in (e.source, e.target) if x not in gone}
    for n in store.get(namespace, sorted(naming)):
        n = rewrites.get(n.id, n)
        if isinstance(n, MemoryRecord) and n.episode_id in gone:
            rewrites[n.id] = n.model_copy(update={"episode_id": None, "updated_at": now})
        elif isinstance(n, Episode) and set(n.memory_ids) & set(memories):
            rewrites[n.id] = n.model_copy(update={"memory_ids": [i for i in n.memory_ids if i not in gone],
                                                  "updated_at": now})


def _marked_by(store: Store, namespace: str, memory_ids: set[str]) -> list[Node]:
    """The turns and episodes whose ``superseded_by`` names one of these memories, found where
    ``Builders.mark_derived`` puts the marks: around the versions the memories superseded."""
    olds = store.get(namespace, [e.target for e in store.edges(namespace, list(memory_ids), types=[EdgeType.SUPERSEDES])])
    cited = list(dict.fromkeys(i for m in olds for i in [*getattr(m, "source_message_ids", []), getattr(m, "episode_id", None)] if i))
    nodes = store.get(namespace, cited)
    window = [i for n in nodes if isinstance(n, Episode) for i in n.message_ids if i not in cited]
    nodes += store.get(namespace, list(dict.fromkeys(window)))
    return [n for n in nodes if getattr(n, "superseded_by", None) is not None and n.superseded_by.memory_id in memory_ids]


def forget_records(store: Store, namespace: str, ids: Sequence[str], derived: bool, now: datetime,
                   reopen: bool = True) -> int:
    """Delete ``ids`` and what goes with them (``forgetting``); what is left is rewritten first,
    so a failure between the two writes leaves nothing pointing at a missing record."""
    found = store.get(namespace, ids)
    if not found:
        raise NotFoundError(f"none of {list(ids)[:3]} exists in namespace {namespace!r}")
    plan = forgetting(store, namespace, found, derived, now, reopen)
    if plan.nodes or plan.edges:
        store.put(namespace, plan.nodes, None, plan.edges, expect=plan.expect or None)
    named, deleted = named_by(store, namespace, plan.ids), store.delete(namespace, plan.ids)
    store.delete(namespace, unlinked(store, namespace, named))  # names only they stated
    return deleted
