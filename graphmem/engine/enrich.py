"""Deferred enrichment of messages: embeddings and entity tags computed by a background
thread, for bulk ingestion that should not wait for the embedder.

The queue is the store itself: a message written without a vector is pending, so pending
work survives a restart and is resumed when a ``Memory`` opens the store again."""

from __future__ import annotations

import logging
import time
from functools import partial

import numpy as np

from ..embed import embed_beside
from ..lifecycle import LogLinker, Parts
from ..models import Message, utcnow
from ..background import BackgroundWorker
from ..errors import GraphMemError
from .guard import retried

log = logging.getLogger(__name__)
BATCH = 512


class Enricher(BackgroundWorker):
    label = "enrichment"

    def __init__(self, parts: Parts) -> None:
        super().__init__()
        self.parts = parts
        self.linker = LogLinker(parts)

    @property
    def mode(self) -> str:
        return self.parts.settings.enrichment

    def next_job(self, final: bool) -> list[Message] | None:
        batch = [m for m in self.parts.store.pending_vectors("message", BATCH) if isinstance(m, Message)]
        return batch or None

    def run_job(self, job: list[Message]) -> None:
        self._enrich(job)

    def _enrich(self, batch: list[Message]) -> None:
        parts = self.parts
        t0 = time.perf_counter()
        texts = [m.said for m in batch]
        embedded = embed_beside(parts.embedder, texts)  # outside every lock: readers keep going
        tags, vectors = parts.tagger.tag_many(texts), embedded.result()
        by_ns: dict[str, list[int]] = {}
        for i, m in enumerate(batch):
            by_ns.setdefault(m.namespace, []).append(i)
        def write(ns: str, idx: list[int]) -> None:
            with parts.write_lock:  # re-read: a message deleted or changed meanwhile wins, in any process
                fresh = {n.id: n for n in parts.store.get(ns, [batch[i].id for i in idx])}
                keep = [i for i in idx if batch[i].id in fresh]
                if keep:
                    linked = self.linker.link(ns, [fresh[batch[i].id] for i in keep], [tags[i] for i in keep], utcnow())
                    parts.store.put(ns, *linked.rows(np.asarray(vectors[keep])), linked.edges,
                                    expect={batch[i].id: fresh[batch[i].id].updated_at for i in keep})

        for ns, idx in by_ns.items():
            try:
                retried(partial(write, ns, idx))
            except (ValueError, GraphMemError) as exc:  # one bad turn never stops the queue: each alone,
                log.warning("enrichment of %d messages failed (%s); enriching them one by one", len(idx), exc)
                for i in idx:  # and one that still fails is kept with its vector and without its tags
                    try:
                        retried(partial(write, ns, [i]))
                    except (ValueError, GraphMemError) as one:
                        log.warning("message %s: its entities are dropped: %s", batch[i].id, one)
                        tags[i] = []
                        retried(partial(write, ns, [i]))
        log.info("enriched %d messages in %.1f ms", len(batch), (time.perf_counter() - t0) * 1000)
