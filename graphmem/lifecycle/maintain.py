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

from ..errors import ConflictError, NotFoundError
from ..models import Edge, EdgeType, LifecycleAction, MaintenanceRun, MemoryRecord, Status, utcnow
from ..settings import LifecycleSettings
from .duplicates import find_groups
from .entity_merges import fold_entity, merge_candidates
from .parts import Parts, check
from .rules import expiry_reason, fold_duplicates, over_cap, purge_reason, survivor

log = logging.getLogger(__name__)

PAGE = 5000  # records read per store call
APPLY_BATCH = 500  # records written per transaction
Progress = Callable[[str, int, int], None]  # (step, done, total)
# (survivor as read, survivor as merged, [(duplicate, reason)])
MergePlan = tuple[MemoryRecord, MemoryRecord, list[tuple[MemoryRecord, str]]]


def resolve_policy(base: LifecycleSettings, policy: LifecycleSettings | dict | None) -> LifecycleSettings:
    """The rules' numbers for one run: the settings', or ``policy`` (whole, or fields over them)."""
    if policy is None:
        return base
    if isinstance(policy, LifecycleSettings):
        return policy
    return check(LifecycleSettings, {**base.model_dump(), **policy}, "lifecycle policy")


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
        merged_away: set[str] = set()
        if policy.merge and len(active) > 1:
            report("merge", 0, 1)
            plans = []
            for group, reasons in find_groups(active, self._vectors(namespace, active), policy.merge_cosine):
                keep = survivor([active[i] for i in group])
                others = [(active[i], reasons[i]) for i in group if active[i].id != keep.id]
                merged = MemoryRecord.model_validate(
                    {**keep.model_dump(), **fold_duplicates(keep, [o for o, _ in others], now)})
                plans.append((keep, merged, others))
            if not dry_run:
                plans = self._apply_merges(namespace, plans, now, report)
            for keep, _, others in plans:
                for m, why in others:
                    merged_away.add(m.id)
                    run.actions.append(LifecycleAction(action="merge", id=m.id, target=keep.id, reason=f"duplicate: {why}"))
            report("merge", 1, 1)
            # the survivors as merged (uses summed, confidence raised) are what the next rules judge
            folded = {keep.id: merged for keep, merged, _ in plans}
            active = [folded.get(m.id, m) for m in active]
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

        # 5. entities that are one real thing written two ways, where that is sure (see entity_merges)
        if policy.merge:
            run.actions += self._merge_entities(namespace, dry_run, now)

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

    def _merge_entities(self, namespace: str, dry_run: bool, now: datetime) -> list[LifecycleAction]:
        done: list[LifecycleAction] = []
        gone: set[str] = set()
        for s in merge_candidates(self.parts.store, namespace):
            if not s.sure or {s.keep_id, s.merge_id} & gone:
                continue
            if not dry_run:
                with self.parts.write_lock:
                    try:
                        fold_entity(self.parts, namespace, s.keep_id, s.merge_id, now)
                    except (NotFoundError, ConflictError):  # changed or merged since it was read: next run
                        continue
            gone.add(s.merge_id)
            done.append(LifecycleAction(action="merge_entity", id=s.merge_id, target=s.keep_id, reason=s.reason))
        return done

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

    def _apply_merges(self, namespace: str, plans: list[MergePlan], now: datetime, report: Progress) -> list[MergePlan]:
        """Fold each group into its survivor, many groups per transaction; a group any member of
        which changed since the snapshot is left for the next run."""
        store = self.parts.store
        done: list[MergePlan] = []
        batches: list[list[MergePlan]] = [[]]
        for plan in plans:  # about APPLY_BATCH records per transaction
            if sum(1 + len(p[2]) for p in batches[-1]) >= APPLY_BATCH:
                batches.append([])
            batches[-1].append(plan)
        for batch in batches:
            with self.parts.write_lock:
                read = [m for keep, _, others in batch for m in (keep, *(o for o, _ in others))]
                ok = self._unchanged(namespace, read)
                batch = [plan for plan in batch if plan[0].id in ok and all(o.id in ok for o, _ in plan[2])]
                if not batch:
                    continue
                mentions: dict[str, dict[str, Edge]] = {}
                for e in store.edges(namespace, [m.id for m in read], types=[EdgeType.MENTIONS]):
                    mentions.setdefault(e.source, {})[e.target] = e
                sources = {i for _, _, others in batch for o, _ in others for i in o.source_message_ids}
                live = {n.id for n in store.get(namespace, list(sources))}
                nodes: list[MemoryRecord] = []
                edges: list[Edge] = []
                for keep, merged, others in batch:
                    nodes.append(merged)
                    edges += [Edge(namespace=namespace, source=keep.id, type=EdgeType.DERIVED_FROM, target=i)
                              for i in merged.source_message_ids if i not in keep.source_message_ids and i in live]
                    have = dict(mentions.get(keep.id, {}))
                    for o, why in others:
                        for target, e in mentions.get(o.id, {}).items():
                            if target not in have:
                                have[target] = e
                                edges.append(e.model_copy(update={"source": keep.id}))
                        nodes.append(MemoryRecord.model_validate({
                            **o.model_dump(), "status": Status.merged, "expired_at": now,
                            "status_reason": f"merged into {keep.id}: {why}", "updated_at": now,
                        }))
                        edges.append(Edge(namespace=namespace, source=o.id, type=EdgeType.MERGED_INTO, target=keep.id,
                                          props={"reason": why, "at": now.isoformat()}))
                store.put(namespace, nodes, None, edges)
            done += batch
            report("merge", len(done), len(plans))
        return done

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

