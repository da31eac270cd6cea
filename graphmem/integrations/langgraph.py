"""A LangGraph ``BaseStore`` backed by graphmem (``pip install "graphmem[langgraph]"``).

Each item is one graphmem memory in one graphmem namespace (``namespace=``, default
``"default"`` as everywhere in graphmem, so a ``GraphMemRetriever`` or ``Memory.recall`` on the
same ``Memory`` finds the items; the earlier default was ``"langgraph"``): its text is what is indexed (the ``index`` fields of the item, or of the
store; the whole value by default), so ``search(query=...)`` is graphmem's recall (vectors,
keywords and the entity graph) and the item's entities join graphmem's graph; the LangGraph
namespace, key, value and creation time travel in the memory's metadata. A put writes the
same memory id again (an upsert, no version history: this is a key-value store); a put of
``None`` deletes. Filters and namespace matching follow LangGraph's own ``InMemoryStore``
(its helpers are used). No TTL. A value is JSON of at most 20,000 characters (graphmem's
metadata limit)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from langgraph.store.base import (BaseStore, GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp,
                                  get_text_at_path)
from langgraph.store.memory import _compare_values, _does_match

from ..engine import Memory, list_all
from ..errors import NotFoundError

CATEGORY = "langgraph"


def _id(namespace: tuple[str, ...], key: str) -> str:
    return "mem_lg" + hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()[:26]


class GraphMemStore(BaseStore):
    """``GraphMemStore(memory, namespace="default", index_fields=None)``: ``index_fields`` are
    the JSON paths embedded and searched for an item put without ``index`` (``None``: the whole
    value; ``["text", "notes[*]"]`` as in LangGraph)."""

    def __init__(self, memory: Memory, *, namespace: str = "default", index_fields: list[str] | None = None) -> None:
        self.memory, self.namespace, self.index_fields = memory, namespace, index_fields
        self._lock = threading.Lock()  # a put reads the item's creation time, then writes

    # the two methods LangGraph requires -----------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        out: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                out.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                out.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                out.append(None)
            elif isinstance(op, ListNamespacesOp):
                out.append(self._namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return out

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # operations ------------------------------------------------------------------------------
    def _item(self, rec: Any, score: float | None = None) -> Item:
        meta = rec.metadata[CATEGORY]
        fields = dict(namespace=tuple(meta["namespace"]), key=meta["key"], value=meta["value"],
                      created_at=datetime.fromisoformat(meta["created_at"]), updated_at=rec.updated_at)
        return Item(**fields) if score is None else SearchItem(**fields, score=score)

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        try:
            rec = self.memory.get(_id(namespace, key), namespace=self.namespace)
        except NotFoundError:
            return None
        return self._item(rec) if rec.kind == "memory" and CATEGORY in rec.metadata else None

    def _put(self, op: PutOp) -> None:
        record_id = _id(op.namespace, op.key)
        with self._lock:
            old = self._get(op.namespace, op.key)
            if op.value is None:
                if old is not None:
                    self.memory.forget(record_id, derived=False, namespace=self.namespace)
                return
            value = dict(op.value)
            fields = self.index_fields if op.index is None else op.index
            if fields is False:
                text = f"{'/'.join(op.namespace)}/{op.key}"  # not for semantic search: the address only
            elif fields is None:
                text = json.dumps(value, ensure_ascii=False)
            else:
                text = " ".join(t for path in fields for t in get_text_at_path(value, path)) or op.key
            created = (old.created_at if old else datetime.now().astimezone()).isoformat()
            self.memory.remember_many([{
                "id": record_id, "text": text, "category": CATEGORY, "source": "observed",
                "metadata": {CATEGORY: {"namespace": list(op.namespace), "key": op.key, "value": value,
                                        "created_at": created, "indexed": fields is not False}},
            }], namespace=self.namespace)

    def _all(self) -> list[Any]:
        """Every item, page by page (a listing without a query scans the store's items)."""
        out = list_all(self.memory, "memory", namespace=self.namespace, category=CATEGORY)
        return [r for r in out if CATEGORY in r.metadata]

    def _matches(self, item: Item, op: SearchOp) -> bool:
        return (item.namespace[:len(op.namespace_prefix)] == tuple(op.namespace_prefix)
                and all(_compare_values(item.value.get(k), v) for k, v in (op.filter or {}).items()))

    def _search(self, op: SearchOp) -> list[SearchItem]:
        wanted = op.offset + op.limit
        if not op.query:
            items = [i for i in (self._item(r, None) for r in self._all()) if self._matches(i, op)]
            items.sort(key=lambda i: i.updated_at, reverse=True)
            return [SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at)
                    for i in items[op.offset:wanted]]
        found: list[SearchItem] = []
        k = max(wanted * 4, 20)
        while True:  # recall more until enough items of this prefix and filter are found
            hits = self.memory.recall(op.query, k=k, layers=["memory"], namespace=self.namespace,
                                      record_access=False)
            mine = [h for h in hits if CATEGORY in h.item.metadata]  # the store's items, not other memories
            found = [i for i in (self._item(h.item, h.score) for h in mine
                                 if h.item.metadata[CATEGORY].get("indexed", True)) if self._matches(i, op)]
            if len(found) >= wanted or len(hits) < k or k >= 1000:
                return found[op.offset:wanted]
            k = min(k * 4, 1000)

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = {tuple(r.metadata[CATEGORY]["namespace"]) for r in self._all()}
        spaces = {ns for ns in spaces if all(_does_match(c, ns) for c in op.match_conditions or ())}
        if op.max_depth is not None:
            spaces = {ns[:op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset:op.offset + op.limit]
