"""Procedures as chains of steps: (:Procedure)-[:FIRST_STEP]->(:Step)-[:NEXT]->(:Step)...,
(:Procedure)-[:HAS_STEP {order}]->(:Step), each step a node with its own vector, keywords and
MENTIONS edges. A version never changes: the same task taught again with the same steps
raises ``seen_count``; taught differently, it is a new procedure that SUPERSEDES the old one
(its steps retire with it). Stores written before procedures were chains migrate once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ..embed import Embedder
from ..models import Edge, EdgeType, Entity, EntityIn, Node, Procedure, ProcedureStep, Status, Step, embed_text, item_text
from ..store import Store
from ..store.base import pages
from ..text import keywords, normalise_name
from .builders import EntityResolver, TaggedIn
from .parts import Parts, check

_CODE = re.compile(r"`([^`\n]{1,60})`")  # `make test`, `kubectl`: the tools and commands a step names
_MIGRATED = "procedure_chains"  # the store's own meta key: set once every namespace's procedures are chains


@dataclass
class Change:
    """Nodes (one vector row or None each) and edges for one ``Store.put``."""

    nodes: list[Node] = field(default_factory=list)
    vectors: list[np.ndarray | None] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    expect: dict[str, datetime | None] = field(default_factory=dict)  # read-modify-write: ids -> updated_at read

    def add(self, node: Node, vector: np.ndarray | None = None) -> None:
        self.nodes.append(node)
        self.vectors.append(vector)

    def extend(self, other: "Change") -> None:
        self.nodes += other.nodes
        self.vectors += other.vectors
        self.edges += other.edges
        self.expect |= other.expect

    def rows(self, dim: int) -> np.ndarray:
        blank = np.full(dim, np.nan, dtype=np.float32)
        return np.vstack([blank if v is None else v for v in self.vectors]) if self.vectors else np.empty((0, dim))

    def write(self, store: Store, namespace: str, dim: int) -> None:
        store.put(namespace, self.nodes, self.rows(dim), self.edges, expect=self.expect or None)

    def add_entities(self, resolver: EntityResolver, embedder: Embedder) -> None:
        """The entities ``resolver`` made or changed, each with its vector."""
        made = resolver.new_entities()
        for node, vec in zip(made, embedder.embed([embed_text(e) for e in made]) if made else []):
            self.add(node, vec)


def aligned(a: np.ndarray, b: np.ndarray, at: float) -> list[tuple[int, int]]:
    """The most in-order pairs (i, j) of rows of ``a`` and ``b`` (unit vectors) with cosine >=
    ``at``: the longest common subsequence of two step lists, steps compared by meaning."""
    if not len(a) or not len(b):
        return []
    near = (a @ b.T) >= at
    n, m = near.shape
    best = np.zeros((n + 1, m + 1), dtype=np.int32)
    for i in range(n):
        for j in range(m):
            best[i + 1, j + 1] = best[i, j] + 1 if near[i, j] else max(best[i, j + 1], best[i + 1, j])
    pairs, i, j = [], n, m
    while i and j:
        if near[i - 1, j - 1] and best[i, j] == best[i - 1, j - 1] + 1:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif best[i - 1, j] >= best[i, j - 1]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def resemblance(a: np.ndarray, b: np.ndarray, at: float) -> float:
    """The share of two step lists that align in order: 2 x pairs / (len(a) + len(b))."""
    return 2 * len(aligned(a, b, at)) / (len(a) + len(b)) if len(a) + len(b) else 0.0


def task_similarity(embedder: Embedder, task: str, others: Sequence[str]) -> np.ndarray:
    """Cosines of ``task`` to each of ``others``, compared case-blind ("deploy the API service"
    and "deploy the api" are one task; the default embedder reads them 0.65 apart as written)."""
    vecs = embedder.embed([task.casefold(), *(o.casefold() for o in others)])
    return vecs[1:] @ vecs[0]


def mentions_of(parts: Parts, resolver: EntityResolver, texts: Sequence[str]) -> list[list[Entity]]:
    """The entities each text names: what the tagger finds and `code` spans (tools, commands)."""
    out = []
    for text, tags in zip(texts, parts.tagger.tag_many(list(texts))):
        named = [TaggedIn(name=t.name, type=t.type) for t in tags]
        named += [EntityIn(name=c.strip(), type="tool") for c in _CODE.findall(text) if c.strip()]
        out.append(list({e.id: e for e in (resolver.resolve(n) for n in named if normalise_name(n.name)) if e}.values()))
    return out


def mention_edges(namespace: str, source: str, entities: Sequence[Entity]) -> list[Edge]:
    return [Edge(namespace=namespace, source=source, type=EdgeType.MENTIONS, target=e.id, key="mention",
                 props={"role": "mention"}) for e in entities]


class ChainBuilder:
    """Nodes and edges of procedures and their steps; it reads the store, never writes it."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    @property
    def settings(self):
        return self.parts.settings.procedures

    def chain(self, namespace: str, proc: Procedure, vectors: np.ndarray, now: datetime,
              resolver: EntityResolver, vector: np.ndarray | None = None) -> tuple[Procedure, Change]:
        """``proc`` with its steps' ids (with ``vector``, its own), then its Step nodes, their
        edges and the entities they name (``vectors``: one per step)."""
        texts = [s.text for s in proc.steps]
        named = mentions_of(self.parts, resolver, texts)
        out = Change()
        steps = [ProcedureStep(namespace=namespace, procedure_id=proc.id, order=i, text=text, status=proc.status,
                               importance=proc.importance, confidence=proc.confidence, created_at=now, updated_at=now,
                               keywords=keywords(text), entities=[e.name for e in ents])
                 for i, (text, ents) in enumerate(zip(texts, named), 1)]
        for step, vec, ents in zip(steps, vectors, named):
            out.add(step, vec)
            out.edges.append(Edge(namespace=namespace, source=proc.id, type=EdgeType.HAS_STEP, target=step.id,
                                  key=str(step.order), props={"order": step.order}))
            out.edges += mention_edges(namespace, step.id, ents)
        out.edges.append(Edge(namespace=namespace, source=proc.id, type=EdgeType.FIRST_STEP, target=steps[0].id))
        out.edges += [Edge(namespace=namespace, source=a.id, type=EdgeType.NEXT, target=b.id)
                      for a, b in zip(steps, steps[1:])]
        out.add_entities(resolver, self.parts.embedder)
        linked = proc.model_copy(update={"steps": [Step(text=s.text, id=s.id) for s in steps]})
        out.nodes.insert(0, linked)
        out.vectors.insert(0, vector)
        return linked, out

    def procedure(self, namespace: str, task: str, steps: Sequence[str], now: datetime, *, importance: float = 0.6,
                  confidence: float = 0.7, learned_from: Sequence[str] = ()) -> tuple[Procedure, Change, str]:
        """A taught workflow against the stored ones: (the procedure that holds now, what to
        write, "new" | "reinforced" | "superseded"). The same task (cosine >= task_match) with
        the same steps (each aligned, in order) raises ``seen_count``; with other steps the new
        version SUPERSEDES the old one."""
        proc = check(Procedure, {
            "namespace": namespace, "task": task, "steps": [{"text": s} for s in steps], "importance": importance,
            "confidence": confidence, "created_at": now, "updated_at": now, "learned_from": list(learned_from),
        }, "procedure")
        texts = [s.text for s in proc.steps]
        vecs = self.parts.embedder.embed([proc.task, item_text(proc), *texts])
        task_vec, whole_vec, step_vecs = vecs[0], vecs[1], vecs[2:]
        old = self.same_task(namespace, proc.task, task_vec, whole_vec)
        out = Change()
        if old is not None and self._same_steps(namespace, old, step_vecs):
            kept = Procedure.model_validate({**old.model_dump(), "seen_count": old.seen_count + 1, "updated_at": now,
                                             "learned_from": list(dict.fromkeys([*old.learned_from, *learned_from]))})
            out.add(kept)
            out.expect[old.id] = old.updated_at
            return kept, out, "reinforced"
        proc.keywords = keywords(item_text(proc))
        proc, chain = self.chain(namespace, proc, step_vecs, now, EntityResolver(self.parts.store, namespace, now),
                                 whole_vec)
        out.extend(chain)
        if old is None:
            return proc, out, "new"
        out.extend(self.retire(namespace, old, proc.id, "the same task taught with other steps", now))
        return proc, out, "superseded"

    def same_task(self, namespace: str, task: str, task_vec: np.ndarray, whole_vec: np.ndarray) -> Procedure | None:
        """The active procedure for the same task, the closest one."""
        store = self.parts.store
        ids = {i for vec in (task_vec, whole_vec) for i, _ in store.vector_search(namespace, "procedure", vec, 5, [Status.active])}
        found = [p for p in store.get(namespace, sorted(ids)) if isinstance(p, Procedure) and p.status is Status.active]
        if not found:
            return None
        sims = task_similarity(self.parts.embedder, task, [p.task for p in found])
        best = int(np.argmax(sims))
        same = sims[best] >= self.settings.task_match or normalise_name(found[best].task) == normalise_name(task)
        return found[best] if same else None

    def step_vectors(self, namespace: str, proc: Procedure) -> np.ndarray:
        """A procedure's step vectors in order (embedded again where a step has none)."""
        stored = self.parts.store.vectors(namespace, [s.id for s in proc.steps if s.id])
        missing = [s.text for s in proc.steps if s.id not in stored]
        fresh = iter(self.parts.embedder.embed(missing)) if missing else iter(())
        return np.vstack([stored[s.id] if s.id in stored else next(fresh) for s in proc.steps])

    def _same_steps(self, namespace: str, old: Procedure, step_vecs: np.ndarray) -> bool:
        if len(old.steps) != len(step_vecs):
            return False
        return len(aligned(self.step_vectors(namespace, old), step_vecs, self.settings.step_match)) == len(step_vecs)

    def retire(self, namespace: str, old: Procedure, new_id: str, reason: str, now: datetime) -> Change:
        """``old`` and its steps superseded by ``new_id``, with the SUPERSEDES edge."""
        out = Change(expect={old.id: old.updated_at})
        out.add(Procedure.model_validate({**old.model_dump(), "status": Status.superseded, "updated_at": now,
                                          "status_reason": f"superseded by {new_id}: {reason}"}))
        for step in self.parts.store.get(namespace, [s.id for s in old.steps if s.id]):
            out.add(step.model_copy(update={"status": Status.superseded, "updated_at": now}))
        out.edges.append(Edge(namespace=namespace, source=new_id, type=EdgeType.SUPERSEDES, target=old.id,
                              props={"reason": reason, "at": now.isoformat()}))
        return out


def chain_namespace(parts: Parts, builder: ChainBuilder, namespace: str, now: datetime) -> int:
    """Step nodes and edges for the namespace's procedures stored with their steps only as a
    list (graphmem before chains, or an export it wrote). Returns the procedures linked."""
    done = 0
    for page in pages(parts.store, namespace, "procedure", 500):
        for proc in page:
            if isinstance(proc, Procedure) and not all(s.id for s in proc.steps):
                vecs = parts.embedder.embed([s.text for s in proc.steps])
                _, change = builder.chain(namespace, proc, vecs, now, EntityResolver(parts.store, namespace, now))
                change.write(parts.store, namespace, parts.embedder.dim)
                done += 1
    return done


def migrate_chains(parts: Parts, builder: ChainBuilder, now: datetime) -> int:
    """Once per store: every namespace's procedures become chains (``chain_namespace``)."""
    if parts.store.get_meta("", _MIGRATED):
        return 0
    done = sum(chain_namespace(parts, builder, namespace, now) for namespace in parts.store.namespaces())
    parts.store.set_meta("", _MIGRATED, "1")
    return done
