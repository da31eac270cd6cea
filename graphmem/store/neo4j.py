"""The Neo4j backend: memories as real Neo4j nodes and relationships.

Every node carries ``:Record`` and its kind's label (``:Memory``, ``:Message``, ``:Episode``,
``:Procedure``, ``:Entity``, ``:Session``), its fields as properties for exploration, the whole
record as JSON (``data``) for a faithful round trip, ``terms`` for the full-text index and
``embedding`` for the vector index. Edges are relationships of the ``EdgeType`` names.

Every statement comes from a file in ``cypher/`` (``graphmem.store.cypher``); values travel only
as parameters. Writes and reads run in managed transactions (``execute_write``/``execute_read``:
read routing in a cluster, retries on transient errors and lost connections), and every driver
error is mapped into graphmem's exception tree.

Vector search is tenant-correct (see ``vector_search``). The store reads the server's version
at connect. On Neo4j 2026.x each vector index holds the namespace as a filter property and a
search walks only the tenant's nodes (Cypher 25 ``SEARCH ... WHERE``). On 5.26 the HNSW index is
shared by all namespaces, so its global top-k is only a candidate list; the store oversamples
(adapting to the tenant's share), filters and rescores exactly, and scans the namespace exactly
when the candidates fall short.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, TypeVar

import numpy as np

from ..errors import ConfigurationError, StoreError, ValidationError, WriteRace
from ..models import Edge, EdgeType, Entity, Node, NodeKind, Status
from ..models.records import SCOPE_FIELDS
from ..telemetry import traced_methods
from .base import (
    VECTOR_KINDS, AccessBuffer, Accesses, Direction, StoreCapabilities, check_batch, entity_norms, hydrate,
    name_taken, prepare_vectors, scoped,
)
from .cypher import LABELS, VECTOR_PROPS, query, schema_files
from .neo4j_meta import MetaMixin
from .neo4j_reembed import ReembedMixin
from .neo4j_retire import RetireMixin, retired_form
from .neo4j_retire import retirements as _retirements
from .neo4j_rows import WRITE_BATCH as _WRITE_BATCH
from .neo4j_rows import READ_CHUNK as _READ_CHUNK
from .neo4j_rows import ExploreMixin
from .neo4j_rows import chunks as _chunks
from .neo4j_rows import edge_rows as _edge_rows
from .neo4j_rows import epoch, write_row
from .neo4j_rows import to_native as _to_native
from .neo4j_search import SearchMixin, _norms
from .views import RecordView

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
FILTERED_SINCE = (2026, 1)  # the first Neo4j with vector indexes that filter inside the search
_DELETE_BATCH = 10_000
_NAMESPACE_TTL = 5.0

T = TypeVar("T")


def _fulltext_labels() -> set[str]:
    """The labels the keyword index covers, as the schema file that creates it names them."""
    text = next(f.text for f in schema_files() if "FULLTEXT INDEX record_terms" in f.text)
    return set(re.search(r"FULLTEXT INDEX record_terms.*?FOR \(n:([\w|]+)\)", text, re.S).group(1).split("|"))


@traced_methods("graphmem.store")
class Neo4jStore(ExploreMixin, MetaMixin, ReembedMixin, RetireMixin, SearchMixin):
    """A Store on a Neo4j 5.26+ server (or cluster, or Aura). See the module docstring."""

    def __init__(
        self,
        uri: str = "bolt://127.0.0.1:7687",
        user: str = "neo4j",
        password: str = "",
        database: str = "neo4j",
        *,
        retry_seconds: float = 60.0,
        exact_below: int = 1_000,
        oversample: int = 2,
        min_candidates: int = 100,
    ) -> None:
        import neo4j  # the driver is a core dependency; imported here so the module loads fast

        self.uri, self.user, self.database = uri, user, database
        self.exact_below = exact_below  # a kind with fewer nodes (all tenants) is always scanned exactly
        self.oversample = oversample
        self.min_candidates = min_candidates  # the fewest HNSW candidates a search asks for
        self.dim: int | None = None
        self.embedder: str | None = None
        self._neo4j = neo4j
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri, auth=(user, password) if password else None,
                max_transaction_retry_time=retry_seconds, connection_acquisition_timeout=retry_seconds,
                user_agent="graphmem", notifications_min_severity="OFF",  # tests check notifications
            )
        except (ValueError, neo4j.exceptions.ConfigurationError) as exc:
            raise ConfigurationError(f"invalid Neo4j URI {uri!r}: {exc}") from exc
        # one bookmark manager for every session: in a cluster a read (routed to a follower) waits
        # for the writes this store made before it, so a recall sees the turns just added
        self._bookmarks = neo4j.GraphDatabase.bookmark_manager()
        self._lock = threading.RLock()
        self._block = threading.local()  # atomic(): this thread's open transaction
        self._access = AccessBuffer(self._write_access)
        self._label_counts: dict[str, tuple[float, int]] = {}
        self._shares: dict[tuple[str, str], float] = {}  # a tenant's share of a kind's HNSW candidates
        self._namespaces_seen: dict[str, float] = {}
        self._prop = VECTOR_PROPS[0]  # the live vector property; a re-embedding fills the other one
        self._next: tuple[str, int] | None = None
        self.server_version: tuple[int, ...] | None = None  # read at connect
        self.server_version_text = ""
        self.capabilities = StoreCapabilities(cypher=True, concurrent_reads=True)

    @property
    def _shadow(self) -> str:
        return VECTOR_PROPS[1] if self._prop == VECTOR_PROPS[0] else VECTOR_PROPS[0]
    # plumbing ------------------------------------------------------------------------------
    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Map every driver error into graphmem's tree, naming the server."""
        exc_mod = self._neo4j.exceptions
        try:
            yield
        except (ValidationError, ConfigurationError, StoreError):
            raise
        except exc_mod.AuthError as exc:
            raise ConfigurationError(
                f"Neo4j at {self.uri} refused user {self.user!r}: {exc.message} (check GRAPHMEM_NEO4J_USER and "
                "GRAPHMEM_NEO4J_PASSWORD)"
            ) from exc
        except (exc_mod.ServiceUnavailable, exc_mod.SessionExpired) as exc:
            raise StoreError(f"cannot reach Neo4j at {self.uri}: {exc}") from exc
        except exc_mod.ConstraintError as exc:
            raise ValidationError(f"Neo4j refused the write: {exc.message}") from exc
        except exc_mod.Neo4jError as exc:
            if exc.code and "DatabaseNotFound" in exc.code:
                raise ConfigurationError(f"Neo4j at {self.uri} has no database {self.database!r}") from exc
            raise StoreError(f"Neo4j error at {self.uri} ({exc.code}): {exc.message}") from exc
        except exc_mod.DriverError as exc:
            raise StoreError(f"Neo4j driver error for {self.uri}: {exc}") from exc

    def _session(self, **options: Any) -> Any:
        return self._driver.session(database=self.database, bookmark_manager=self._bookmarks, **options)

    def _run(self, write: bool, work: Callable[[Any], T]) -> T:
        tx = getattr(self._block, "tx", None)
        if tx is not None:  # inside atomic() on this thread: its one transaction reads and writes
            with self._errors():
                return work(tx)
        with self._errors(), self._session() as session:
            return session.execute_write(work) if write else session.execute_read(work)

    @contextmanager
    def atomic(self) -> Iterator[None]:
        if getattr(self._block, "tx", None) is not None:  # nested: the outer block decides
            yield
            return
        with self._errors(), self._session() as session:
            tx = session.begin_transaction()
            self._block.tx = tx
            try:
                yield
            except BaseException as exc:
                if not tx.closed():  # a failed statement closed it already
                    tx.rollback()
                if isinstance(exc, StoreError) and "MemoryPoolOutOfMemoryError" in str(exc):
                    raise StoreError(f"the block is more than the Neo4j server at {self.uri} holds in one transaction "
                                     "(dbms.memory.transaction.total.max, a share of its heap); nothing was written: "
                                     f"give the server more memory or split the input ({exc})") from exc
                raise
            else:
                tx.commit()
            finally:
                self._block.tx = None
                tx.close()

    def _statement(self, write: bool, name: str, params: dict[str, Any]) -> list[Any]:
        """Run one named query in its own managed transaction; ``_ids`` fills its slots."""
        text = query(name).render(**params.pop("_ids", {}))
        return self._run(write, lambda tx: list(tx.run(text, params)))

    def _read(self, name: str, **params: Any) -> list[Any]:
        return self._statement(False, name, params)

    def _write(self, name: str, **params: Any) -> list[Any]:
        return self._statement(True, name, params)

    def _rows(self, name: str, **params: Any) -> list[Any]:
        """A query that returns its result as one row of lists (``rows``): one Bolt record
        instead of hundreds, which the client decodes several times faster."""
        return self._read(name, **params)[0]["rows"]

    @staticmethod
    def _tx(tx: Any, name: str, identifiers: dict[str, str] | None = None, **params: Any) -> list[Any]:
        return list(tx.run(query(name).render(**(identifiers or {})), params))

    def _dim(self) -> int:
        if self.dim is None:
            raise StoreError("the store is not initialised: call init() first")
        return self.dim

    # lifecycle -----------------------------------------------------------------------------
    def _connect(self) -> None:
        with self._errors():
            try:
                self._driver.verify_connectivity()
            except self._neo4j.exceptions.ServiceUnavailable as exc:
                raise StoreError(
                    f"cannot reach Neo4j at {self.uri}: {exc}. Start it (scripts/neo4j-dev start, or docker compose "
                    "up -d) or set GRAPHMEM_NEO4J_URI"
                ) from exc
        if self.server_version is None:
            self.server_version_text = str(self._read("server_version")[0]["version"])
            self.server_version = tuple(int(x) for x in re.findall(r"\d+", self.server_version_text)[:3])

    @property
    def filtered_vectors(self) -> bool:
        """Whether vector searches filter by namespace inside the index (Neo4j 2026.x)."""
        return self.server_version is not None and self.server_version >= FILTERED_SINCE

    @property
    def vector_path(self) -> str:
        """The vector search this server gets, in words (``graphmem init`` and the benchmarks print it)."""
        if self.filtered_vectors:
            return "in-index namespace filter (Cypher 25 SEARCH)"
        return "shared HNSW index, oversampled per tenant and filtered after"

    def bound_embedder(self) -> tuple[str, int] | None:
        self._connect()
        name, dim = self.get_meta("", "embedder"), self.get_meta("", "dim")
        return (name, int(dim)) if name and dim else None

    def init(self, *, embedder: str, dim: int) -> None:
        self._connect()
        stored = {key: self.get_meta("", key) for key in ("schema", "embedder", "dim", "vector_prop")}
        self._prop = stored["vector_prop"] or VECTOR_PROPS[0]
        if stored["schema"] not in (None, SCHEMA_VERSION):
            raise ConfigurationError(
                f"the Neo4j database {self.database!r} at {self.uri} has graphmem schema {stored['schema']}; "
                f"this graphmem writes {SCHEMA_VERSION}"
            )
        if stored["embedder"] and (stored["embedder"] != embedder or int(stored["dim"] or 0) != dim):
            raise ConfigurationError(
                f"the Neo4j database {self.database!r} at {self.uri} holds vectors of {stored['embedder']} "
                f"({stored['dim']}-d); the configured embedder is {embedder} ({dim}-d). Use GRAPHMEM_EMBEDDER to "
                "match, or export without vectors and import into an empty database"
            )
        self.apply_schema(dim)
        for key, value in (("schema", SCHEMA_VERSION), ("embedder", embedder), ("dim", str(dim))):
            self.set_meta("", key, value)
        self.dim, self.embedder = dim, embedder
        self._recover_retirements()
        if self.reembed_target() is None:
            self._drop_vector_indexes(self._shadow)  # left by a finished or abandoned re-embedding

    def apply_schema(self, dim: int) -> None:
        """Create constraints and indexes (idempotent). A vector index of another dimension is
        rebuilt when no node of its label holds an embedding yet, and refused otherwise."""
        self._apply_schema(dim, self._prop)

    def _apply_schema(self, dim: int, prop: str, only_vectors: bool = False) -> None:
        """On 2026.x a vector index without the namespace filter (made by Neo4j 5 before an
        upgrade) is dropped and made again with it: an index is only a view of the vectors, which
        the nodes keep."""
        with self._errors(), self._session() as session:
            for row in self._read("schema_vector_indexes"):
                if not row["name"].endswith("_" + prop):
                    continue
                if row["dim"] is not None and int(row["dim"]) != dim:
                    if self._read("embeddings_exist", _ids={"label": row["label"]}, prop=prop)[0]["found"]:
                        raise ConfigurationError(
                            f"the vector index {row['name']} at {self.uri} is {row['dim']}-d and holds vectors; "
                            f"the configured embedder makes {dim}-d ones"
                        )
                    session.run(query("schema_drop_index").text, {"name": row["name"]}).consume()
                elif self.filtered_vectors and "namespace" not in row["properties"]:
                    log.info("rebuilding the vector index %s with the namespace as a filter property", row["name"])
                    session.run(query("schema_drop_index").text, {"name": row["name"]}).consume()
            covered = self._read("schema_fulltext_labels")
            if not only_vectors and covered and set(covered[0]["labels"]) != _fulltext_labels():
                session.run(query("schema_drop_index").text, {"name": "record_terms"}).consume()  # rebuilt below
            for file in schema_files():
                vectors = "vector" in file.slots
                if (only_vectors and not vectors) or (vectors and self.filtered_vectors):
                    continue  # on 2026.x the vector indexes are made below, with the namespace filter
                for statement in file.statements(vector=prop):
                    session.run(statement, {"dim": dim} if "$dim" in statement else {}).consume()
            if self.filtered_vectors:
                for kind in VECTOR_KINDS:
                    statement = query("schema_vector_index_filtered").render(
                        index=f"{kind}_{prop}", label=LABELS[kind], vector=prop)
                    session.run(statement, {"dim": dim}).consume()
            session.run("CALL db.awaitIndexes(300)").consume()

    def close(self) -> None:
        with self._lock:
            try:
                self._access.flush()
            finally:
                self._driver.close()

    # namespaces ----------------------------------------------------------------------------
    def namespaces(self) -> list[str]:
        return [r["name"] for r in self._read("namespace_list")]

    def has_namespace(self, namespace: str) -> bool:
        # a namespace seen to exist is remembered for a few seconds (every recall asks);
        # deleting it here forgets it at once
        seen = self._namespaces_seen.get(namespace)
        if seen is not None and time.monotonic() - seen < _NAMESPACE_TTL:
            return True
        found = bool(self._read("namespace_exists", namespace=namespace)[0]["found"])
        if found:
            self._namespaces_seen[namespace] = time.monotonic()
        return found

    def delete_namespace(self, namespace: str) -> int:
        self._namespaces_seen.pop(namespace, None)
        with self._lock:
            self._access.flush()
            self._access.discard_namespace(namespace)
        while self._write("namespace_delete_rels", namespace=namespace, batch=_DELETE_BATCH)[0]["deleted"]:
            pass
        total = 0
        while True:
            n = self._write("namespace_delete_nodes", namespace=namespace, batch=_DELETE_BATCH)[0]["deleted"]
            total += n
            if n < _DELETE_BATCH:
                break
        self._write("namespace_delete_rest", namespace=namespace)
        return total

    # nodes ---------------------------------------------------------------------------------
    def put(
        self, namespace: str, nodes: Sequence[Node], vectors: np.ndarray | None = None, edges: Sequence[Edge] = (),
        *, expect: Mapping[str, datetime | None] | None = None, claim_names: bool = True,
    ) -> None:
        if not nodes and not edges:
            return
        check_batch(namespace, nodes, edges)
        vectors, has_vec = prepare_vectors(nodes, vectors, self._dim())
        entities = [n for n in nodes if isinstance(n, Entity) and not n.merged_into] if claim_names else []
        by_kind: dict[str, list[dict[str, Any]]] = {}
        names: list[dict[str, Any]] = []
        for i, node in enumerate(nodes):
            by_kind.setdefault(node.kind, []).append(
                write_row(node) | {"vector": vectors[i].tolist() if has_vec[i] else None})
            if node.kind == "entity":
                norms = sorted(entity_norms(node))
                names.append({"entity_id": node.id, "norms": norms})
        edge_rows = _edge_rows(edges)
        in_batch = {node.id for node in nodes}
        staged = _retirements(nodes, edges, {r["id"]: r for rows in by_kind.values() for r in rows})
        marked: list[str] = []

        def work(tx: Any) -> None:
            if expect:  # locked first, read after: a read in the locking statement may predate the lock
                create = [i for i, at in expect.items() if at is None and i in in_batch]
                self._tx(tx, "nodes_lock", namespace=namespace, ids=list(expect), create=create)
                now = {r["id"]: _to_native(r["at"]) for r in self._tx(tx, "nodes_updated_at", namespace=namespace,
                                                                       ids=list(expect))}
                changed = [i for i, at in expect.items() if now.get(i) != at]
                if changed:
                    raise WriteRace(f"{changed[0]!r} was changed by another writer meanwhile")
            self._tx(tx, "namespace_ensure", namespace=namespace, now=datetime.now(timezone.utc))
            if entities:
                self._claim_names(tx, namespace, entities)
            marked[:] = self._tx(tx, "nodes_retire_begin", namespace=namespace, rows=staged)[0]["marked"] if staged else []
            for kind, rows in by_kind.items():
                clash = self._tx(tx, "nodes_kind_conflicts", namespace=namespace, ids=[r["id"] for r in rows], kind=kind)
                if clash:
                    raise ValidationError(
                        f"id {clash[0]['id']!r} is already a {clash[0]['kind']} in namespace {namespace!r}, not a {kind}"
                    )
                rows = [r for r in rows if r["id"] not in marked]  # written by the second step
                for chunk in _chunks(rows, _WRITE_BATCH):
                    self._tx(tx, "nodes_put", {"label": LABELS[kind]}, namespace=namespace, rows=chunk, prop=self._prop,
                             shadow=self._shadow, reembedding=self._next is not None and kind in VECTOR_KINDS)
            for chunk in _chunks(names, _WRITE_BATCH):
                self._tx(tx, "entity_names_put", namespace=namespace, rows=chunk)
            self._put_edges(tx, namespace, edge_rows, in_batch)

        self._run(True, work)
        if marked:
            second = set(marked)
            self._finish_retirements(namespace, [r for rows in by_kind.values() for r in rows if r["id"] in second])
        self._access.discard(namespace, [node.id for node in nodes])  # the records written carry their counts
        self._access.maybe_flush()

    def _claim_names(self, tx: Any, namespace: str, entities: list[Entity]) -> None:
        """``name_taken`` with the namespace's other writers of new entities held off until this
        write commits (a write that only changes entities takes no lock)."""
        stored = {r["id"] for r in self._tx(tx, "nodes_updated_at", namespace=namespace, ids=[e.id for e in entities])}
        new = [e for e in entities if e.id not in stored]
        if not new:
            return
        self._tx(tx, "namespace_lock", namespace=namespace, now=datetime.now(timezone.utc))
        named = self._named(namespace, self._tx(tx, "entity_names_find", namespace=namespace,
                                                 norms=_norms(e.name for e in new)))
        if clash := name_taken(new, named):
            raise clash

    def _put_edges(
        self, tx: Any, namespace: str, rows: dict[str, list[dict[str, Any]]], in_batch: set[str]
    ) -> None:
        if not rows:
            return
        ends = list({r[end] for group in rows.values() for r in group for end in ("source", "target")} - in_batch)
        for chunk in _chunks(ends, _READ_CHUNK):
            missing = self._tx(tx, "edges_missing_ends", namespace=namespace, ids=chunk)
            if missing:
                # raising inside the transaction function rolls the whole batch back
                raise ValidationError(f"edge endpoint {missing[0]['id']!r} does not exist in namespace {namespace!r}")
        for rel_type, group in rows.items():
            for chunk in _chunks(group, _WRITE_BATCH):
                self._tx(tx, "edges_put", {"rel_type": rel_type}, namespace=namespace, rows=chunk)

    def _hydrate(self, rows: Iterable[list[Any]], namespace: str | None = None,
                 build: Callable[..., Any] = hydrate) -> list[Any]:
        """Records (``build``: or views of them) from rows of [kind, data, access_count, last_accessed_at
        (ISO text: the driver's own temporal values cost ~0.1 ms each to decode), id, retiring(, namespace)],
        each in its retired form where the read holds a successor beside it (neo4j_retire)."""
        with self._lock:
            return [
                build(kind, data, node_id, access_count, _to_native(last_at),
                      self._access.get(namespace or rest[0], node_id))
                for kind, data, access_count, last_at, node_id, _, *rest in retired_form(list(rows))
            ]

    def get(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        return self._read_nodes(namespace, ids, hydrate)

    def _read_nodes(self, namespace: str, ids: Sequence[str], build: Callable[..., Any]) -> list[Any]:
        if not ids:
            return []
        found: dict[str, Any] = {}
        for chunk in _chunks(list(dict.fromkeys(ids)), _READ_CHUNK):
            found.update((n.id, n) for n in self._hydrate(self._rows("nodes_get", namespace=namespace, ids=chunk),
                                                          namespace, build))
        return [found[i] for i in ids if i in found]

    def views(self, namespace: str, ids: Sequence[str]) -> list[RecordView]:
        return self._read_nodes(namespace, ids, RecordView)

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
        if ids is not None and not ids:
            return []
        label = LABELS[kind]
        status_values = [Status(s).value for s in statuses] if statuses else None
        simple = category is None and since is None and until is None and ids is None and mentions is None \
            and not scope
        if seq_range is not None and kind == "message" and session_id is not None and simple:
            rows = self._rows(
                "session_messages_by_seq", namespace=namespace, session_id=session_id, start=seq_range[0],
                end=seq_range[1], statuses=status_values, newest_first=newest_first, offset=offset, limit=limit,
            )
        elif session_id is not None and kind in ("message", "episode") and simple and newest_first and not offset \
                and seq_range is None:
            rows = self._rows(
                "session_nodes_recent", _ids={"label": label}, namespace=namespace, session_id=session_id,
                statuses=status_values, limit=limit,
            )
        elif seq_range is not None:
            raise ValidationError("seq_range applies to the messages of one session: give kind='message' and session_id")
        else:
            rows = self._rows(
                "nodes_query", _ids={"label": label}, namespace=namespace, statuses=status_values,
                session_id=session_id, category=category, since=since, until=until,
                ids=list(ids) if ids is not None else None, mentions=mentions, newest_first=newest_first,
                offset=offset, limit=limit, **{f: None for f in SCOPE_FIELDS} | dict(scoped(scope)),
            )
        nodes = self._hydrate(rows, namespace)
        # a record read in its retired form (see _hydrate) no longer matches a status filter
        return [n for n in nodes if status_values is None or getattr(n, "status", None) in status_values]

    def count(self, namespace: str, edges: bool = True) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in self._read("nodes_count", namespace=namespace):
            kind, status, n = row["kind"], row["status"], row["n"]
            out[kind] = out.get(kind, 0) + n
            if kind == "memory":
                out[f"memory:{status}"] = n
        if edges:
            out["edges"] = self._read("edges_count", namespace=namespace)[0]["n"]
        return out

    def unscrubbed(self) -> bool:
        return False  # the server's store files are its own

    def optimize(self) -> None:
        return None  # Lucene merges the server's full-text and vector indexes itself

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        unique = list(dict.fromkeys(ids))

        def work(tx: Any) -> int:
            deleted = 0
            for chunk in _chunks(unique, _READ_CHUNK):
                self._tx(tx, "relations_delete_by_memory", namespace=namespace, ids=chunk)
                self._tx(tx, "entity_names_delete", namespace=namespace, ids=chunk)
                deleted += self._tx(tx, "nodes_delete", namespace=namespace, ids=chunk)[0]["deleted"]
            return deleted

        n = self._run(True, work)
        self._access.discard(namespace, unique)
        return n

    def vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for chunk in _chunks(list(ids), _READ_CHUNK):
            for row in self._read("vectors_get", _ids={"vector": self._prop}, namespace=namespace, ids=chunk):
                out[row["id"]] = np.asarray(row["embedding"], dtype=np.float32)
        return out

    # edges ---------------------------------------------------------------------------------
    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        self.put(namespace, [], edges=edges)

    def delete_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        rows = _edge_rows(edges)

        def work(tx: Any) -> None:
            for rel_type, group in rows.items():
                for chunk in _chunks(group, _WRITE_BATCH):
                    self._tx(tx, "edges_delete", {"rel_type": rel_type}, namespace=namespace, rows=chunk)

        if rows:
            self._run(True, work)

    def edges(
        self,
        namespace: str,
        ids: Sequence[str],
        *,
        types: Sequence[EdgeType] | None = None,
        direction: Direction = "out",
    ) -> list[Edge]:
        if not ids:
            return []
        type_values = [EdgeType(t).value for t in types] if types else None
        names = {"out": ["edges_out"], "in": ["edges_in"], "both": ["edges_out", "edges_in"]}[direction]
        out: dict[tuple, Edge] = {}
        for name in names:
            for chunk in _chunks(list(ids), _READ_CHUNK):
                for r in self._read(name, namespace=namespace, ids=chunk, types=type_values):
                    out[(r["source"], r["type"], r["target"], r["key"])] = Edge.stored(
                        namespace, r["source"], r["type"], r["target"], r["key"], r["props"], r["created_at"])
        return sorted(out.values(), key=lambda e: e.created_at)

    def neighbours(self, namespace: str, entity_ids: Sequence[str], depth: int, limit: int = 200) -> dict[str, int]:
        hops = {e: 0 for e in entity_ids}
        frontier = list(entity_ids)
        for hop in range(1, depth + 1):
            if not frontier or len(hops) >= limit:
                break
            frontier = self._rows("neighbours_hop", namespace=namespace, ids=frontier, seen=list(hops),
                                  limit=limit - len(hops))
            hops.update((e, hop) for e in frontier)
        return hops

    def pending_vectors(self, kind: NodeKind, limit: int) -> list[Node]:
        return self._hydrate(self._rows("pending_vectors", kind=kind, limit=limit))

    # access --------------------------------------------------------------------------------
    def record_access(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        self._access.add(namespace, ids, at)

    def _write_access(self, pending: Accesses) -> None:
        rows = [{"namespace": ns, "id": node_id, "count": c, "at": epoch(at)} for (ns, node_id), (c, at) in pending.items()]
        for chunk in _chunks(rows, _WRITE_BATCH):
            self._write("access_record", rows=chunk)
