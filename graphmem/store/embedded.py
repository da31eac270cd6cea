"""The embedded default backend: one SQLite file, no server.

SQLite (WAL) is the durable source of truth, with FTS5 for BM25 keyword search over text
pre-segmented by ``graphmem.text`` (so Chinese words are found). Vectors are stored as
float32 blobs and searched exactly with numpy from a per-(namespace, kind) matrix loaded
on first use. The entity-relation graph is held in networkx for multi-hop traversal.

In-memory caches follow this process's own writes incrementally; writes from another
process or connection are noticed through ``PRAGMA data_version`` and drop the caches,
which then reload lazily. One connection writes, under the store's lock; recall's keyword,
mention and record reads go through each thread's own read-only connection beside it, and a
vector search holds only its index's lock, so the layers of one recall read at once.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ConfigurationError, StoreError, WriteRace
from ..models import Edge, EdgeType, Entity, Node, NodeKind, Status
from ..telemetry import traced_methods
from ..text.entities import normalised
from .base import (
    AccessBuffer, Accesses, StoreCapabilities, check_batch, hydrate, lease_holder, lease_value, name_taken,
    named_lists, prepare_vectors, scoped,
)
from .embedded_ann import drop_indexes
from .embedded_graph import GraphMixin
from .embedded_parts import SCHEMA as _SCHEMA
from .embedded_parts import STATUS_CODE as _STATUS_CODE
from .embedded_parts import VectorIndex as _VectorIndex
from .embedded_parts import chunks as _chunks
from .embedded_parts import ts as _ts
from .embedded_reembed import ReembedMixin
from .embedded_rows import RowsMixin
from .embedded_search import SearchMixin
from .embedded_tx import TransactionsMixin
from .views import DecodedViews, RecordView

if TYPE_CHECKING:
    import networkx as nx

log = logging.getLogger(__name__)

SCHEMA_VERSION = "2"

@traced_methods("graphmem.store")
class EmbeddedStore(TransactionsMixin, GraphMixin, ReembedMixin, SearchMixin, RowsMixin):
    """SQLite + networkx + numpy in one file. See the module docstring."""

    def __init__(self, path: str | Path, ann_threshold: int = 0) -> None:
        self.path = Path(path) if str(path) != ":memory:" else Path(":memory:")
        self.ann_threshold = ann_threshold  # vectors of one kind before searches go through an HNSW graph; 0: never
        self._ann_root = None if str(path) == ":memory:" else Path(f"{self.path}.ann")
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self.dim: int | None = None
        self.embedder: str | None = None
        self._vindex: dict[tuple[str, str], _VectorIndex] = {}
        self._graphs: dict[str, nx.MultiDiGraph] = {}
        self._access = AccessBuffer(self._write_access)
        self._data_version: int | None = None
        self._wrote = threading.Event()
        self._closing = threading.Event()
        self._atomic: set[str] | None = None  # inside atomic(): the namespaces written; one transaction
        self._atomic_owner: int | None = None  # the thread inside atomic()
        self._unscrubbed = threading.Event()  # forgotten text may still be in the file: a reader held an older snapshot
        self._checkpoint_thread: threading.Thread | None = None
        self._readers = threading.local()  # per-thread read connections for lock-free FTS queries
        self._reader_conns: list[sqlite3.Connection] = []
        self._next: tuple[str, int] | None = None  # a re-embedding's target model
        self._commits = 0  # commits seen (ours, and others' through data_version): keys the small caches
        self._kinds: tuple[int, dict] = (-1, {})
        self._doc_counts: tuple[bytes | None, dict[str, int]] = (None, {})  # the index's version, term -> documents
        self._decoded = DecodedViews()  # recall's candidates, decoded, until written
        self._tenants: tuple[int, dict | None, tuple | None] = (-1, None, None)  # commits, namespace sizes, last counts
        self.capabilities = StoreCapabilities(file=None if str(self.path) == ":memory:" else self.path)

    # lifecycle ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            if str(self.path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
                try:  # a new store is its owner's alone (SQLite's own default is 0644); -wal and -shm follow it
                    os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                except FileExistsError:
                    pass
            try:
                conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=30000")
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute("PRAGMA secure_delete=ON")  # a deleted record's bytes are zeroed, not left in free pages
                # WAL checkpoints run in a background thread on their own connection, so a
                # commit on the request path never pays for copying pages back (see _checkpointer)
                conn.execute("PRAGMA wal_autocheckpoint=0")
                conn.execute("PRAGMA journal_size_limit=67108864")  # WAL file trimmed to 64 MiB after checkpoints
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
            self._conn = conn
        return self._conn

    def _global_meta(self, conn: sqlite3.Connection) -> dict[str, str]:
        try:
            return dict(conn.execute("SELECT key, value FROM meta WHERE namespace = ''").fetchall())
        except sqlite3.OperationalError:  # a new file: no tables yet
            return {}

    def bound_embedder(self) -> tuple[str, int] | None:
        with self._lock, self._guard():
            rows = self._global_meta(self._connect())
        return (rows["embedder"], int(rows["dim"])) if rows.get("embedder") else None

    def init(self, *, embedder: str, dim: int) -> None:
        with self._lock, self._guard():
            conn = self._connect()
            conn.executescript(_SCHEMA)
            rows = self._global_meta(conn)
            if rows.get("schema", SCHEMA_VERSION) != SCHEMA_VERSION:
                raise ConfigurationError(
                    f"the store at {self.path} has schema {rows['schema']}; this graphmem writes {SCHEMA_VERSION}. "
                    "Export it with the graphmem that wrote it and import it here"
                )
            if rows.get("embedder") and (rows["embedder"] != embedder or int(rows["dim"]) != dim):
                raise ConfigurationError(
                    f"the store at {self.path} holds vectors of {rows['embedder']} ({rows['dim']}-d); "
                    f"the configured embedder is {embedder} ({dim}-d). Use GRAPHMEM_EMBEDDER to match, "
                    "or export without vectors and import into a new store"
                )
            with self._tx() as cur:
                for key, value in (("schema", SCHEMA_VERSION), ("embedder", embedder), ("dim", str(dim))):
                    cur.execute("INSERT OR REPLACE INTO meta VALUES ('', ?, ?)", (key, value))
            self.dim, self.embedder = dim, embedder
            self._next = (rows["next_embedder"], int(rows["next_dim"])) if rows.get("next_embedder") else None
            self._data_version = self._read_data_version()

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """A connection for recall's reads: this thread's own read-only one, without the store's
        lock (the layers of a recall read at once: SQLite lets go of the GIL); the main one,
        under the lock, inside this thread's own ``atomic()`` block (only it sees the block's
        writes) and for an in-memory store."""
        own = None if self._atomic is not None and self._atomic_owner == threading.get_ident() else self._reader()
        with nullcontext() if own is not None else self._lock, self._guard():
            yield own if own is not None else self.conn

    def _reader(self) -> sqlite3.Connection | None:
        """This thread's own read-only connection (WAL lets it read beside the writer); None
        for an in-memory database, which one connection must serve."""
        if str(self.path) == ":memory:":
            return None
        conn = getattr(self._readers, "conn", None)
        if conn is None:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False, timeout=30)
            self._readers.conn = conn
            with self._lock:
                self._reader_conns.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._access.flush()
        self._closing.set()
        if self._checkpoint_thread is not None:
            self._checkpoint_thread.join()
            self._checkpoint_thread = None
        with self._lock:
            for conn in self._reader_conns:
                conn.close()
            self._reader_conns.clear()
            self._readers = threading.local()
            if self._conn is not None:
                with self._guard():
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._conn.close()
                self._conn = None
            drop_indexes(self._vindex, self._ann_root)
            self._graphs.clear()

    def _dim(self) -> int:
        if self.dim is None:
            raise StoreError("the store is not initialised: call init() first")
        return self.dim

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None or self.dim is None:
            raise StoreError("the store is not initialised: call init() first")
        return self._conn

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite error in {self.path}: {exc}") from exc

    def _read_data_version(self) -> int:
        return self._connect().execute("PRAGMA data_version").fetchone()[0]

    def _sync(self) -> None:
        """Drop caches if another connection committed since we last looked."""
        version = self._read_data_version()
        if version != self._data_version:
            self._commits += 1
            drop_indexes(self._vindex, self._ann_root)
            self._graphs.clear()
            self._decoded.clear()
            self._data_version = version

    # namespaces -------------------------------------------------------------------------
    def namespaces(self) -> list[str]:
        with self._lock, self._guard():
            return [r[0] for r in self.conn.execute("SELECT name FROM namespaces ORDER BY name")]

    def has_namespace(self, namespace: str) -> bool:
        with self._lock, self._guard():
            return self.conn.execute("SELECT 1 FROM namespaces WHERE name = ?", (namespace,)).fetchone() is not None

    def delete_namespace(self, namespace: str) -> int:
        with self._lock, self._guard():
            self._access.flush()
            with self._tx() as cur:
                rowids = [r[0] for r in cur.execute("SELECT rowid FROM nodes WHERE namespace = ?", (namespace,))]
                self._delete_rowids(cur, rowids)
                cur.execute("DELETE FROM nodes WHERE namespace = ?", (namespace,))
                for table in ("edges", "names", "meta"):
                    cur.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))  # noqa: S608 (fixed names)
                cur.execute("DELETE FROM namespaces WHERE name = ?", (namespace,))
            drop_indexes(self._vindex, self._ann_root, namespace, files=True)
            self._graphs.pop(namespace, None)
            self._decoded.clear(namespace)
            self._scrub()
            return len(rowids)

    def get_meta(self, namespace: str, key: str) -> str | None:
        with self._lock, self._guard():
            return self._meta_value(self.conn, namespace, key)

    @staticmethod
    def _meta_value(db: sqlite3.Connection | sqlite3.Cursor, namespace: str, key: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE namespace = ? AND key = ?", (namespace, key)).fetchone()
        return row[0] if row else None

    def set_meta(self, namespace: str, key: str, value: str | None) -> None:
        with self._lock, self._guard(), self._tx() as cur:
            if namespace:  # "": the store's own settings, no tenant's
                self._ensure_namespace(cur, namespace)
            if value is None:
                cur.execute("DELETE FROM meta WHERE namespace = ? AND key = ?", (namespace, key))
            else:
                cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)", (namespace, key, value))

    def claim(self, namespace: str, key: str, owner: str, seconds: float, take_from: str | None = None) -> bool:
        with self._lock, self._guard(), self._tx() as cur:  # BEGIN IMMEDIATE: one claim at a time, any process
            value = lease_value(self._meta_value(cur, namespace, key), owner, time.time(), seconds, take_from)
            if value is not None:
                self._ensure_namespace(cur, namespace)
                cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)", (namespace, key, value))
            return value is not None

    def release(self, namespace: str, key: str, owner: str) -> None:
        with self._lock, self._guard(), self._tx() as cur:
            held = self._meta_value(cur, namespace, key)
            if held is not None and lease_holder(held)[0] in (owner, None):
                cur.execute("DELETE FROM meta WHERE namespace = ? AND key = ?", (namespace, key))

    @staticmethod
    def _ensure_namespace(cur: sqlite3.Cursor, namespace: str) -> None:
        cur.execute("INSERT OR IGNORE INTO namespaces VALUES (?, ?)", (namespace, time.time()))

    # nodes ------------------------------------------------------------------------------
    def put(
        self, namespace: str, nodes: Sequence[Node], vectors: np.ndarray | None = None, edges: Sequence[Edge] = (),
        *, expect: Mapping[str, datetime | None] | None = None, claim_names: bool = True,
    ) -> None:
        if not nodes and not edges:
            return
        check_batch(namespace, nodes, edges)
        vectors, has_vec = prepare_vectors(nodes, vectors, self._dim())
        entities = [n for n in nodes if isinstance(n, Entity) and not n.merged_into] if claim_names else []
        with self._lock, self._guard():
            self._sync()
            if self._atomic is not None:
                self._atomic.add(namespace)
            with self._tx() as cur:  # BEGIN IMMEDIATE: no other writer until it commits
                for node_id, at in (expect or {}).items():
                    row = cur.execute("SELECT updated_at FROM nodes WHERE namespace = ? AND id = ?",
                                      (namespace, node_id)).fetchone()
                    if (row[0] if row else None) != _ts(at):
                        raise WriteRace(f"{node_id!r} was changed by another writer meanwhile")
                if entities:
                    stored = {n.id for n in self.get(namespace, [e.id for e in entities])}
                    new = [e for e in entities if e.id not in stored]
                    if new and (clash := name_taken(new, self.entities_named(namespace, [e.name for e in new]))):
                        raise clash
                self._ensure_namespace(cur, namespace)
                self._put_nodes(cur, namespace, nodes, vectors, has_vec)
                self._put_edges(cur, namespace, edges)
            self._after_put(namespace, nodes, vectors, has_vec)
            graph = self._graphs.get(namespace)
            if graph is not None:
                for e in edges:
                    if e.type is EdgeType.RELATES_TO:
                        graph.add_edge(e.source, e.target, key=e.key)
            self._access.maybe_flush()

    def _after_put(self, namespace: str, nodes: Sequence[Node], vectors: np.ndarray | None, has_vec) -> None:
        self._decoded.drop(namespace, (n.id for n in nodes))
        by_kind: dict[str, list[int]] = {}
        for i, node in enumerate(nodes):
            by_kind.setdefault(node.kind, []).append(i)
        for kind, idx in by_kind.items():
            index = self._vindex.get((namespace, kind))
            if index is None:
                continue  # loads lazily, from the committed rows
            with_vec = [i for i in idx if has_vec[i]]
            if with_vec:
                index.upsert(
                    [nodes[i].id for i in with_vec],
                    vectors[with_vec],
                    [_STATUS_CODE.get(getattr(nodes[i], "status", "active"), 0) for i in with_vec],
                )
            for i in idx:
                if not has_vec[i]:
                    index.set_code(nodes[i].id, _STATUS_CODE.get(getattr(nodes[i], "status", "active"), 0))

    def _hydrate(self, rows: Iterable[tuple], build: Callable[..., Any] = hydrate) -> list[Any]:
        """Records (``build``: or views of them) from rows of ``_COLS``, with this process's buffered accesses."""
        return [build(kind, data, node_id, access_count, last_at, self._access.get(ns, node_id))
                for kind, data, access_count, last_at, ns, node_id in rows]

    _COLS = "kind, data, access_count, last_accessed_at, namespace, id"

    def get(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        return self._read(namespace, ids, hydrate)

    def views(self, namespace: str, ids: Sequence[str]) -> list[RecordView]:
        """Views kept decoded where their rows were not written since (``DecodedViews``); the
        others read through ``_reading``, and kept unless a write came meanwhile."""
        if not ids:
            return []
        with self._lock, self._guard():
            self._sync()
            found, missing = self._decoded.views(namespace, ids, self._access.get)
            since = self._decoded.writes
        if missing:
            with self._reading() as conn:
                read = self._hydrate(self._rows(conn, namespace, missing), RecordView)
            with self._lock:
                self._decoded.keep(namespace, read, since)
            found.update((v.id, v) for v in read)
        return [found[i] for i in ids if i in found]

    def _rows(self, conn: sqlite3.Connection | sqlite3.Cursor, namespace: str, ids: Sequence[str],
              columns: str = _COLS) -> list[tuple]:
        """The rows (``columns``: fixed names) of ``ids``, each once."""
        out: list[tuple] = []
        for chunk in _chunks(list(dict.fromkeys(ids)), 500):
            marks = ",".join("?" * len(chunk))
            out += conn.execute(
                f"SELECT {columns} FROM nodes WHERE namespace = ? AND id IN ({marks})",  # noqa: S608
                (namespace, *chunk),
            ).fetchall()
        return out

    def _read(self, namespace: str, ids: Sequence[str], build: Callable[..., Any]) -> list[Any]:
        """``_hydrate`` of each id found, in the order asked."""
        if not ids:
            return []
        with self._lock, self._guard():
            self._sync()
            found = {n.id: n for n in self._hydrate(self._rows(self.conn, namespace, ids), build)}
            return [found[i] for i in ids if i in found]

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
        where = ["namespace = ?", "kind = ?"]
        params: list[Any] = [namespace, kind]
        if mentions is not None:
            where.append("id IN (SELECT source FROM edges WHERE namespace = ? AND target = ? AND type = 'MENTIONS')")
            params.extend([namespace, mentions])
        order = "created_at"
        if seq_range is not None:
            where.append("seq >= ? AND seq < ?")
            params.extend(seq_range)
            order = "seq"
        if statuses:
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            params.extend(Status(s).value for s in statuses)
        for column, value in (("session_id", session_id), ("category", category)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        for field, value in scoped(scope):  # a field name from SCOPE_FIELDS, never the caller's text
            where.append(f"json_extract(data, '$.{field}') = ?")
            params.append(value)
        if since is not None:
            where.append("created_at >= ?")
            params.append(since.timestamp())
        if until is not None:
            where.append("created_at < ?")
            params.append(until.timestamp())
        if ids is not None:
            if not ids:
                return []
            where.append(f"id IN ({','.join('?' * len(ids))})")
            params.extend(ids)
        direction = "DESC" if newest_first else "ASC"
        sql = (
            f"SELECT {self._COLS} FROM nodes WHERE {' AND '.join(where)} "  # noqa: S608 (fixed fragments)
            f"ORDER BY {order} {direction}, rowid {direction} LIMIT ? OFFSET ?"
        )
        with self._lock, self._guard():
            self._sync()
            return self._hydrate(self.conn.execute(sql, (*params, limit, offset)))

    def count(self, namespace: str, edges: bool = True) -> dict[str, int]:
        with self._lock, self._guard():
            out: dict[str, int] = {}
            for kind, status, n in self.conn.execute(
                "SELECT kind, status, COUNT(*) FROM nodes WHERE namespace = ? GROUP BY kind, status", (namespace,)
            ):
                out[kind] = out.get(kind, 0) + n
                if kind == "memory":
                    out[f"memory:{status}"] = n
            if edges:
                out["edges"] = self.conn.execute("SELECT COUNT(*) FROM edges WHERE namespace = ?", (namespace,)).fetchone()[0]
            return out

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._lock, self._guard():
            self._sync()
            with self._tx() as cur:
                found = self._rows(cur, namespace, ids, "rowid, id, kind")
                self._delete_rowids(cur, [r[0] for r in found])
                for _, node_id, _ in found:
                    cur.execute("DELETE FROM edges WHERE namespace = ? AND source = ?", (namespace, node_id))
                    cur.execute("DELETE FROM edges WHERE namespace = ? AND target = ?", (namespace, node_id))
                    # relation edges derived from a deleted memory go with it (partial index relations_by_memory)
                    cur.execute(
                        "DELETE FROM edges WHERE namespace = ? AND type = 'RELATES_TO' "
                        "AND json_extract(props, '$.memory_id') = ?",
                        (namespace, node_id),
                    )
                    cur.execute("DELETE FROM names WHERE namespace = ? AND entity_id = ?", (namespace, node_id))
            self._graphs.pop(namespace, None)  # reloads lazily without the deleted edges
            self._access.discard(namespace, [node_id for _, node_id, _ in found])
            self._decoded.drop(namespace, [node_id for _, node_id, _ in found])
            for _, node_id, kind in found:
                index = self._vindex.get((namespace, kind))
                if index is not None:
                    index.remove(node_id)
            if found:
                self._scrub()
            return len(found)

    @staticmethod
    def _delete_rowids(cur: sqlite3.Cursor, rowids: list[int]) -> None:
        for chunk in _chunks(rowids, 500):
            marks = ",".join("?" * len(chunk))
            for table in ("fts", "vectors", "vectors_next", "nodes"):
                cur.execute(f"DELETE FROM {table} WHERE rowid IN ({marks})", chunk)  # noqa: S608 (fixed names)

    def vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock, self._guard():
            for chunk in _chunks(list(ids), 500):
                marks = ",".join("?" * len(chunk))
                for node_id, blob in self.conn.execute(
                    f"SELECT n.id, v.vec FROM nodes n JOIN vectors v ON v.rowid = n.rowid "  # noqa: S608
                    f"WHERE n.namespace = ? AND n.id IN ({marks})",
                    (namespace, *chunk),
                ):
                    out[node_id] = np.frombuffer(blob, dtype=np.float32).copy()
        return out

    # search (the rest is SearchMixin) ----------------------------------------------------
    def find_entities(self, namespace: str, names: Iterable[str]) -> dict[str, Entity]:
        """The oldest entity of each name (ids are time-ordered), only those read: a first
        name in a 100k store is the alias of ~50 people, read whole before (~0.7 ms a recall)."""
        norms = list(normalised(names))
        with self._lock, self._guard():
            first: dict[str, str] = {}
            for chunk in _chunks(norms, 500):
                marks = ",".join("?" * len(chunk))
                first.update(self.conn.execute(
                    f"SELECT m.norm, min(m.entity_id) FROM names m JOIN nodes n ON n.namespace = m.namespace "  # noqa: S608
                    f"AND n.id = m.entity_id WHERE m.namespace = ? AND m.norm IN ({marks}) GROUP BY m.norm",
                    (namespace, *chunk),
                ))
            entities = {e.id: e for e in self.get(namespace, list(set(first.values())))}
        return {norm: entities[i] for norm, i in first.items() if i in entities}

    def entities_named(self, namespace: str, names: Iterable[str]) -> dict[str, list[Entity]]:
        norms = list(normalised(names))
        with self._lock, self._guard():
            hits: dict[str, list[str]] = {}
            for chunk in _chunks(norms, 500):
                marks = ",".join("?" * len(chunk))
                for norm, entity_id in self.conn.execute(
                    f"SELECT norm, entity_id FROM names WHERE namespace = ? AND norm IN ({marks})",  # noqa: S608
                    (namespace, *chunk),
                ):
                    hits.setdefault(norm, []).append(entity_id)
            entities = {e.id: e for e in self.get(namespace, [i for ids in hits.values() for i in ids])}
        return named_lists(hits, entities)

    def pending_vectors(self, kind: NodeKind, limit: int) -> list[Node]:
        with self._lock, self._guard():
            self._sync()
            rows = self.conn.execute(
                f"SELECT {self._COLS} FROM nodes n WHERE kind = ? AND NOT EXISTS "  # noqa: S608 (fixed columns)
                "(SELECT 1 FROM vectors v WHERE v.rowid = n.rowid) ORDER BY rowid LIMIT ?",
                (kind, limit),
            )
            return self._hydrate(rows)

    # access -----------------------------------------------------------------------------
    def record_access(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        self._access.add(namespace, ids, at)

    def _write_access(self, pending: Accesses) -> None:
        with self._lock:
            if self._conn is None:
                return
            with self._guard(), self._tx() as cur:
                cur.executemany(
                    "UPDATE nodes SET access_count = access_count + ?, last_accessed_at = MAX(COALESCE(last_accessed_at, 0), ?)"
                    " WHERE namespace = ? AND id = ?",
                    [(count, at.timestamp(), ns, node_id) for (ns, node_id), (count, at) in pending.items()],
                )
            for ns, node_id in pending:  # their counts moved from the buffer into the rows
                self._decoded.drop(ns, (node_id,))
