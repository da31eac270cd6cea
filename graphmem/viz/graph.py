"""A namespace as a drawable graph: entities, memories (every status), episodes, procedures as
chains of steps, and sessions with their turns on request, with the edges between them; through
``Memory``'s public reads only, so both backends give the same picture. A namespace larger
than ``limit`` is sampled around the chosen entity (else around its most mentioned ones), and
the result says so."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from typing import Any

from ..engine.listing import list_all
from ..models import EdgeType, MemoryRecord, Node, Procedure
from ..retrieve.scoring import frequency, recency

KINDS = ("entity", "memory", "episode", "procedure")  # sessions and their turns when turns are asked for


def _label(n: Node) -> str:
    text = {"memory": getattr(n, "text", ""), "entity": getattr(n, "name", ""), "episode": getattr(n, "summary", ""),
            "procedure": getattr(n, "task", ""), "session": getattr(n, "title", "") or n.id,
            "message": f"{getattr(n, 'speaker', '') or getattr(n, 'role', '')}: {getattr(n, 'content', '')}"}.get(n.kind, n.id)
    return text if len(text) <= 80 else text[:77] + "..."


def _node(n: Node, now: datetime, options: Any) -> dict[str, Any]:
    fields = n.model_dump(mode="json", exclude={"keywords", "entities", "metadata", "namespace"})
    out: dict[str, Any] = {"id": n.id, "kind": n.kind, "label": _label(n), "status": str(fields.get("status") or ""),
                           "time": (getattr(n, "valid_at", None) or n.created_at).isoformat(), "fields": fields}
    if isinstance(n, MemoryRecord):  # the factors a recall would weigh, relevance aside
        out["factors"] = {"importance": round(n.importance, 3), "confidence": round(n.confidence, 3),
                          "recency": round(recency(n, now, options.recency_half_life_days), 3),
                          "frequency": round(frequency(n.access_count, options.frequency_saturation), 3)}
    return out


def _edge(e: Any) -> dict[str, Any]:
    """An edge to draw; a relation carries when it held (``since``) and when it ended (``ended``:
    a later fact replaced it), so the view draws it as ended."""
    props = e.props or {}
    return {"source": e.source, "target": e.target, "type": e.type.value if hasattr(e.type, "value") else str(e.type),
            "label": props.get("predicate") or props.get("role") or "", "since": props.get("valid_at"),
            "ended": props.get("invalid_at")}


def graph_data(mem: Any, namespace: str = "default", *, entity: str | None = None, limit: int = 400,
               messages: bool = False) -> dict[str, Any]:
    """``{"namespace", "nodes", "edges", "total", "note"}`` for the viewer."""
    now = datetime.now(timezone.utc)
    pool = {k: list_all(mem, k, namespace=namespace, cap=50_000) for k in KINDS}
    if not any(pool.values()):
        return {"namespace": namespace, "nodes": [], "edges": [], "total": 0, "note": "nothing written here yet"}
    if messages:
        pool["session"] = list_all(mem, "session", namespace=namespace, cap=50_000)
        pool["message"] = list_all(mem, "message", namespace=namespace, cap=50_000)
    every = {n.id: n for nodes in pool.values() for n in nodes}
    edges = [e for e in mem.store.edges(namespace, list(every)) if e.target in every]
    chosen, note = _sample(mem, namespace, every, edges, entity, limit)
    kept = [e for e in edges if e.source in chosen and e.target in chosen]
    out_nodes = [_node(every[i], now, mem.settings.recall) for i in chosen]
    out_edges = [_edge(e) for e in kept]
    for n in (every[i] for i in chosen):
        if isinstance(n, Procedure):  # a procedure drawn as its chain of steps
            previous = n.id
            for i, step in enumerate(n.steps, 1):
                sid = f"{n.id}#step{i}"
                out_nodes.append({"id": sid, "kind": "step", "label": f"{i}. {step.text}", "status": "",
                                  "time": n.created_at.isoformat(), "fields": step.model_dump(mode="json")})
                out_edges.append({"source": previous, "target": sid, "type": "FIRST_STEP" if i == 1 else "NEXT",
                                  "label": "", "since": None, "ended": None})
                previous = sid
    return {"namespace": namespace, "nodes": out_nodes, "edges": out_edges, "total": len(every), "note": note}


def _sample(mem: Any, namespace: str, every: dict[str, Node], edges: list[Any], entity: str | None,
            limit: int) -> tuple[list[str], str | None]:
    if entity is None and len(every) <= limit:
        return list(every), None
    links: dict[str, set[str]] = {}
    for e in edges:
        links.setdefault(e.source, set()).add(e.target)
        links.setdefault(e.target, set()).add(e.source)
    if entity is not None:
        seeds = [mem.get_entity(entity, namespace=namespace).id]
        around = f"around {entity}"
    else:
        mentioned = Counter(e.target for e in edges if e.type == EdgeType.MENTIONS)
        seeds = [i for i, _ in mentioned.most_common(5)] or list(every)[:1]
        around = "around the most mentioned entities"
    chosen: dict[str, None] = dict.fromkeys(seeds)
    frontier = list(seeds)
    while frontier and len(chosen) < limit:  # breadth first from the seeds
        nxt = []
        for i in frontier:
            for j in sorted(links.get(i, ())):
                if j not in chosen and len(chosen) < limit:
                    chosen[j] = None
                    nxt.append(j)
        frontier = nxt
    shown = list(chosen)
    note = None if len(shown) == len(every) else f"showing {len(shown)} of {len(every)} records, sampled {around}"
    return shown, note
