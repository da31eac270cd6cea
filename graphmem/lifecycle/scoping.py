"""Whose a record is inside a namespace (``user_id``, ``agent_id``, ``run_id``): the filters
calls take, validated, and the records a scope owns (for ``forget`` and ``export``)."""

from __future__ import annotations

from ..errors import NotFoundError
from ..models.records import SCOPE_FIELDS, Scope
from ..store import Store
from ..store.base import pages
from .parts import check

# the kinds that belong to a user, an agent or a run (a session by its user and agent);
# entities, procedures and tools are the namespace's, shared
SCOPED_KINDS = ("session", "message", "memory", "episode", "trace")


def scope_filter(user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict[str, str]:
    """The scope a call asks for: the fields given, checked (1-200 characters)."""
    scope = check(Scope, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, "scope")
    return {f: getattr(scope, f) for f in SCOPE_FIELDS if getattr(scope, f) is not None}


def scoped_ids(store: Store, namespace: str, scope: dict[str, str]) -> list[str]:
    """Every record of the scope, of every scoped kind."""
    return [n.id for kind in SCOPED_KINDS for page in pages(store, namespace, kind, 10_000, scope) for n in page]


def owned(store: Store, namespace: str, ids: list[str], scope: dict[str, str]) -> list[str]:
    """Those of ``ids`` whose records belong to the scope; none of them is a ``NotFoundError``."""
    mine = [n.id for n in store.get(namespace, ids) if all(getattr(n, f, None) == v for f, v in scope.items())]
    if not mine:
        raise NotFoundError(f"none of {ids[:5]} is a record of {scope} in namespace {namespace!r}")
    return mine
