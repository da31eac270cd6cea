"""Every record a listing gives, for faces that need all of them (a graph view, a key-value
store's scan, a chat history): ``Memory.list`` returns at most 10,000 per call."""

from __future__ import annotations

from typing import Any

PAGE = 10_000  # Memory.list's largest page


def list_all(mem: Any, kind: str, *, namespace: str, cap: int | None = None, **filters: Any) -> list[Any]:
    """``mem.list(kind, namespace=..., **filters)`` page by page, up to ``cap`` records. Raises
    what ``Memory.list`` raises (nothing for a namespace never written: no records)."""
    out: list[Any] = []
    while cap is None or len(out) < cap:
        want = PAGE if cap is None else min(PAGE, cap - len(out))
        page = mem.list(kind, namespace=namespace, limit=want, offset=len(out), **filters)
        out += page
        if len(page) < want:
            break
    return out
