"""The batch maintenance run (never on the hot path): merge near-duplicates, expire (demote to
archive), cap, purge, and finish a pending re-embedding, for one namespace at a time.

A run first plans from a snapshot of the namespace without holding the write lock, then
applies the plan in small transactions under the lock, re-reading each record first: a
record changed since the snapshot (a write, a recall's access) is left for the next run.
A dry run plans only. Every run, dry or not, leaves a ``MaintenanceRun`` audit record in the
namespace (counts, ids, reasons, the settings used)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from datetime import datetime

import numpy as np

from ..models import Edge, EdgeType, LifecycleAction, MaintenanceRun, MemoryRecord, Status, utcnow
from ..settings import LifecycleSettings
from .duplicates import find_groups
from .parts import Parts
from .rules import expiry_reason, fold_duplicates, over_cap, purge_reason, survivor

log = logging.getLogger(__name__)

PAGE = 5000  # records read per store call
APPLY_BATCH = 500  # records written per transaction
Progress = Callable[[str, int, int], None]  # (step, done, total)


class Maintainer:
    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def records(self, namespace: str, status: Status) -> Iterator[list[MemoryRecord]]:
        """Every memory of one status, oldest first, a page at a time."""
        offset = 0
        while True:
            page = self.parts.store.query(namespace, "memory", statuses=[status], limit=PAGE, offset=offset,
                                          newest_first=False)
            if not page:
                return
            yield [m for m in page if isinstance(m, MemoryRecord)]
            offset += len(page)

    def run(self, namespace: str, *, dry_run: bool, now: datetime | None = None, policy: LifecycleSettings,
            progress: Progress | None = None) -> MaintenanceRun:
        t0 = time.perf_counter()
        now = now or utcnow()
        report = progress or (lambda step, done, total: None)
        active = [m for page in self.records(namespace, Status.active) for m in page]
        run = MaintenanceRun(namespace=namespace, dry_run=dry_run, now=now, active_before=len(active),
                             policy=policy.model_dump(mode="json"))

        # 1. merge near-duplicates into the newest of each group
        report("merge", 0, 1)
        merged_away: set[str] = set()
        if policy.merge and len(active) > 1:
            vecs = self._vectors(namespace, active)
            for group, reasons in find_groups(active, vecs, policy.merge_cosine):
                records = [active[i] for i in group]
                keep = survivor(records)
                others = [m for m in records if m.id != keep.id]
                if not dry_run and not self._apply_merge(namespace, keep, others, reasons, group, active, now):
                    continue
                for i in group:
                    if active[i].id != keep.id:
                        merged_away.add(active[i].id)
                        run.actions.append(LifecycleAction(action="merge", id=active[i].id, target=keep.id,
                                                           reason=f"duplicate: {reasons[i]}"))
        report("merge", 1, 1)
        remaining = [m for m in active if m.id not in merged_away]

        # 2. expiry: active -> archived
        expired = [(m, why) for m in remaining if (why := expiry_reason(m, now, policy))]
        gone = {m.id for m, _ in expired}
        remaining = [m for m in remaining if m.id not in gone]

        # 3. cap: the lowest retention over the cap -> archived
        capped = over_cap(remaining, now, policy, self.parts.settings.recall)
        archive = [("expire", m, why) for m, why in expired] + [("cap", m, why) for m, why in capped]
        if not dry_run:
            archive = self._apply_archive(namespace, archive, now, report)
        run.actions += [LifecycleAction(action=action, id=m.id, reason=why) for action, m, why in archive]

        # 4. purge: archived long enough -> deleted for good
        purge = [(m, why) for page in self.records(namespace, Status.archived) for m in page
                 if (why := purge_reason(m, now, policy))]
        if not dry_run:
            purge = self._apply_purge(namespace, purge, report)
        run.actions += [LifecycleAction(action="purge", id=m.id, reason=why) for m, why in purge]

        run.merged = len(merged_away)
        run.expired = sum(1 for a in run.actions if a.action == "expire")
        run.capped = sum(1 for a in run.actions if a.action == "cap")
        run.purged = len(purge)
        run.active_after = len(active) - run.merged - run.expired - run.capped
        run.seconds = round(time.perf_counter() - t0, 3)
        with self.parts.write_lock:
            self.parts.store.put(namespace, [run])
        log.info("maintain namespace=%s dry_run=%s merged=%d expired=%d capped=%d purged=%d in %.1f s", namespace,
                 dry_run, run.merged, run.expired, run.capped, run.purged, run.seconds)
        return run

    def _vectors(self, namespace: str, memories: list[MemoryRecord]) -> np.ndarray:
        dim = self.parts.embedder.dim
        out = np.full((len(memories), dim), np.nan, dtype=np.float32)
        for start in range(0, len(memories), PAGE):
            ids = [m.id for m in memories[start : start + PAGE]]
            found = self.parts.store.vectors(namespace, ids)
            for j, node_id in enumerate(ids):
                v = found.get(node_id)
                if v is not None and v.shape[0] == dim:
                    out[start + j] = v / (np.linalg.norm(v) or 1.0)
        return out

    def _unchanged(self, namespace: str, snapshot: list[MemoryRecord]) -> dict[str, MemoryRecord]:
        """The records of ``snapshot`` still as they were (same update time, status and uses)."""
        fresh = {n.id: n for n in self.parts.store.get(namespace, [m.id for m in snapshot])}
        return {m.id: m for m in snapshot if (f := fresh.get(m.id)) is not None and isinstance(f, MemoryRecord)
                and f.updated_at == m.updated_at and f.status == m.status and f.access_count == m.access_count}

    def _apply_merge(self, namespace: str, keep: MemoryRecord, others: list[MemoryRecord], reasons: dict[int, str],
                     group: list[int], active: list[MemoryRecord], now: datetime) -> bool:
        store = self.parts.store
        why = {active[i].id: reasons[i] for i in group}
        with self.parts.write_lock:
            if len(self._unchanged(namespace, [keep, *others])) != len(others) + 1:
                return False  # changed since the snapshot: the next run sees it again
            merged = MemoryRecord.model_validate({**keep.model_dump(), **fold_duplicates(keep, others, now)})
            sources = [i for i in merged.source_message_ids if i not in keep.source_message_ids]
            live = {n.id for n in store.get(namespace, sources)}
            mentioned = {e.target: e for e in store.edges(namespace, [keep.id], types=[EdgeType.MENTIONS])}
            edges = [Edge(namespace=namespace, source=keep.id, type=EdgeType.DERIVED_FROM, target=i)
                     for i in sources if i in live]
            for e in store.edges(namespace, [m.id for m in others], types=[EdgeType.MENTIONS]):
                if e.target not in mentioned:
                    mentioned[e.target] = e
                    edges.append(e.model_copy(update={"source": keep.id}))
            nodes = [merged]
            for m in others:
                reason = f"merged into {keep.id}: {why[m.id]}"
                nodes.append(MemoryRecord.model_validate({
                    **m.model_dump(), "status": Status.merged, "expired_at": now, "status_reason": reason,
                    "updated_at": now,
                }))
                edges.append(Edge(namespace=namespace, source=m.id, type=EdgeType.MERGED_INTO, target=keep.id,
                                  props={"reason": why[m.id], "at": now.isoformat()}))
            store.put(namespace, nodes, None, edges)
        return True

    def _apply_archive(self, namespace: str, planned: list[tuple[str, MemoryRecord, str]], now: datetime,
                       report: Progress) -> list[tuple[str, MemoryRecord, str]]:
        done: list[tuple[str, MemoryRecord, str]] = []
        for start in range(0, len(planned), APPLY_BATCH):
            chunk = planned[start : start + APPLY_BATCH]
            with self.parts.write_lock:
                ok = self._unchanged(namespace, [m for _, m, _ in chunk])
                chunk = [(a, m, why) for a, m, why in chunk if m.id in ok]
                self.parts.store.put(namespace, [
                    MemoryRecord.model_validate({**m.model_dump(), "status": Status.archived, "archived_at": now,
                                                 "status_reason": why, "updated_at": now})
                    for _, m, why in chunk
                ])
            done += chunk
            report("archive", start + len(chunk), len(planned))
        return done

    def _apply_purge(self, namespace: str, planned: list[tuple[MemoryRecord, str]], report: Progress
                     ) -> list[tuple[MemoryRecord, str]]:
        done: list[tuple[MemoryRecord, str]] = []
        for start in range(0, len(planned), APPLY_BATCH):
            chunk = planned[start : start + APPLY_BATCH]
            with self.parts.write_lock:
                ok = self._unchanged(namespace, [m for m, _ in chunk])
                chunk = [(m, why) for m, why in chunk if m.id in ok]
                self.parts.store.delete(namespace, [m.id for m, _ in chunk])
            done += chunk
            report("purge", start + len(chunk), len(planned))
        return done

