"""The storage seam: one small, batch-first protocol every backend implements.

Stores only store. Scoring, dedupe and conflict rules live in plain functions over the
models (``graphmem.retrieve``), shared by every backend, so backends cannot drift apart.
Every method takes the namespace; no method reads across namespaces."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from pydantic import ValidationError as PydanticValidationError

from ..errors import StoreError, ValidationError, WriteRace
from ..models import NODE_TYPES, Edge, EdgeType, Entity, Node, NodeKind, Status
from ..models.records import SCOPE_FIELDS
from ..text import index_terms, normalise_name
from .layers import LayerAsk, LayerHits, Walked

Direction = Literal["out", "in", "both"]
VECTOR_KINDS = ("memory", "message", "episode", "procedure", "entity", "step", "trace")  # kinds whose nodes carry embeddings


@dataclass(frozen=True)
class StoreCapabilities:
    """What a backend can do beyond the protocol, declared instead of probed."""

    file: Path | None = None  # the one file the store lives in (stats report its size)
    cypher: bool = False  # runs read-only Cypher (``explore``: graphmem cypher)
    # reads overlap when run side by side (a server's round trips); the embedded store reads
    # one statement at a time on its connection, so threads only add switching
    concurrent_reads: bool = False


Accesses = dict[tuple[str, str], tuple[int, datetime]]  # (namespace, id) -> (count, latest time)


class AccessBuffer:
    """Record accesses counted in memory and written in batches (every ``every`` records or
    ``seconds``), so recall never waits for a write. Reads add the buffered counts (``get``).
    A failed write keeps the counts for the next flush."""

    def __init__(self, write: Callable[[Accesses], None], every: int = 512, seconds: float = 5.0) -> None:
        self._write = write
        self._every, self._seconds = every, seconds
        self._items: Accesses = {}
        self._lock = threading.Lock()  # never held while writing: the store's own lock comes after it
        self._last = time.monotonic()

    def add(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        with self._lock:
            for node_id in ids:
                count, _ = self._items.get((namespace, node_id), (0, at))
                self._items[(namespace, node_id)] = (count + 1, at)
        self.maybe_flush()

    def get(self, namespace: str, node_id: str) -> tuple[int, datetime] | None:
        return self._items.get((namespace, node_id))

    def discard(self, namespace: str, ids: Iterable[str]) -> None:
        """Forget buffered accesses of records just written whole (they carry their counts) or deleted."""
        with self._lock:
            for node_id in ids:
                self._items.pop((namespace, node_id), None)

    def discard_namespace(self, namespace: str) -> None:
        with self._lock:
            for key in [k for k in self._items if k[0] == namespace]:
                del self._items[key]

    def maybe_flush(self) -> None:
        if len(self._items) >= self._every or (self._items and time.monotonic() - self._last > self._seconds):
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._items = self._items, {}
        if not pending:
            return
        try:
            self._write(pending)
        except BaseException:
            with self._lock:
                for key, (count, at) in pending.items():
                    now_count, _ = self._items.get(key, (0, at))
                    self._items[key] = (now_count + count, at)
            raise
        self._last = time.monotonic()


def lease_value(held: str | None, owner: str, now: float, seconds: float, take_from: str | None = None) -> str | None:
    """A lease's next stored value when ``owner`` may take or renew it for ``seconds`` from
    ``now`` (it is free, run out, already ``owner``'s, or ``take_from``'s: a holder known to be
    dead), else None. ``held`` is the stored value: JSON ``{"owner", "until"}`` (seconds since
    the epoch, on the clock that judges it)."""
    holder, until = lease_holder(held)
    if holder not in (None, owner, take_from) and until > now:
        return None
    return json.dumps({"owner": owner, "until": now + seconds})


def lease_holder(held: str | None) -> tuple[str | None, float]:
    """(owner, until) of a stored lease; (None, 0) for none or an unreadable one."""
    try:
        lease = json.loads(held) if held else {}
        return str(lease["owner"]), float(lease["until"])
    except (ValueError, KeyError, TypeError):
        return None, 0.0


def scope_token(namespace: str, kind: str, status: str | None) -> str:
    """One keyword-index token per (namespace, kind, status): a search ANDs it in, so the
    tenant filter runs inside the full-text index and its top-k is the tenant's own."""
    key = f"{namespace}\x00{kind}\x00{status or 'active'}"
    return "z" + hashlib.blake2b(key.encode(), digest_size=10).hexdigest()


_SCOPE_SHAPED = re.compile(r"z[0-9a-f]{20}")


def body_terms(text: str) -> str:
    """The indexed terms of a text beside a scope token (one index field, as on Neo4j): a term
    shaped like a scope token is left out, so no text can pose as another tenant's scope and
    crowd its top-k."""
    return " ".join(t for t in index_terms(text).split() if not _SCOPE_SHAPED.fullmatch(t))


def check_batch(namespace: str, nodes: Sequence[Node], edges: Sequence[Edge]) -> None:
    """Every node and edge of a write must belong to the namespace written."""
    for e in edges:
        if e.namespace != namespace:
            raise ValidationError(f"edge {e.source}->{e.target} belongs to namespace {e.namespace!r}, not {namespace!r}")
    for node in nodes:
        if node.namespace != namespace:
            raise ValidationError(f"record {node.id} belongs to namespace {node.namespace!r}, not {namespace!r}")


def scoped(scope: Mapping[str, str | None] | None) -> list[tuple[str, str]]:
    """The (field, value) pairs of a scope filter that are set; a field outside ``SCOPE_FIELDS``
    is refused (the embedded store puts the field's name into its SQL)."""
    out = [(k, v) for k, v in (scope or {}).items() if v is not None]
    unknown = {k for k, _ in out} - set(SCOPE_FIELDS)
    if unknown:
        raise ValidationError(f"unknown scope field {sorted(unknown)[0]!r}; fields are {list(SCOPE_FIELDS)}")
    return out


def no_vectors(rows: int, dim: int) -> np.ndarray:
    """Vector rows for records written without one (NaN: see ``prepare_vectors``)."""
    return np.full((rows, dim), np.nan, dtype=np.float32)


def prepare_vectors(nodes: Sequence[Node], vectors: np.ndarray | None, dim: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Check a write's vectors (one row per node, NaN rows meaning "none") against the store's
    dimension and return them normalised to unit length, with a mask of the rows present."""
    if vectors is None:
        return None, np.zeros(len(nodes), dtype=bool)
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape != (len(nodes), dim):
        raise ValidationError(
            f"vectors have shape {vectors.shape}; expected ({len(nodes)}, {dim}): the store's embedding dimension is {dim}"
        )
    has_vec = ~np.all(np.isnan(vectors), axis=1)
    bad = has_vec & ~np.all(np.isfinite(vectors), axis=1)
    if bad.any():
        raise ValidationError(f"vector for {nodes[int(np.argmax(bad))].id} contains NaN or infinite values")
    norms = np.linalg.norm(np.where(has_vec[:, None], vectors, 0.0), axis=1)
    if np.any(has_vec & (norms == 0)):
        raise ValidationError("a vector has zero length")
    return vectors / np.where(norms == 0, 1.0, norms)[:, None], has_vec


def hydrate(kind: str, data: str, node_id: str, access_count: int | None, last_accessed_at: object,
            pending: tuple[int, object] | None) -> Node:
    """A stored record from its JSON, with the access count and time kept beside it plus any
    accesses still buffered in this process (``pending``: count, latest time)."""
    payload = json.loads(data)
    if "access_count" in NODE_TYPES[kind].model_fields:  # a scorable record: recall counts its uses
        payload["access_count"] = (access_count or 0) + (pending[0] if pending else 0)
        payload["last_accessed_at"] = pending[1] if pending else last_accessed_at
    try:
        return NODE_TYPES[kind].model_validate(payload, context={"stored": True})
    except PydanticValidationError as exc:
        raise StoreError(f"stored record {node_id} does not validate: {exc}") from exc


def entity_norms(node: Entity) -> set[str]:
    """The normalised names an entity is found by: its name and aliases, none once merged."""
    if node.merged_into:
        return set()
    return {normalise_name(n) for n in [node.name, *node.aliases]} - {""}


def name_taken(new: Sequence[Entity], named: Mapping[str, list[Entity]]) -> WriteRace | None:
    """The conflict of a write that creates entities another writer has created since this one
    looked their names up: an entity already found by a new one's name, of its type or of a type
    nobody stated (what the resolver would have linked to). Checked inside the write's
    transaction, with other writers of the namespace held off (the embedded store's write lock,
    the namespace node's lock on Neo4j), so one entity per name and type stands whatever the
    number of processes; the caller's write is retried and then finds it."""
    for ent in new:
        for other in named.get(normalise_name(ent.name), []):
            same_kind = other.type == ent.type or not other.typed or not ent.typed
            if other.id != ent.id and not other.merged_into and same_kind:
                return WriteRace(f"entity {ent.name!r} ({ent.type}) was created by another writer meanwhile "
                                 f"({other.id})")
    return None


def named_lists(hits: dict[str, list[str]], entities: dict[str, Entity]) -> dict[str, list[Entity]]:
    """Names -> the entities found by each, oldest first (ids are time-ordered)."""
    out = {norm: [entities[i] for i in sorted(set(ids)) if i in entities] for norm, ids in hits.items()}
    return {norm: found for norm, found in out.items() if found}


def first_named(named: dict[str, list[Entity]]) -> dict[str, Entity]:
    return {norm: found[0] for norm, found in named.items()}


def unit_query(vector: np.ndarray, dim: int | None) -> np.ndarray:
    """A search vector checked against the store's dimension and scaled to unit length."""
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    if q.shape[0] != dim or not np.all(np.isfinite(q)):
        raise ValidationError(f"query vector must be {dim} finite numbers; got shape {q.shape}")
    norm = float(np.linalg.norm(q))
    if norm == 0:
        raise ValidationError("query vector has zero length")
    return q / norm


def reembedded_rows(target: tuple[str, int] | None, ids: Sequence[str], vectors: np.ndarray) -> np.ndarray:
    """A re-embedding's vectors checked against its target dimension, as unit rows."""
    if target is None:
        raise StoreError("no re-embedding in progress: call begin_reembed() first")
    vecs = np.asarray(vectors, dtype=np.float32)
    if vecs.shape != (len(ids), target[1]) or not np.all(np.isfinite(vecs)):
        raise ValidationError(f"re-embedded vectors must be ({len(ids)}, {target[1]}) finite values, got {vecs.shape}")
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def swap_target(store: "Store") -> tuple[str, int]:
    """The model a finished re-embedding swaps in; refused while nodes still wait for it."""
    target = store.reembed_target()
    if target is None:
        raise StoreError("no re-embedding in progress")
    if store.reembed_pending(1):
        raise StoreError("nodes are still waiting to be re-embedded; finish them first")
    return target


def pages(store: "Store", namespace: str, kind: NodeKind, size: int = 1000,
          scope: Mapping[str, str] | None = None) -> Iterator[list[Node]]:
    """Every node of ``kind`` in the namespace (of ``scope`` when given), oldest first, ``size`` at a time."""
    offset = 0
    while True:
        page = store.query(namespace, kind, limit=size, offset=offset, newest_first=False, scope=scope)
        if page:
            yield page
        if len(page) < size:
            return
        offset += len(page)


def node_text(node: Node) -> str | None:
    """The text a node is found by in keyword search (None: not searchable)."""
    kind = node.kind
    if kind == "memory":
        return node.text
    if kind == "message":  # who said it and when are part of what a turn is found by
        return f"{node.speaker} {node.created_at:%B %Y} {node.said}"
    if kind == "episode":
        return node.summary
    if kind == "procedure":
        return node.task + " " + " ".join(s.text for s in node.steps)
    if kind == "step":
        return node.text
    if kind == "trace":
        return f"{node.task} {node.outcome}"
    if kind == "entity":
        return " ".join([node.name, *node.aliases, node.description])
    return None


@runtime_checkable
class Store(Protocol):
    """What graphmem needs from a backend. ``EmbeddedStore`` is the reference implementation;
    ``tests/test_store_contract.py`` is the contract every backend passes."""

    capabilities: StoreCapabilities

    def bound_embedder(self) -> tuple[str, int] | None:
        """The (model name, dimension) the store's vectors come from; None for a new store."""

    def init(self, *, embedder: str, dim: int) -> None:
        """Create the schema if missing (idempotent) and bind the store to one embedding model;
        raises ConfigurationError when the store holds vectors of another model or size."""

    def close(self) -> None: ...

    # namespaces -------------------------------------------------------------------------
    def namespaces(self) -> list[str]: ...

    def has_namespace(self, namespace: str) -> bool: ...

    def delete_namespace(self, namespace: str) -> int:
        """Delete every node, edge, vector and index entry of ``namespace``; returns nodes deleted."""

    def get_meta(self, namespace: str, key: str) -> str | None: ...

    def set_meta(self, namespace: str, key: str, value: str | None) -> None: ...

    def claim(self, namespace: str, key: str, owner: str, seconds: float, take_from: str | None = None) -> bool:
        """Take or renew the lease ``key`` of ``namespace`` for ``owner`` until ``seconds`` from
        now; False while another owner (other than ``take_from``, one the caller knows is dead)
        holds it unexpired. Atomic across processes (and, on Neo4j, machines: the server's clock
        judges). Kept in the namespace's meta (``get_meta`` reads it)."""

    def release(self, namespace: str, key: str, owner: str) -> None:
        """Give the lease ``key`` back if ``owner`` holds it (or nobody does)."""

    # nodes ------------------------------------------------------------------------------
    def put(
        self, namespace: str, nodes: Sequence[Node], vectors: np.ndarray | None = None, edges: Sequence[Edge] = (),
        *, expect: Mapping[str, datetime | None] | None = None, claim_names: bool = True,
    ) -> None:
        """Insert or replace ``nodes`` and ``edges`` (all of ``namespace``) in one transaction.
        ``vectors``, when given, has one row per node; a row of NaN means "no vector". Edge
        endpoints must exist in the store or in this batch. ``expect`` makes the write
        conditional: each id must still have that ``updated_at`` (None: must not exist), checked
        in the same transaction with the records locked, or ``WriteRace`` and nothing written
        (a read-modify-write that another process may race). A new entity that another entity
        of the namespace is already named as (``name_taken``) is a ``WriteRace`` as well,
        unless ``claim_names`` is False (an import keeps the records it is given)."""

    def get(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        """The nodes found, in the order asked; unknown ids are left out."""

    def views(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        """``get`` for recall's candidates: a store may return light views of the records
        instead (``views.RecordView``: the fields scoring reads, the record built on demand)."""

    def query(
        self,
        namespace: str,
        kind: NodeKind,
        *,
        statuses: Sequence[Status] | None = None,
        session_id: str | None = None,
        category: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        ids: Sequence[str] | None = None,
        seq_range: tuple[int, int] | None = None,
        limit: int = 100,
        offset: int = 0,
        newest_first: bool = True,
        mentions: str | None = None,
        scope: Mapping[str, str] | None = None,
    ) -> list[Node]:
        """Nodes of one kind, filtered; ordered by creation time, or by ``seq`` when
        ``seq_range`` (messages of one session, start inclusive, end exclusive) is given.
        ``mentions``: only nodes with a MENTIONS edge to this entity id, read in the same
        statement (a reader never pairs the edges of one moment with the nodes of another).
        ``scope``: only nodes whose ``user_id`` / ``agent_id`` / ``run_id`` are these."""

    def count(self, namespace: str, edges: bool = True) -> dict[str, int]:
        """Node counts by kind (and ``memory:<status>``) plus ``edges`` (unless not asked:
        counting a large namespace's edges takes a server a while)."""

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete nodes with their edges (and relation edges derived from them), vectors and
        index entries; returns nodes deleted."""

    def atomic(self) -> AbstractContextManager[None]:
        """Every write of the block in one transaction: all of it or, on an error or a crash at
        any point, none of it (an import, ``graphmem add``). Nested blocks join the outer one.
        The embedded store holds off every other writer meanwhile; Neo4j's other sessions do
        not see the block's writes until it commits."""

    def optimize(self) -> None:
        """Put the store's search structures in their fastest form after many writes, whatever
        it costs (``Memory.maintain`` calls it). The embedded store merges its full-text index
        into one segment; Neo4j merges its own indexes."""

    def unscrubbed(self) -> bool:
        """Whether deleted text may still be in the store's file (the embedded store: a reader
        of an older snapshot held its pages past the delete's wait; they are scrubbed once it
        lets go). A server's files are its own (False)."""

    def vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    # search -----------------------------------------------------------------------------
    def vector_search(
        self, namespace: str, kind: NodeKind, vector: np.ndarray, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        """The exact top-k by cosine within the namespace, kind and statuses."""

    def keyword_search(
        self, namespace: str, kind: NodeKind, text: str, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        """BM25 top-k (higher is better, unnormalised) for a natural-language query."""

    def search_layer(self, namespace: str, ask: LayerAsk, vector: np.ndarray, text: str) -> LayerHits:
        """One recall layer's vector, keyword and graph candidates, as ``layers.search_layer``
        composes them from the calls above (a server store answers in one query)."""

    def walk(self, namespace: str, names: Sequence[str], depth: int, limit: int) -> Walked:
        """Recall's graph walk from the entities ``names`` name, as ``layers.walk`` composes it
        (a server store answers in one query)."""

    def turns_beside(self, namespace: str, ids: Sequence[str], vector: np.ndarray, exclude: set[str]
                     ) -> tuple[list[Node], dict[str, float]]:
        """The turns one NEXT edge before or after the given ones, less ``exclude``, with their
        cosines to ``vector`` (recall's conversation context), as ``layers.turns_beside``
        composes them (a server store answers in one query)."""

    def kinds_held(self, namespace: str) -> set[str]:
        """Which of the recall layers' kinds (memory, message, episode, procedure, trace) the
        namespace holds any node of, read now: recall searches only those."""

    def find_entities(self, namespace: str, names: Iterable[str]) -> dict[str, Entity]:
        """Entities whose normalised name or alias equals a normalised name given, keyed by it
        (where several share a name: the oldest)."""

    def entities_named(self, namespace: str, names: Iterable[str]) -> dict[str, list[Entity]]:
        """Every entity whose normalised name or alias equals a normalised name given, keyed by
        it, oldest first (a person and a country may share a name)."""

    # edges ------------------------------------------------------------------------------
    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None: ...

    def delete_edges(self, namespace: str, edges: Sequence[Edge]) -> None: ...

    def edges(
        self,
        namespace: str,
        ids: Sequence[str],
        *,
        types: Sequence[EdgeType] | None = None,
        direction: Direction = "out",
    ) -> list[Edge]: ...

    def neighbours(self, namespace: str, entity_ids: Sequence[str], depth: int, limit: int = 200) -> dict[str, int]:
        """Entities within ``depth`` RELATES_TO hops (either direction) -> hop count (0 = given),
        nearest first, at most ``limit`` of them."""

    def mentioned_by(
        self, namespace: str, entity_ids: Sequence[str], kind: NodeKind, statuses: Sequence[Status], limit: int
    ) -> list[tuple[str, str]]:
        """(node id, entity id) pairs: nodes of ``kind`` and ``statuses`` with a MENTIONS edge to
        one of ``entity_ids``; at most ``limit`` pairs, plain tuples (the hot path of graph recall)."""

    def mention_counts(self, namespace: str, entity_ids: Sequence[str]) -> dict[str, int]:
        """How many nodes mention each entity or were said by it (MENTIONS in, SAID out): how
        much of the namespace is about it. Entities without any are left out."""

    def vector_scores(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> dict[str, float]:
        """Cosine similarity of ``vector`` to each given node that has a vector."""

    def vector_scores_of(
        self, namespace: str, ids: Mapping[NodeKind, Sequence[str]], vector: np.ndarray
    ) -> dict[str, float]:
        """``vector_scores`` of several kinds' nodes (kind -> ids) in one read; ids are unique
        in a namespace, so one mapping holds them all."""

    def get_scored(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> tuple[list[Node], dict[str, float]]:
        """``views(ids)`` and ``vector_scores`` of its nodes of ``kind``, in one read."""

    def pending_vectors(self, kind: NodeKind, limit: int) -> list[Node]:
        """Nodes of ``kind``, in any namespace, stored without a vector yet (written with
        deferred enrichment), oldest first. Maintenance only: the one cross-namespace read."""

    def record_access(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        """Count one access of each id. May be buffered; reads see it at once."""

    # re-embedding (maintenance; every namespace at once: the store holds one model) --------
    def reembed_target(self) -> tuple[str, int] | None:
        """The (model, dimension) a re-embedding in progress moves to, or None."""

    def begin_reembed(self, *, embedder: str, dim: int) -> None:
        """Start (or resume, for the same target) a re-embedding: a second set of vectors is
        filled beside the live one, which search keeps using until ``finish_reembed``."""

    def reembed_pending(self, limit: int) -> list[Node]:
        """Nodes of ``VECTOR_KINDS``, any namespace, without a vector of the target model yet
        (written since the re-embedding began included), oldest first."""

    def put_reembedded(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Store target-model vectors (one row per id)."""

    def finish_reembed(self) -> None:
        """Swap: the target vectors become the live ones, the old ones and their index are
        dropped and the store is bound to the target model. Refused while nodes are pending."""
