"""The embedded default backend: one SQLite file, no server.

SQLite (WAL) is the durable source of truth, with FTS5 for BM25 keyword search over text
pre-segmented by ``graphmem.text`` (so Chinese words are found). Vectors are stored as
float32 blobs and searched exactly with numpy from a per-(namespace, kind) matrix loaded
on first use. The entity-relation graph is held in networkx for multi-hop traversal.

In-memory caches follow this process's own writes incrementally; writes from another
process or connection are noticed through ``PRAGMA data_version`` and drop the caches,
which then reload lazily. One connection serves all threads under a lock.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from ..errors import ConfigurationError, StoreError, ValidationError
from ..models import Edge, EdgeType, Entity, Node, NodeKind, Status
from ..text import fts_query, index_terms, normalise_name, query_terms
from .base import Direction, check_batch, hydrate, node_text, prepare_vectors, scope_token, unit_query

log = logging.getLogger(__name__)

SCHEMA_VERSION = "2"
_STATUS_CODE = {"active": 0, "superseded": 1, "archived": 2}
_DELETED = 255
_KEYWORD_DOC_BUDGET = 3000  # documents BM25 may score per query, beyond its rarest term
_CHECKPOINT_SECONDS = 2.0
_ACCESS_FLUSH_EVERY = 512  # buffered accesses before a write
_ACCESS_FLUSH_SECONDS = 5.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (namespace, key));
CREATE TABLE IF NOT EXISTS namespaces (name TEXT PRIMARY KEY, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    rowid INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
    status TEXT, session_id TEXT, category TEXT, seq INTEGER,
    created_at REAL NOT NULL, updated_at REAL NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0, last_accessed_at REAL,
    data TEXT NOT NULL,
    UNIQUE (namespace, id));
CREATE INDEX IF NOT EXISTS nodes_by_kind ON nodes (namespace, kind, status, created_at);
CREATE INDEX IF NOT EXISTS nodes_by_session ON nodes (namespace, session_id, kind, created_at);
CREATE INDEX IF NOT EXISTS nodes_by_seq ON nodes (namespace, session_id, seq) WHERE seq IS NOT NULL;
CREATE TABLE IF NOT EXISTS vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS names (
    namespace TEXT NOT NULL, norm TEXT NOT NULL, entity_id TEXT NOT NULL,
    PRIMARY KEY (namespace, norm, entity_id));
CREATE INDEX IF NOT EXISTS names_by_entity ON names (namespace, entity_id);
CREATE TABLE IF NOT EXISTS edges (
    namespace TEXT NOT NULL, source TEXT NOT NULL, type TEXT NOT NULL, target TEXT NOT NULL,
    key TEXT NOT NULL DEFAULT '', props TEXT NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY (namespace, source, type, target, key));
CREATE INDEX IF NOT EXISTS edges_by_target ON edges (namespace, target, type);
CREATE INDEX IF NOT EXISTS relations_by_memory ON edges (namespace, json_extract(props, '$.memory_id'))
    WHERE type = 'RELATES_TO';
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    scope, body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, 'row');
"""


def _ts(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


class _VectorIndex:
    """Exact cosine search over unit rows of one (namespace, kind)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids: list[str | None] = []
        self.pos: dict[str, int] = {}
        self.mat = np.zeros((0, dim), dtype=np.float32)
        self.codes = np.zeros(0, dtype=np.uint8)
        self.size = 0
        self.deleted = 0

    def _grow(self, need: int) -> None:
        cap = self.mat.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap * 2, 256)
        mat = np.zeros((new_cap, self.dim), dtype=np.float32)
        mat[: self.size] = self.mat[: self.size]
        codes = np.full(new_cap, _DELETED, dtype=np.uint8)
        codes[: self.size] = self.codes[: self.size]
        self.mat, self.codes = mat, codes

    def upsert(self, ids: Sequence[str], vecs: np.ndarray, codes: Sequence[int]) -> None:
        self._grow(self.size + len(ids))
        for i, node_id in enumerate(ids):
            p = self.pos.get(node_id)
            if p is None:
                p = self.size
                self.size += 1
                self.ids.append(node_id)
                self.pos[node_id] = p
            self.mat[p] = vecs[i]
            self.codes[p] = codes[i]

    def set_code(self, node_id: str, code: int) -> None:
        p = self.pos.get(node_id)
        if p is not None:
            self.codes[p] = code

    def remove(self, node_id: str) -> None:
        p = self.pos.pop(node_id, None)
        if p is None:
            return
        self.codes[p] = _DELETED
        self.ids[p] = None
        self.deleted += 1
        if self.deleted > 1024 and self.deleted > self.size // 2:
            self._compact()

    def _compact(self) -> None:
        keep = [p for p in range(self.size) if self.ids[p] is not None]
        self.mat[: len(keep)] = self.mat[keep]
        self.codes[: len(keep)] = self.codes[keep]
        self.codes[len(keep) : self.size] = _DELETED
        self.ids = [self.ids[p] for p in keep]
        self.pos = {node_id: i for i, node_id in enumerate(self.ids)}
        self.size = len(keep)
        self.deleted = 0

    def search(self, query: np.ndarray, k: int, codes: Sequence[int]) -> list[tuple[str, float]]:
        if self.size == 0 or k <= 0:
            return []
        sims = self.mat[: self.size] @ query
        allowed = np.isin(self.codes[: self.size], np.asarray(codes, dtype=np.uint8))
        sims = np.where(allowed, sims, -np.inf)
        n_ok = int(allowed.sum())
        k = min(k, n_ok)
        if k == 0:
            return []
        top = np.argpartition(-sims, k - 1)[:k] if k < self.size else np.arange(self.size)
        top = top[np.argsort(-sims[top], kind="stable")][:k]
        return [(self.ids[p], float(sims[p])) for p in top]


class EmbeddedStore:
    """SQLite + networkx + numpy in one file. See the module docstring."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path) if str(path) != ":memory:" else Path(":memory:")
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self.dim: int | None = None
        self.embedder: str | None = None
        self._vindex: dict[tuple[str, str], _VectorIndex] = {}
        self._graphs: dict[str, nx.MultiDiGraph] = {}
        self._pending_access: dict[tuple[str, str], tuple[int, float]] = {}
        self._last_flush = time.monotonic()
        self._data_version: int | None = None
        self._wrote = threading.Event()
        self._closing = threading.Event()
        self._checkpoint_thread: threading.Thread | None = None
        self._readers = threading.local()  # per-thread read connections for lock-free FTS queries
        self._reader_conns: list[sqlite3.Connection] = []

    # lifecycle ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            if str(self.path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=30000")
                conn.execute("PRAGMA foreign_keys=ON")
                # WAL checkpoints run in a background thread on their own connection, so a
                # commit on the request path never pays for copying pages back (see _checkpointer)
                conn.execute("PRAGMA wal_autocheckpoint=0")
                conn.execute("PRAGMA journal_size_limit=67108864")  # WAL file trimmed to 64 MiB after checkpoints
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
            self._conn = conn
        return self._conn

    def init(self, *, embedder: str, dim: int) -> None:
        with self._lock, self._guard():
            conn = self._connect()
            conn.executescript(_SCHEMA)
            rows = dict(conn.execute("SELECT key, value FROM meta WHERE namespace = ''").fetchall())
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
            self._data_version = self._read_data_version()

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

    def _start_checkpointer(self) -> None:
        if self._checkpoint_thread is None and str(self.path) != ":memory:":
            self._closing.clear()
            self._checkpoint_thread = threading.Thread(target=self._checkpointer, name="graphmem-checkpoint", daemon=True)
            self._checkpoint_thread.start()

    def _checkpointer(self) -> None:
        """Copy committed WAL pages into the database file every few seconds after writes. A
        checkpoint changes no data, so it leaves data_version (and every cache) alone."""
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        try:
            while not self._closing.is_set():
                if self._wrote.wait(_CHECKPOINT_SECONDS) and not self._closing.wait(_CHECKPOINT_SECONDS):
                    self._wrote.clear()
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as exc:  # the next write restarts it; a failed checkpoint loses nothing
            log.warning("WAL checkpoint failed: %s", exc)
        finally:
            conn.close()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._flush_access()
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
            self._vindex.clear()
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

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        conn = self._connect()
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        else:
            cur.execute("COMMIT")
            self._wrote.set()
            self._start_checkpointer()

    def _read_data_version(self) -> int:
        return self._connect().execute("PRAGMA data_version").fetchone()[0]

    def _sync(self) -> None:
        """Drop caches if another connection committed since we last looked."""
        version = self._read_data_version()
        if version != self._data_version:
            self._vindex.clear()
            self._graphs.clear()
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
            self._flush_access()
            with self._tx() as cur:
                rowids = [r[0] for r in cur.execute("SELECT rowid FROM nodes WHERE namespace = ?", (namespace,))]
                self._delete_rowids(cur, rowids)
                cur.execute("DELETE FROM nodes WHERE namespace = ?", (namespace,))
                for table in ("edges", "names", "meta"):
                    cur.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))  # noqa: S608 (fixed names)
                cur.execute("DELETE FROM namespaces WHERE name = ?", (namespace,))
            for key in [k for k in self._vindex if k[0] == namespace]:
                del self._vindex[key]
            self._graphs.pop(namespace, None)
            return len(rowids)

    def get_meta(self, namespace: str, key: str) -> str | None:
        with self._lock, self._guard():
            row = self.conn.execute(
                "SELECT value FROM meta WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
            return row[0] if row else None

    def set_meta(self, namespace: str, key: str, value: str | None) -> None:
        with self._lock, self._guard(), self._tx() as cur:
            self._ensure_namespace(cur, namespace)
            if value is None:
                cur.execute("DELETE FROM meta WHERE namespace = ? AND key = ?", (namespace, key))
            else:
                cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)", (namespace, key, value))

    @staticmethod
    def _ensure_namespace(cur: sqlite3.Cursor, namespace: str) -> None:
        cur.execute("INSERT OR IGNORE INTO namespaces VALUES (?, ?)", (namespace, time.time()))

    # nodes ------------------------------------------------------------------------------
    def put(
        self, namespace: str, nodes: Sequence[Node], vectors: np.ndarray | None = None, edges: Sequence[Edge] = ()
    ) -> None:
        if not nodes and not edges:
            return
        check_batch(namespace, nodes, edges)
        vectors, has_vec = prepare_vectors(nodes, vectors, self._dim())
        with self._lock, self._guard():
            self._sync()
            with self._tx() as cur:
                self._ensure_namespace(cur, namespace)
                for i, node in enumerate(nodes):
                    self._put_one(cur, namespace, node, vectors[i] if has_vec[i] else None)
                self._put_edges(cur, namespace, edges)
            self._after_put(namespace, nodes, vectors, has_vec)
            graph = self._graphs.get(namespace)
            if graph is not None:
                for e in edges:
                    if e.type is EdgeType.RELATES_TO:
                        graph.add_edge(e.source, e.target, key=e.key)
            self._maybe_flush_access()

    def _put_one(self, cur: sqlite3.Cursor, namespace: str, node: Node, vec: np.ndarray | None) -> None:
        data = node.model_dump(mode="json", exclude={"access_count", "last_accessed_at"})
        status = data.get("status")
        row = cur.execute("SELECT rowid FROM nodes WHERE namespace = ? AND id = ?", (namespace, node.id)).fetchone()
        values = (
            namespace, node.id, node.kind, status, getattr(node, "session_id", None), getattr(node, "category", None),
            node.seq if node.kind == "message" else None, _ts(node.created_at), _ts(node.updated_at), getattr(node, "access_count", 0),
            _ts(getattr(node, "last_accessed_at", None)), json.dumps(data, ensure_ascii=False),
        )
        if row is None:
            cur.execute(
                "INSERT INTO nodes (namespace, id, kind, status, session_id, category, seq, created_at, updated_at,"
                " access_count, last_accessed_at, data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                values,
            )
            rowid = cur.lastrowid
        else:
            rowid = row[0]
            cur.execute(
                "UPDATE nodes SET namespace=?, id=?, kind=?, status=?, session_id=?, category=?, seq=?, created_at=?,"
                " updated_at=?, access_count=?, last_accessed_at=?, data=? WHERE rowid=?",
                (*values, rowid),
            )
            cur.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            self._pending_access.pop((namespace, node.id), None)
        text = node_text(node)
        if text:
            cur.execute(
                "INSERT INTO fts (rowid, scope, body) VALUES (?, ?, ?)",
                (rowid, scope_token(namespace, node.kind, status), index_terms(text)),
            )
        if vec is not None:
            cur.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?)", (rowid, vec.astype(np.float32).tobytes()))
        if node.kind == "entity":
            cur.execute("DELETE FROM names WHERE namespace = ? AND entity_id = ?", (namespace, node.id))
            for name in {normalise_name(n) for n in [node.name, *node.aliases]} - {""}:
                cur.execute("INSERT OR IGNORE INTO names VALUES (?, ?, ?)", (namespace, name, node.id))

    def _after_put(self, namespace: str, nodes: Sequence[Node], vectors: np.ndarray | None, has_vec) -> None:
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

    def _hydrate(self, rows: Iterable[tuple]) -> list[Node]:
        return [hydrate(kind, data, node_id, access_count, last_at, self._pending_access.get((ns, node_id)))
                for kind, data, access_count, last_at, ns, node_id in rows]

    _COLS = "kind, data, access_count, last_accessed_at, namespace, id"

    def get(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        if not ids:
            return []
        with self._lock, self._guard():
            self._sync()
            found: dict[str, Node] = {}
            for chunk in _chunks(list(dict.fromkeys(ids)), 500):
                marks = ",".join("?" * len(chunk))
                rows = self.conn.execute(
                    f"SELECT {self._COLS} FROM nodes WHERE namespace = ? AND id IN ({marks})",  # noqa: S608
                    (namespace, *chunk),
                )
                found.update((n.id, n) for n in self._hydrate(rows))
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
    ) -> list[Node]:
        where = ["namespace = ?", "kind = ?"]
        params: list[Any] = [namespace, kind]
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

    def count(self, namespace: str) -> dict[str, int]:
        with self._lock, self._guard():
            out: dict[str, int] = {}
            for kind, status, n in self.conn.execute(
                "SELECT kind, status, COUNT(*) FROM nodes WHERE namespace = ? GROUP BY kind, status", (namespace,)
            ):
                out[kind] = out.get(kind, 0) + n
                if kind == "memory":
                    out[f"memory:{status}"] = n
            out["edges"] = self.conn.execute("SELECT COUNT(*) FROM edges WHERE namespace = ?", (namespace,)).fetchone()[0]
            return out

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._lock, self._guard():
            self._sync()
            with self._tx() as cur:
                found: list[tuple[int, str, str]] = []
                for chunk in _chunks(list(dict.fromkeys(ids)), 500):
                    marks = ",".join("?" * len(chunk))
                    found += cur.execute(
                        f"SELECT rowid, id, kind FROM nodes WHERE namespace = ? AND id IN ({marks})",  # noqa: S608
                        (namespace, *chunk),
                    ).fetchall()
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
                    self._pending_access.pop((namespace, node_id), None)
            self._graphs.pop(namespace, None)  # reloads lazily without the deleted edges
            for _, node_id, kind in found:
                index = self._vindex.get((namespace, kind))
                if index is not None:
                    index.remove(node_id)
            return len(found)

    @staticmethod
    def _delete_rowids(cur: sqlite3.Cursor, rowids: list[int]) -> None:
        for chunk in _chunks(rowids, 500):
            marks = ",".join("?" * len(chunk))
            for table in ("fts", "vectors", "nodes"):
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

    # search -----------------------------------------------------------------------------
    def _index(self, namespace: str, kind: str) -> _VectorIndex:
        index = self._vindex.get((namespace, kind))
        if index is None:
            index = _VectorIndex(self._dim())
            ids, codes, blobs = [], [], []
            for node_id, status, blob in self.conn.execute(
                "SELECT n.id, n.status, v.vec FROM nodes n JOIN vectors v ON v.rowid = n.rowid "
                "WHERE n.namespace = ? AND n.kind = ?",
                (namespace, kind),
            ):
                ids.append(node_id)
                codes.append(_STATUS_CODE.get(status, 0))
                blobs.append(blob)
            if ids:
                mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), self.dim)
                index.upsert(ids, mat, codes)
            self._vindex[(namespace, kind)] = index
        return index

    def vector_search(
        self, namespace: str, kind: NodeKind, vector: np.ndarray, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        q = unit_query(vector, self.dim)
        with self._lock, self._guard():
            self._sync()
            index = self._index(namespace, kind)
            codes = [_STATUS_CODE[Status(s).value] for s in statuses]
            return index.search(q, k, codes)

    def keyword_search(
        self, namespace: str, kind: NodeKind, text: str, k: int, statuses: Sequence[Status]
    ) -> list[tuple[str, float]]:
        terms = query_terms(text)
        if not terms or k <= 0:
            return []
        scopes = [scope_token(namespace, kind, Status(x).value) for x in statuses]
        reader = self._reader()
        with self._guard():
            if reader is None:
                with self._lock:
                    return self._keyword(self.conn, terms, scopes, namespace, k)
            return self._keyword(reader, terms, scopes, namespace, k)  # no store lock: runs beside vector work

    @staticmethod
    def _keyword(conn: sqlite3.Connection, terms: list[str], scopes: list[str], namespace: str, k: int):
        # BM25 costs time in proportion to the documents its terms match, and common terms
        # rank least. Like a common-terms query, BM25 runs on the rarest terms while their
        # document counts stay within a budget (the rarest always runs); the others still
        # count through the keyword coverage of recall. Counts come from the FTS5 vocabulary.
        marks = ",".join("?" * len(terms))
        df = dict(conn.execute(f"SELECT term, doc FROM fts_vocab WHERE term IN ({marks})", terms))  # noqa: S608
        present = sorted((t for t in terms if df.get(t, 0) > 0), key=lambda t: df[t])
        kept, total = [], 0
        for t in present:
            if kept and total + df[t] > _KEYWORD_DOC_BUDGET:
                break
            kept.append(t)
            total += df[t]
        match = fts_query(kept)
        if match is None:
            return []
        scope_expr = " OR ".join(f'scope:"{s}"' for s in scopes)
        sql = (
            "SELECT n.id, s.score FROM (SELECT rowid, -bm25(fts, 0.0, 1.0) AS score FROM fts WHERE fts MATCH ? "
            "ORDER BY bm25(fts, 0.0, 1.0) LIMIT ?) s JOIN nodes n ON n.rowid = s.rowid "
            "WHERE n.namespace = ? ORDER BY s.score DESC"
        )
        return [(i, float(score)) for i, score in conn.execute(sql, (f"({scope_expr}) AND ({match})", k, namespace))]

    def find_entities(self, namespace: str, names: Iterable[str]) -> dict[str, Entity]:
        norms = list({normalise_name(n) for n in names} - {""})
        if not norms:
            return {}
        with self._lock, self._guard():
            hits: dict[str, str] = {}
            for chunk in _chunks(norms, 500):
                marks = ",".join("?" * len(chunk))
                for norm, entity_id in self.conn.execute(
                    f"SELECT norm, entity_id FROM names WHERE namespace = ? AND norm IN ({marks})",  # noqa: S608
                    (namespace, *chunk),
                ):
                    hits.setdefault(norm, entity_id)
            entities = {e.id: e for e in self.get(namespace, list(set(hits.values())))}
            return {norm: entities[eid] for norm, eid in hits.items() if eid in entities}

    # edges ------------------------------------------------------------------------------
    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        self.put(namespace, [], edges=edges)

    @staticmethod
    def _put_edges(cur: sqlite3.Cursor, namespace: str, edges: Sequence[Edge]) -> None:
        if not edges:
            return
        ends = list({e.source for e in edges} | {e.target for e in edges})
        present: set[str] = set()
        for chunk in _chunks(ends, 500):
            marks = ",".join("?" * len(chunk))
            present |= {r[0] for r in cur.execute(
                f"SELECT id FROM nodes WHERE namespace = ? AND id IN ({marks})", (namespace, *chunk))}  # noqa: S608
        missing = [x for x in ends if x not in present]
        if missing:
            raise ValidationError(f"edge endpoint {missing[0]!r} does not exist in namespace {namespace!r}")
        cur.executemany(
            "INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(namespace, e.source, e.type.value, e.target, e.key, json.dumps(e.props, ensure_ascii=False),
              e.created_at.timestamp()) for e in edges],
        )

    def delete_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        with self._lock, self._guard():
            self._sync()
            with self._tx() as cur:
                cur.executemany(
                    "DELETE FROM edges WHERE namespace = ? AND source = ? AND type = ? AND target = ? AND key = ?",
                    [(namespace, e.source, e.type.value, e.target, e.key) for e in edges],
                )
            graph = self._graphs.get(namespace)
            if graph is not None:
                for e in edges:
                    if e.type is EdgeType.RELATES_TO and graph.has_edge(e.source, e.target, key=e.key):
                        graph.remove_edge(e.source, e.target, key=e.key)

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
        type_sql, type_params = "", []
        if types:
            type_sql = f" AND type IN ({','.join('?' * len(types))})"
            type_params = [EdgeType(t).value for t in types]
        columns = {"out": ["source"], "in": ["target"], "both": ["source", "target"]}[direction]
        out: dict[tuple, Edge] = {}
        with self._lock, self._guard():
            self._sync()
            for column in columns:
                for chunk in _chunks(list(ids), 500):
                    marks = ",".join("?" * len(chunk))
                    for row in self.conn.execute(
                        f"SELECT source, type, target, key, props, created_at FROM edges "  # noqa: S608
                        f"WHERE namespace = ? AND {column} IN ({marks}){type_sql}",
                        (namespace, *chunk, *type_params),
                    ):
                        source, etype, target, key, props, created = row
                        out[(source, etype, target, key)] = Edge(
                            namespace=namespace, source=source, type=etype, target=target, key=key,
                            props=json.loads(props), created_at=datetime.fromtimestamp(created, tz=timezone.utc),
                        )
        return sorted(out.values(), key=lambda e: e.created_at)

    def _graph(self, namespace: str) -> nx.MultiDiGraph:
        graph = self._graphs.get(namespace)
        if graph is None:
            graph = nx.MultiDiGraph()
            for source, target, key in self.conn.execute(
                "SELECT source, target, key FROM edges WHERE namespace = ? AND type = ?",
                (namespace, EdgeType.RELATES_TO.value),
            ):
                graph.add_edge(source, target, key=key)
            self._graphs[namespace] = graph
        return graph

    def neighbours(self, namespace: str, entity_ids: Sequence[str], depth: int, limit: int = 200) -> dict[str, int]:
        with self._lock, self._guard():
            self._sync()
            graph = self._graph(namespace)
            hops = {e: 0 for e in entity_ids}
            frontier = [e for e in entity_ids if e in graph]
            for hop in range(1, depth + 1):
                nxt = []
                for node in frontier:
                    for other in (*graph.successors(node), *graph.predecessors(node)):
                        if other not in hops:
                            if len(hops) >= limit:
                                return hops
                            hops[other] = hop
                            nxt.append(other)
                frontier = nxt
            return hops

    def mentioned_by(
        self, namespace: str, entity_ids: Sequence[str], kind: NodeKind, statuses: Sequence[Status], limit: int
    ) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        status_marks = ",".join("?" * len(statuses))
        with self._lock, self._guard():
            self._sync()
            for chunk in _chunks(list(entity_ids), 400):
                if len(out) >= limit:
                    break
                marks = ",".join("?" * len(chunk))
                out += self.conn.execute(
                    # edges by target drive the join; left alone, the planner scans the namespace's edges
                    "SELECT e.source, e.target FROM edges e INDEXED BY edges_by_target "
                    "CROSS JOIN nodes n ON n.namespace = e.namespace AND n.id = e.source "
                    f"WHERE e.namespace = ? AND e.type = ? AND e.target IN ({marks}) "  # noqa: S608 (placeholders only)
                    f"AND n.kind = ? AND n.status IN ({status_marks}) LIMIT ?",
                    (namespace, EdgeType.MENTIONS.value, *chunk, kind, *(Status(x).value for x in statuses),
                     limit - len(out)),
                ).fetchall()
        return out

    def vector_scores(
        self, namespace: str, kind: NodeKind, ids: Sequence[str], vector: np.ndarray
    ) -> dict[str, float]:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        q = q / (np.linalg.norm(q) or 1.0)
        with self._lock, self._guard():
            self._sync()
            index = self._index(namespace, kind)
            pos = [(i, index.pos[i]) for i in ids if i in index.pos]
            if not pos:
                return {}
            sims = index.mat[[p for _, p in pos]] @ q
            return {i: float(s) for (i, _), s in zip(pos, sims)}

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
        stamp = at.timestamp()
        with self._lock:
            for node_id in ids:
                count, _ = self._pending_access.get((namespace, node_id), (0, stamp))
                self._pending_access[(namespace, node_id)] = (count + 1, stamp)
            self._maybe_flush_access()

    def _maybe_flush_access(self) -> None:
        if len(self._pending_access) >= _ACCESS_FLUSH_EVERY or (
            self._pending_access and time.monotonic() - self._last_flush > _ACCESS_FLUSH_SECONDS
        ):
            self._flush_access()

    def _flush_access(self) -> None:
        if not self._pending_access or self._conn is None:
            return
        pending, self._pending_access = self._pending_access, {}
        with self._guard(), self._tx() as cur:
            cur.executemany(
                "UPDATE nodes SET access_count = access_count + ?, last_accessed_at = MAX(COALESCE(last_accessed_at, 0), ?)"
                " WHERE namespace = ? AND id = ?",
                [(count, stamp, ns, node_id) for (ns, node_id), (count, stamp) in pending.items()],
            )
        self._last_flush = time.monotonic()


def _chunks(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
