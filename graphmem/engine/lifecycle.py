"""The lifecycle of a store (a mixin of ``Memory``): maintenance runs and their audit records,
why a record is in its state, and re-embedding with another model."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import TypeAdapter

from ..embed import Embedder, embedder_for, make_embedder
from ..errors import NamespaceNotFoundError, ValidationError
from ..lifecycle import checked_namespace, explain, resolve_policy
from ..models import Explanation, MaintenanceRun, utcnow
from ..models.fields import UTCDateTime
from ..settings import LifecycleSettings
from .guard import guarded, whole

_TIME = TypeAdapter(UTCDateTime)  # naive times are read as UTC
Progress = Callable[[int, int], None]


@guarded
class LifecycleMixin:
    def maintain(
        self,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        now: datetime | None = None,
        policy: LifecycleSettings | dict | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> list[MaintenanceRun]:
        """One maintenance run over a namespace (default: every namespace): merge near-duplicates,
        expire unused unimportant memories to archive, apply the cap, purge what was archived
        long enough, and finish a pending re-embedding; then the store's search structures are
        put in their fastest form (``Store.optimize``). ``dry_run`` changes nothing but still
        leaves the audit record. ``now`` moves the clock (time travel); ``policy`` overrides the
        settings' ``lifecycle`` numbers for this run. Returns one audit record per namespace; a
        namespace named but never written raises ``NamespaceNotFoundError`` (reads find nothing)."""
        rules = resolve_policy(self.settings.lifecycle, policy)
        when = _TIME.validate_python(now) if now else utcnow()
        namespaces = [checked_namespace(namespace)] if namespace else self.store.namespaces()
        if namespace and not self.store.has_namespace(namespaces[0]):  # a typo, not an empty tenant to audit
            raise NamespaceNotFoundError(f"namespace {namespace!r} does not exist (nothing was written to it)")
        runs = []
        for ns in namespaces:
            with self._op("maintain", ns, dry_run=dry_run):
                runs.append(self._maintainer.run(ns, dry_run=dry_run, now=when, policy=rules, progress=progress))
        if not dry_run:
            with self._parts.write_lock:
                self.store.optimize()
        if not dry_run and (self._wanted_embedder is not None or self.store.reembed_target() is not None):
            done = self.reembed(self._wanted_embedder)
            with self._parts.write_lock:
                for run in runs:  # the audit records say so too
                    run.reembedded = done
                    self.store.put(run.namespace, [run])
        return runs

    def maintenance_history(self, *, namespace: str = "default", limit: int = 20) -> list[MaintenanceRun]:
        """The audit records of past maintenance runs, newest first."""
        namespace, limit = checked_namespace(namespace), whole("limit", limit, 1, 10_000)
        return [r for r in self.store.query(namespace, "maintenance", limit=limit) if isinstance(r, MaintenanceRun)]

    def explain(self, record_id: str, *, namespace: str = "default", now: datetime | None = None) -> Explanation:
        """Why a node is active, archived, superseded, merged or due to expire: the rule, the
        numbers, the dates and the edges involved."""
        namespace = checked_namespace(namespace)
        when = _TIME.validate_python(now) if now else utcnow()
        return explain(self.store, self.get(record_id, namespace=namespace), when, self.settings.lifecycle)

    def reembed(self, embedder: Embedder | str | None = None, *, background: bool = False,
                progress: Progress | None = None) -> int:
        """Re-embed every node with ``embedder`` (a name: ``use``, ``e5``; default: the configured
        one) and swap it in when done; recall keeps using the current vectors meanwhile.
        ``background`` returns at once (``flush_reembed()`` waits). Returns nodes re-embedded."""
        target = make_embedder(embedder) if isinstance(embedder, str) else embedder
        resume = self.store.reembed_target()
        target = target or self._wanted_embedder or (embedder_for(*resume) if resume else None)
        if target is None:
            raise ValidationError(f"the store is already embedded with {self.embedder.name}; name another embedder")
        return self._reembedder.start(target, background=background, progress=progress)

    def flush_reembed(self, timeout: float | None = None) -> None:
        """Wait for a background re-embedding to finish and swap."""
        self._reembedder.flush(timeout)
