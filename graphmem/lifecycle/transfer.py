"""Export and import: a namespace as JSONL (a header, then nodes, then edges), lossless with
vectors (base64 float32)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import IO, Any

import numpy as np
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from ..errors import ImportFormatError, ValidationError
from ..models import NODE_TYPES, Edge, Entity, Node, embed_text, utcnow
from ..models.jsonl import read_jsonl, refuse_bad_lines
from ..models.fields import NAMESPACE_PATTERN, Namespace
from ..store.base import VECTOR_KINDS, pages
from .chains import ChainBuilder, chain_namespace
from .entity_merges import imported_identities
from .parts import Parts
from .scoping import SCOPED_KINDS

EXPORT_FORMAT = "graphmem-export/1"
EXPORT_KINDS = ("session", "entity", "message", "episode", "memory", "procedure", "step", "trace", "trace_step", "tool",
                "tool_call", "maintenance")
_NS = TypeAdapter(Namespace)
_PUT_BATCH = 5000


def checked_namespace(namespace: str) -> str:
    try:
        return _NS.validate_python(namespace)
    except PydanticValidationError as exc:
        raise ValidationError(f"invalid namespace {namespace!r}: it must match {NAMESPACE_PATTERN}") from exc


def export(parts: Parts, fp: IO[str], namespace: str, *, vectors: bool = True, scope: dict[str, str] | None = None) -> int:
    """Write ``namespace`` as JSONL; returns lines written. With a ``scope``, only its records
    (``SCOPED_KINDS``, and the steps and tool calls of its runs) and the edges between them."""
    store, embedder = parts.store, parts.embedder
    lines = 0
    soul = store.get_meta(namespace, "soul")
    fp.write(json.dumps({"format": EXPORT_FORMAT, "namespace": namespace, "embedder": embedder.name,
                         "dim": embedder.dim, "soul": soul}, ensure_ascii=False) + "\n")
    ids: list[str] = []
    traces: set[str] = set()
    for kind in EXPORT_KINDS:
        if scope and kind not in (*SCOPED_KINDS, "trace_step", "tool_call"):
            continue
        for batch in pages(store, namespace, kind, scope=scope if kind in SCOPED_KINDS else None):
            if scope and kind in ("trace_step", "tool_call"):
                batch = [n for n in batch if getattr(n, "trace_id", None) in traces]
            traces.update(n.id for n in batch if n.kind == "trace")
            vecs = store.vectors(namespace, [n.id for n in batch]) if vectors else {}
            for node in batch:
                row: dict[str, Any] = {"node": node.model_dump(mode="json")}
                if node.id in vecs:
                    row["vector"] = base64.b64encode(vecs[node.id].astype("<f4").tobytes()).decode()
                fp.write(json.dumps(row, ensure_ascii=False) + "\n")
                ids.append(node.id)
                lines += 1
    kept = set(ids)
    for i in range(0, len(ids), 500):
        for edge in store.edges(namespace, ids[i : i + 500], direction="out"):
            if scope and edge.target not in kept:
                continue  # to the namespace's shared graph, which a scoped export leaves out
            fp.write(json.dumps({"edge": edge.model_dump(mode="json")}, ensure_ascii=False) + "\n")
            lines += 1
    return lines


def import_(parts: Parts, lines: Iterable[str], *, namespace: str | None = None, skip_invalid: bool = False
            ) -> dict[str, Any]:
    """Read a JSONL export; see ``Memory.import_``."""
    store, embedder = parts.store, parts.embedder
    state: dict[str, Any] = {"target": checked_namespace(namespace) if namespace else None, "header": {}, "line": 0}
    line_of: dict[str, int] = {}  # node id -> its line in the file

    def numbered(source: Iterable[str]) -> Iterable[str]:
        for state["line"], raw in enumerate(source, 1):
            yield raw

    def target(data: dict[str, Any]) -> str:
        state["target"] = state["target"] or checked_namespace(data.get("namespace", "default"))
        return state["target"]

    def parse(row: dict[str, Any]) -> tuple[str, Any]:
        if "format" in row:
            if row["format"] != EXPORT_FORMAT:
                raise ValueError(f"unknown format {row['format']!r}")
            state["header"] = row
            target(row)
            return "header", None
        if "node" in row:
            data = {**row["node"]}
            data["namespace"] = target(data)
            kind = data.get("kind")
            if kind not in NODE_TYPES:
                raise ValueError(f"unknown kind {kind!r}")
            node = NODE_TYPES[kind].model_validate(data)
            if node.id in line_of:  # the store would take the first and refuse (or rewrite with) the second
                raise ValueError(f"id {node.id!r} is on line {line_of[node.id]} too")
            line_of[node.id] = state["line"]
            vec = None
            if "vector" in row:
                vec = np.frombuffer(base64.b64decode(row["vector"], validate=True), dtype="<f4").astype(np.float32)
                if vec.shape[0] != embedder.dim or not np.all(np.isfinite(vec)) or not vec.any():
                    raise ValueError(f"vector must be {embedder.dim} finite float32 values, not all zero")
            return "node", (node, vec)
        if "edge" in row:
            data = {**row["edge"]}
            data["namespace"] = target(data)
            return "edge", Edge.model_validate(data)
        raise ValueError("expected a 'format', 'node' or 'edge' object")

    rows, errors = read_jsonl(numbered(lines), parse)
    if not skip_invalid:
        refuse_bad_lines(errors, "imported")
    nodes: list[Node] = [value[0] for what, value in rows if what == "node"]
    vectors: dict[str, np.ndarray] = {value[0].id: value[1] for what, value in rows if what == "node" and value[1] is not None}
    edges: list[Edge] = [value for what, value in rows if what == "edge"]
    ns = state["target"]
    if ns is None:
        raise ValidationError("the import holds no records")
    if state["header"] and state["header"].get("embedder") != embedder.name:
        vectors.clear()  # vectors of another model are re-computed below
    # what the store would refuse part way through the batches is refused before the first:
    # an import is all or nothing
    stored = {n.id: n for n in store.get(ns, [n.id for n in nodes])}
    clash = next((n for n in nodes if n.id in stored and stored[n.id].kind != n.kind), None)
    if clash is not None:
        raise ImportFormatError(line_of[clash.id], f"id {clash.id!r} is already a {stored[clash.id].kind} in namespace "
                                                   f"{ns!r}, not a {clash.kind}; nothing was imported")
    # a record is never rewritten in place (no history would say it changed): one already here
    # is left as it is when the line says the same, and refused when it says something else
    changed = next((n for n in nodes if n.id in stored and _content(n) != _content(stored[n.id])), None)
    if changed is not None:
        was = _content(stored[changed.id])
        fields = sorted(k for k, v in _content(changed).items() if was.get(k) != v)
        raise ImportFormatError(line_of[changed.id], f"{changed.kind} {changed.id!r} already exists in namespace {ns!r} "
                                f"with another {', '.join(fields)}; an import never rewrites a record (correct it "
                                "with update, which keeps its history); nothing was imported")
    nodes = [n for n in nodes if n.id not in stored]
    node_ids = {n.id for n in nodes}
    ends = list(({e.source for e in edges} | {e.target for e in edges}) - node_ids)
    existing = {n.id for n in store.get(ns, ends)} | node_ids
    if skip_invalid:
        edges = [e for e in edges if {e.source, e.target} <= existing]
    elif (loose := next((e for e in edges if not {e.source, e.target} <= existing), None)) is not None:
        raise ValidationError(f"edge {loose.source} -{loose.type.value}-> {loose.target}: an end is neither in the "
                              f"import nor in namespace {ns!r}; nothing was imported")
    need = [n for n in nodes if n.id not in vectors and n.kind in VECTOR_KINDS and n.kind != "entity"]
    if need:
        for n, v in zip(need, embedder.embed([embed_text(n) for n in need])):
            vectors[n.id] = v
    with parts.write_lock, store.atomic():  # all or nothing, at any size: one transaction
        # one entity per real thing: an imported entity the namespace already holds joins it
        into, joined = imported_identities(store, ns, [n for n in nodes if isinstance(n, Entity)], utcnow())
        if into:
            fresh = {e.id: e for e in joined}
            nodes = [fresh.pop(n.id, n) for n in nodes if n.id not in into] + list(fresh.values())
            moved = {(e.source, e.type, e.target, e.key): e for e in (
                e.model_copy(update={"source": into.get(e.source, e.source), "target": into.get(e.target, e.target)})
                for e in edges)}
            edges = [e for e in moved.values() if e.source != e.target]
            vectors.update(zip([e.id for e in joined], embedder.embed([embed_text(e) for e in joined])))
        for i in range(0, max(len(nodes), 1), _PUT_BATCH):
            chunk = nodes[i : i + _PUT_BATCH]
            mat = np.full((len(chunk), embedder.dim), np.nan, dtype=np.float32)
            for j, n in enumerate(chunk):
                if n.id in vectors:
                    mat[j] = vectors[n.id]
            last = i + _PUT_BATCH >= len(nodes)
            # its entities were joined to the namespace's above; a dump may hold namesakes of its own
            store.put(ns, chunk, mat if chunk else None, edges if last else (), claim_names=False)
        if state["header"].get("soul"):
            store.set_meta(ns, "soul", state["header"]["soul"])
        chain_namespace(parts, ChainBuilder(parts), ns, utcnow())  # an export written before procedures were chains
    return {"namespace": ns, "nodes": len(nodes), "unchanged": len(stored), "edges": len(edges), "joined": len(into),
            "errors": [{"line": e.line, "reason": e.reason} for e in errors]}


_BOOKKEEPING = frozenset({"namespace", "access_count", "last_accessed_at", "updated_at"})


def _content(node: Node) -> dict[str, Any]:
    """What a record says, without the counters that reads move."""
    return {k: v for k, v in node.model_dump(mode="json").items() if k not in _BOOKKEEPING}
