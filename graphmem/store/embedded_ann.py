"""The embedded store's approximate vector search: a usearch HNSW graph per (namespace, kind)
once a kind holds ``threshold`` vectors, kept beside the exact matrix of a ``VectorIndex``.

SQLite stays the source of truth and the exact matrix stays in memory (exact cosines, small
kinds, filters the graph cannot serve). The graph is a cache: built in a background thread
(searches scan exactly until it is ready), saved beside the store's file (``<file>.ann/``,
written to a temporary name and renamed, so a crash leaves the old file or the new one) and
checked vector by vector against SQLite when it is loaded, so a stale or foreign file can
cost time but never a wrong answer. Vectors written after the graph was built are
"uncovered": scanned exactly beside the graph's hits until a background merge adds them.
Every hit is rescored against the exact matrix, so scores are exact and only the candidate
list is approximate.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path

import numpy as np

from .base import VECTOR_KINDS

log = logging.getLogger(__name__)

ADD_CHUNK = 1024  # vectors added per lock hold while merging: a search waits for one chunk at most
SYNC_BELOW = 2048  # builds and merges this small run inline (tests and small kinds: deterministic)
# HNSW shape: on the benchmark's 100k memories (50k distinct sentences of 8 templates, dense
# clusters), 300 questions, tie-aware recall of the exact top 50: 16 links / 128 at build
# 0.989 mean (min 0.42), 32 / 128 0.996 (0.58), 32 / 256 0.9997 (min 0.92; build 23 s, search
# 1.8 ms); a candidate list of 512 at search 0.9975 (0.80), 256 0.991 (0.52)
CONNECTIVITY = 32
EXPANSION_ADD = 256
EXPANSION_SEARCH = 1024
# ...and a graph of more nodes searches wider: at 1M memories (194k distinct vectors) the
# benchmark's questions kept 0.901 of the exact top 10 with 1,024 candidates, 0.973 with
# 2,048, 1.000 with 3,037 (a node count / 64); 100k (50k nodes) keeps 1,024 and 1.000
NODES_PER_CANDIDATE = 64


def ann_file(root: Path, namespace: str, kind: str) -> Path:
    """The graph file of one (namespace, kind) under ``root``: a hash names it, since a
    namespace may hold any characters."""
    digest = hashlib.sha256(f"{namespace}\x00{kind}".encode()).hexdigest()[:24]
    return root / f"{kind}-{digest}.usearch"


class Ann:
    """A usearch index over distinct vectors whose integer keys map to the node ids holding
    each (keys are never reused). A vector stored under several ids (a sentence said again)
    is one graph node: identical vectors crowd each other's HNSW links (on the benchmark's
    100k memories, 50k distinct, recall of the exact top 50 0.980 -> 0.989, build 31 -> 12 s)."""

    def __init__(self, dim: int) -> None:
        from usearch.index import Index

        self.dim = dim
        self.index = Index(ndim=dim, metric="cos", dtype="f16", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                           expansion_search=EXPANSION_SEARCH)
        self.ids: list[list[str]] = []  # key -> the ids holding its vector (none: removed)
        self.key_of: dict[str, int] = {}
        self.digests: dict[int, bytes] = {}  # live key -> its vector's digest
        self.key_by_digest: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.key_of)

    @property
    def nodes(self) -> int:
        """Graph nodes: distinct vectors held."""
        return len(self.digests)

    def add(self, ids: list[str], vecs: np.ndarray) -> None:
        self.drop(ids)
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        keys, rows = [], []
        for node_id, row in zip(ids, vecs):
            digest = _digest(row)
            key = self.key_by_digest.get(digest)
            if key is None:
                key = len(self.ids)
                self.ids.append([])
                self._name(key, digest)
                keys.append(key)
                rows.append(row)
            self.ids[key].append(node_id)
            self.key_of[node_id] = key
        if keys:
            self.index.add(np.asarray(keys, dtype=np.uint64), np.stack(rows), threads=1)

    def _name(self, key: int, digest: bytes) -> None:
        self.digests[key] = digest
        self.key_by_digest.setdefault(digest, key)

    def drop(self, ids) -> None:
        emptied = []
        for node_id in ids:
            key = self.key_of.pop(node_id, None)
            if key is None:
                continue
            self.ids[key].remove(node_id)
            if not self.ids[key]:
                emptied.append(key)
                digest = self.digests.pop(key, None)
                if digest is not None and self.key_by_digest.get(digest) == key:
                    del self.key_by_digest[digest]
        if emptied:
            self.index.remove(np.asarray(emptied, dtype=np.uint64))

    def search(self, query: np.ndarray, n: int) -> list[list[str]]:
        """The ``n`` nearest graph nodes, each as the ids holding its vector."""
        wide = min(max(EXPANSION_SEARCH, self.nodes // NODES_PER_CANDIDATE), 4 * EXPANSION_SEARCH)
        if self.index.expansion_search != wide:
            self.index.expansion_search = wide
        found = self.index.search(query, n, threads=1)
        return [self.ids[k] for k in found.keys.tolist()]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp_index, tmp_ids = path.with_suffix(".usearch.tmp"), path.with_suffix(".ids.tmp")
        self.index.save(str(tmp_index))
        tmp_ids.write_text(json.dumps({"dim": self.dim, "groups": self.ids}), encoding="utf-8")
        for tmp in (tmp_index, tmp_ids):
            os.chmod(tmp, 0o600)  # vectors of the store's texts: as private as the store
        os.replace(tmp_ids, path.with_suffix(".ids"))  # ids first: an index with unknown keys is never read
        os.replace(tmp_index, path)

    @classmethod
    def load(cls, path: Path, dim: int) -> Ann | None:
        """The saved graph, or None when it is missing, unreadable or of another dimension. Its
        vectors are only known once ``check`` has compared them with the store's."""
        try:
            meta = json.loads(path.with_suffix(".ids").read_text(encoding="utf-8"))
            if meta.get("dim") != dim or not path.exists():
                return None
            ann = cls(dim)
            ann.index.load(str(path))
            # "ids": a graph saved before vectors were shared, one id (or null) per key
            groups = meta["groups"] if "groups" in meta else [[i] if i is not None else [] for i in meta["ids"]]
            ann.ids = [list(map(str, g)) for g in groups]
            keys = ann.index.keys
            present = np.asarray(keys, dtype=np.uint64) if len(keys) else np.zeros(0, dtype=np.uint64)
            if present.size and int(present.max()) >= len(ann.ids):
                return None  # the index and its ids are from different saves
            ann.key_of = {i: k for k in present.tolist() for i in ann.ids[k]}
            return ann
        except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
            log.info("vector graph %s not used (%s); it is rebuilt", path, exc)
            return None

    def check(self, ids: list[str], mat: np.ndarray) -> list[str]:
        """Ids (rows of ``mat``) whose vector the graph holds as it is: the rest are dropped.
        The graph's nodes learn the digests of the vectors they stand for (``add`` shares them)."""
        good: list[str] = []
        for start in range(0, len(ids), 8192):
            chunk = ids[start : start + 8192]
            held = [i for i in chunk if i in self.key_of]
            if not held:
                continue
            keys = [self.key_of[i] for i in held]
            stored = self.index.get(np.asarray(keys, dtype=np.uint64), dtype="f32")
            rows = mat[start : start + len(chunk)][[j for j, i in enumerate(chunk) if i in self.key_of]]
            same = np.max(np.abs(np.asarray(stored, dtype=np.float32) - rows), axis=1) <= 4e-3
            for node_id, key, row, ok in zip(held, keys, rows, same.tolist()):
                if ok:
                    good.append(node_id)
                    if key not in self.digests:
                        self._name(key, _digest(row))
        keep = set(good)
        self.drop([i for i in list(self.key_of) if i not in keep])
        return good


def _digest(row: np.ndarray) -> bytes:
    """A vector's identity (its float32 bytes, hashed): equal vectors share a graph node."""
    return hashlib.blake2b(np.ascontiguousarray(row, dtype=np.float32).tobytes(), digest_size=16).digest()


class AnnState:
    """The approximate side of one ``VectorIndex``: the graph, what it does not cover, and the
    background job that builds, loads or extends it. ``lock`` is the ``VectorIndex``'s lock
    (every call of the index holds it); ``busy`` is held while the graph itself changes."""

    def __init__(self, threshold: int, path: Path | None, lock: threading.RLock) -> None:
        self.threshold, self.path, self.lock = threshold, path, lock
        self.ann: Ann | None = None
        self.uncovered: set[str] = set()  # ids whose current vector the graph lacks
        self.touched: set[str] = set()  # ids written while a job runs
        self.gone: set[str] = set()  # ids removed since the last merge
        self.busy = threading.Lock()
        self.job: threading.Thread | None = None
        self.epoch = 0  # bumped when positions move (a compaction): a job's snapshot is void
        self.closed = False

    # called with the index's lock held --------------------------------------------------
    def wrote(self, ids) -> None:
        if self.ann is None and self.job is None:
            return  # no graph yet: the first build takes every row there is
        self.uncovered.update(ids)
        if self.job is not None:
            self.touched.update(ids)

    def removed(self, node_id: str) -> None:
        if self.ann is None and self.job is None:
            return
        self.uncovered.discard(node_id)
        self.gone.add(node_id)

    def start_due(self, index) -> None:
        """Start a build (the kind reached the threshold) or a merge (the uncovered rows
        reached 5 % of the graph) unless a job runs; small indexes do it inline."""
        if self.closed or self.job is not None:
            return
        if self.ann is None:
            due = index.size - index.deleted >= self.threshold
        else:
            due = len(self.uncovered) >= max(256, len(self.ann) // 20)
        if due:
            self._start(index, inline=index.size < SYNC_BELOW)

    def usable(self, index) -> Ann | None:
        """The graph when a search may use it now (``busy`` is then held: release it after),
        else None: no graph yet, too many rows it does not cover (a bulk load: scanning them
        beside it would cost more than the exact scan), or a job is changing it."""
        self.start_due(index)
        if self.closed or self.ann is None or len(self.uncovered) > max(8192, len(self.ann) // 4):
            return None
        return self.ann if self.busy.acquire(blocking=False) else None

    def _start(self, index, inline: bool) -> None:
        if self.ann is None:  # a build takes every live row
            ids = [i for i in index.ids[: index.size] if i is not None]
        else:
            ids = [i for i in self.uncovered if i in index.pos]
        pos = np.fromiter((index.pos[i] for i in ids), dtype=np.int64, count=len(ids))
        job = (ids, pos, index.mat, self.epoch, index.dim, sorted(self.gone))
        self.touched = set()
        if inline:
            self.job = threading.current_thread()
            try:
                self._run(*job)
            finally:
                self.job = None
            return
        self.job = threading.Thread(target=self._background, args=job, name="graphmem-ann", daemon=True)
        self.job.start()

    def _background(self, *job) -> None:
        try:
            self._run(*job)
        finally:
            self.job = None

    def close(self) -> None:
        """Stop the job at its next chunk and wait for it (at most one chunk)."""
        self.closed = True
        self.wait()

    def wait(self) -> None:
        """Wait for the running job, if any (never for oneself: an inline job)."""
        job = self.job
        if job is not None and job is not threading.current_thread():
            job.join()

    # the job ----------------------------------------------------------------------------
    def _run(self, ids: list[str], pos: np.ndarray, mat: np.ndarray, epoch: int, dim: int, gone: list[str]) -> None:
        try:
            ann, done = self.ann, []
            if ann is None:  # the first graph of this index: the saved one where it still holds, else a new one
                ann = Ann.load(self.path, dim) if self.path is not None and self.path.exists() else None
                ann = ann if ann is not None else Ann(dim)
                order = np.argsort(pos, kind="stable")
                ids, pos = [ids[j] for j in order.tolist()], pos[order]
                done = ann.check(ids, _Rows(mat, pos)) if len(ann) else []
                ann.drop(gone)
            else:
                with self.busy:
                    ann.drop(gone)
            held = set(done)
            todo = [j for j, i in enumerate(ids) if i not in held]
            for start in range(0, len(todo), ADD_CHUNK):
                if self.closed:
                    return
                chunk = todo[start : start + ADD_CHUNK]
                with self.busy:
                    ann.add([ids[j] for j in chunk], mat[pos[chunk]])
            while not self.lock.acquire(timeout=0.05):  # the index's; a close() (joining this job) ends the wait
                if self.closed:
                    return
            try:
                if self.closed or epoch != self.epoch:
                    # positions moved under the job: a build is redone; a merge's rows stay uncovered
                    return
                if self.ann is None:
                    self.ann, self.uncovered = ann, set(self.touched)
                else:
                    self.uncovered -= set(ids) - self.touched
                self.gone -= set(gone)
            finally:
                self.lock.release()
            if self.path is not None and todo:
                with self.busy:
                    if not self.closed:
                        ann.save(self.path)
        except Exception:  # noqa: BLE001 - a cache: searches stay exact
            log.exception("building the vector graph failed; this index scans exactly from now on")
            self.closed = True


class _Rows:
    """Rows of ``mat`` at ``pos``, read a slice at a time (``Ann.check`` reads in chunks; a
    million-row copy would double the memory)."""

    def __init__(self, mat: np.ndarray, pos: np.ndarray) -> None:
        self.mat, self.pos = mat, pos

    def __getitem__(self, sl: slice) -> np.ndarray:
        return self.mat[self.pos[sl]]


def drop_indexes(vindex: dict, root: Path | None, namespace: str | None = None, files: bool = False) -> None:
    """Forget the vector indexes of ``namespace`` (all when None), stopping their graph jobs;
    with ``files``, delete their saved graphs too (the vectors they held are gone or replaced)."""
    for key in [k for k in vindex if namespace is None or k[0] == namespace]:
        state = vindex.pop(key).ann
        if state is not None:
            state.close()
    if files and root is not None and root.exists():
        paths = [ann_file(root, namespace, k) for k in VECTOR_KINDS] if namespace is not None else list(root.iterdir())
        for path in paths:
            for f in (path, path.with_suffix(".ids")):
                f.unlink(missing_ok=True)


def settle(vindex: dict, lock: threading.RLock) -> None:
    """Start every build or merge that is due and wait for them all (``lock``: the store's)."""
    with lock:
        states = [(index, index.ann) for index in vindex.values() if index.ann is not None]
        for index, state in states:
            with index.lock:
                state.start_due(index)
    for _, state in states:
        state.wait()
