"""``explain``: why a node is active, archived, superseded, merged or due to expire, from the
same rules the maintenance run applies."""

from __future__ import annotations

from datetime import datetime

from ..models import EdgeType, Entity, Explanation, MemoryRecord, Message, Node, Procedure, ProcedureStep, Status
from ..models.entity_types import TYPE_EVIDENCE
from ..settings import LifecycleSettings
from ..store import Store
from ..text import name_grams
from .builders import shared_part
from .rules import expiry_date, last_used, purge_date


def _day(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d}" if value else "never"


def explain(store: Store, node: Node, now: datetime, policy: LifecycleSettings) -> Explanation:
    ns = node.namespace
    if isinstance(node, MemoryRecord):
        return _memory(store, node, now, policy)
    if isinstance(node, Message):
        covers = store.edges(ns, [node.id], types=[EdgeType.COVERS], direction="in")
        if node.status is Status.archived:
            rule = (f"archived by extraction: represented by episode {covers[0].source} and its memories; kept in the "
                    "log for provenance, ranked behind memories in recall") if covers else "archived"
        else:
            rule = "active: in the session log, searchable at once (not yet extracted)"
        return Explanation(id=node.id, kind=node.kind, status=node.status.value, rule=rule, edges=covers,
                           dates={"created_at": node.created_at})
    if isinstance(node, Procedure):
        return _procedure(store, node)
    if isinstance(node, Entity):
        votes = ", ".join(f"{source}: {node.type_votes[source]}" for source in TYPE_EVIDENCE if source in node.type_votes)
        why = f"by the strongest evidence ({votes})" if votes else "as given" if node.typed else "no evidence yet"
        return Explanation(id=node.id, kind=node.kind, status=node.feedback or "active", rule=f"a {node.type}: {why}",
                           details=[f"also named {', '.join(node.aliases)}"] if node.aliases else [],
                           dates={"created_at": node.created_at, "updated_at": node.updated_at})
    status = getattr(node, "status", None)
    return Explanation(id=node.id, kind=node.kind, status=status.value if status else "n/a",
                       rule=f"a {node.kind}: the lifecycle rules apply to memories", dates={"created_at": node.created_at})


def _procedure(store: Store, p: Procedure) -> Explanation:
    """A procedure's version (what superseded it), how often it was taught, followed, succeeded
    and failed, which step fails most, and the episodes and traces that taught it."""
    ns = p.namespace
    by = store.edges(ns, [p.id], types=[EdgeType.SUPERSEDES, EdgeType.PRODUCED], direction="in")
    newer = [e for e in by if e.type is EdgeType.SUPERSEDES]
    rule = (f"superseded by {newer[0].source} on {newer[0].props.get('at', '')[:10]}: {newer[0].props.get('reason', '')}"
            if newer else p.status_reason or f"{p.status.value}: a workflow, recalled by its task or any of its steps")
    details = [f"taught or followed {p.seen_count} time(s); {p.success_count} success(es), {p.failure_count} failure(s)"]
    steps = [s for s in store.get(ns, [s.id for s in p.steps]) if isinstance(s, ProcedureStep)]
    details += [f"step {s.order} failed {s.failure_count} time(s): {s.text}"
                for s in sorted(steps, key=lambda s: (-s.failure_count, s.order)) if s.failure_count]
    if p.learned_from:
        details.append(f"learned from {len(p.learned_from)} successful run(s): {', '.join(p.learned_from)}")
    taught = [e.source for e in by if e.type is EdgeType.PRODUCED]
    if taught:
        details.append(f"taught by {', '.join(taught)}")
    return Explanation(id=p.id, kind=p.kind, status=p.status.value, rule=rule, details=details, edges=by,
                       dates={"created_at": p.created_at, "updated_at": p.updated_at})


def _memory(store: Store, m: MemoryRecord, now: datetime, policy: LifecycleSettings) -> Explanation:
    ns = m.namespace
    out_edges = store.edges(ns, [m.id], types=[EdgeType.SUPERSEDES, EdgeType.MERGED_INTO])
    in_edges = store.edges(ns, [m.id], types=[EdgeType.SUPERSEDES, EdgeType.MERGED_INTO], direction="in")
    dates: dict[str, datetime | None] = {
        "created_at": m.created_at, "valid_at": m.valid_at, "invalid_at": m.invalid_at, "expired_at": m.expired_at,
        "archived_at": m.archived_at, "last_used": last_used(m),
    }
    details = [f"importance {m.importance:g}, confidence {m.confidence:g} ({m.source.value}), used {m.access_count} "
               f"time(s), last used {_day(last_used(m))}"]
    if m.status is Status.superseded:
        by = [e for e in in_edges if e.type is EdgeType.SUPERSEDES]
        rule = (f"superseded by {by[0].source} on {by[0].props.get('at', '')[:10]}: {by[0].props.get('reason', '')}"
                if by else m.status_reason or "superseded")
        details.append(f"held from {_day(m.valid_at)} until {_day(m.invalid_at)}; out of recall, kept in history "
                       "(recall with include_superseded, or as_of a time it held)")
    elif m.status is Status.merged:
        into = [e for e in out_edges if e.type is EdgeType.MERGED_INTO]
        rule = (f"merged into {into[0].target} on {into[0].props.get('at', '')[:10]}: {into[0].props.get('reason', '')}"
                if into else m.status_reason or "merged")
        details.append("a near-duplicate: the memory it was merged into carries its provenance and access counts")
    elif m.status is Status.archived:
        rule = m.status_reason or "archived"
        due = purge_date(m, policy)
        dates["purge_at"] = due
        details.append("pinned: never purged" if m.pinned else
                       f"purged (deleted for good) on or after {_day(due)}: {policy.purge_after_days:g} days after "
                       "archiving" if due else "archived by hand: purged 30 days after a maintenance run archives it")
    else:
        due = expiry_date(m, policy)
        dates["expires_at"] = due
        if m.pinned:
            rule = "active and pinned: never expires, never capped, never purged"
        elif due is None:
            rule = (f"active: importance {m.importance:g} >= {policy.expire_importance_below:g}, not an expiry "
                    "candidate (a cap may still archive it)")
        elif due <= now:
            rule = (f"active, due to expire: importance {m.importance:g} < {policy.expire_importance_below:g} and "
                    f"unused since {_day(last_used(m))}; the next maintenance run archives it")
        else:
            rule = (f"active; expires on {_day(due)} if unused: importance {m.importance:g} < "
                    f"{policy.expire_importance_below:g}, {policy.expire_unused_days:g} days after its last use")
        details += [f"absorbed duplicate {e.source}: {e.props.get('reason', '')}" for e in in_edges
                    if e.type is EdgeType.MERGED_INTO]
        details += [f"supersedes {e.target}: {e.props.get('reason', '')}" for e in out_edges
                    if e.type is EdgeType.SUPERSEDES]
    details += [f"mentions {e.target}: {e.props['resolved']}" for e in store.edges(ns, [m.id], types=[EdgeType.MENTIONS])
                if e.props.get("resolved")]  # a name several entities share, resolved without a type
    details += [f"names {norm!r}, a first name {len(found)} people share ({', '.join(f'{e.name} {e.id}' for e in found)}): "
                "linked to none of them; name the one meant (update with entities=[...])"
                for norm, found in store.entities_named(ns, name_grams(m.text)).items() if shared_part(norm, found)]
    return Explanation(id=m.id, kind=m.kind, status=m.status.value, rule=rule, details=details, dates=dates,
                       edges=[*out_edges, *in_edges])
