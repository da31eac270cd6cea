"""Deferred enrichment of messages: embeddings and entity tags computed by a background
thread, for bulk ingestion that should not wait for the embedder.

The queue is the store itself: a message written without a vector is pending, so pending
work survives a restart and is resumed by the next ``Memory.flush()`` or deferred write."""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

import numpy as np

from ..errors import GraphMemError
from ..models import Message

if TYPE_CHECKING:
    from .memory import Memory

log = logging.getLogger(__name__)
BATCH = 512


class Enricher:
    def __init__(self, memory: "Memory") -> None:
        self.memory = memory
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stop = False
        self._guard = threading.Lock()
        self.error: BaseException | None = None
        self.done = 0

    def kick(self) -> None:
        """Start the worker if needed and tell it there is work (background mode only)."""
        if self.memory.settings.enrichment == "manual":
            return
        with self._guard:
            self._idle.clear()
            self._wake.set()
            if self._thread is None or not self._thread.is_alive():
                self._stop = False
                self._thread = threading.Thread(target=self._run, name="graphmem-enrich", daemon=True)
                self._thread.start()

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every pending message is enriched; re-raise a worker failure. In manual
        mode the work runs here, in the caller's thread."""
        if self.memory.settings.enrichment == "manual":
            while batch := [m for m in self.memory.store.pending_vectors("message", BATCH) if isinstance(m, Message)]:
                self._enrich(batch)
            return
        self.kick()
        if not self._idle.wait(timeout):
            raise TimeoutError("enrichment did not finish in time")
        if self.error is not None:
            err, self.error = self.error, None
            raise GraphMemError(f"background enrichment failed: {err}") from err

    def close(self) -> None:
        """Stop after the batch in hand; what is left stays pending in the store."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        mem = self.memory
        while not self._stop:
            self._wake.clear()
            try:
                batch = [m for m in mem.store.pending_vectors("message", BATCH) if isinstance(m, Message)]
                if not batch:
                    self._idle.set()
                    if self._wake.wait(1.0) or self._stop:
                        continue
                    with self._guard:  # exit, unless a kick came in meanwhile
                        if not self._wake.is_set():
                            self._thread = None
                            return
                    continue
                self._enrich(batch)
            except BaseException as exc:  # noqa: BLE001 - handed to flush(), never swallowed
                log.exception("background enrichment failed")
                self.error = exc
                self._idle.set()
                return
        self._idle.set()

    def _enrich(self, batch: list[Message]) -> None:
        mem = self.memory
        t0 = time.perf_counter()
        texts = [m.content for m in batch]
        vectors = mem.embedder.embed(texts)  # outside every lock: readers keep going
        tags = mem.tagger.tag_many(texts)
        by_ns: dict[str, list[int]] = {}
        for i, m in enumerate(batch):
            by_ns.setdefault(m.namespace, []).append(i)
        with mem._write_lock:  # re-read: a message deleted or changed meanwhile wins
            for ns, idx in by_ns.items():
                fresh = {n.id: n for n in mem.store.get(ns, [batch[i].id for i in idx])}
                keep = [i for i in idx if batch[i].id in fresh]
                if not keep:
                    continue
                nodes = [fresh[batch[i].id].model_copy(update={"entities": [t.name for t in tags[i]]}) for i in keep]
                mem.store.put(ns, nodes, np.asarray(vectors[keep]))
        self.done += len(batch)
        log.info("enriched %d messages in %.1f ms", len(batch), (time.perf_counter() - t0) * 1000)
