"""Re-embedding: every node gets a vector from another embedder, written beside the live
vectors (which recall keeps using), then swapped in at once when all are done.

Writes made meanwhile embed with the live model; the store queues them again for the new
one, and the swap first catches up on them under the write lock, so no node is left with
a vector of the old model."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..background import BackgroundWorker
from ..embed import Embedder
from ..models import Node, embed_text
from ..store import VECTOR_KINDS
from .parts import Parts

log = logging.getLogger(__name__)
_SWAP = "swap"


class Reembedder(BackgroundWorker):
    label = "re-embedding"

    def __init__(self, parts: Parts, on_swap: Callable[[Embedder], None]) -> None:
        super().__init__()
        self.parts = parts
        self.on_swap = on_swap
        self.target: Embedder | None = None
        self.done = 0
        self._mode = "manual"
        self._progress: Callable[[int, int], None] | None = None
        self._t0 = 0.0
        self._total = 0

    @property
    def mode(self) -> str:
        return self._mode

    def start(self, target: Embedder, *, background: bool = False,
              progress: Callable[[int, int], None] | None = None) -> int:
        """Begin (or resume) re-embedding with ``target``; without ``background``, run it to
        the swap in the calling thread. Returns nodes re-embedded (0 in the background)."""
        self.parts.store.begin_reembed(embedder=target.name, dim=target.dim)
        self.target, self.done, self._progress, self._t0 = target, 0, progress, time.perf_counter()
        store = self.parts.store
        self._total = sum(store.count(ns).get(kind, 0) for ns in store.namespaces() for kind in VECTOR_KINDS)
        self._mode = "background" if background else "manual"
        if background:
            self.kick()
            return 0
        self.flush()
        return self.done

    def next_job(self, final: bool) -> Any:
        if self.target is None:
            return None
        batch = self.parts.store.reembed_pending(self.parts.settings.lifecycle.reembed_batch)
        return batch or _SWAP

    def run_job(self, job: Any) -> None:
        if job == _SWAP:
            self._swap()
        else:
            self._embed(job)

    def _embed(self, batch: list[Node]) -> None:
        assert self.target is not None
        vectors = self.target.embed([embed_text(n) for n in batch])  # outside every lock
        by_ns: dict[str, list[int]] = {}
        for i, node in enumerate(batch):
            by_ns.setdefault(node.namespace, []).append(i)
        for ns, idx in by_ns.items():
            self.parts.store.put_reembedded(ns, [batch[i].id for i in idx], vectors[idx])
        self.done += len(batch)
        if self._progress is not None:
            self._progress(self.done, max(self._total, self.done))

    def _swap(self) -> None:
        assert self.target is not None
        store, size = self.parts.store, self.parts.settings.lifecycle.reembed_batch
        with self.parts.write_lock:  # nothing is written between the catch-up and the swap
            while rest := store.reembed_pending(size):
                self._embed(rest)
            store.finish_reembed()
            self.on_swap(self.target)
        log.info("re-embedded %d nodes with %s in %.1f s", self.done, self.target.name, time.perf_counter() - self._t0)
        self.target = None
