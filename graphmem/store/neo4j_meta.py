"""The Neo4j store's meta (a mixin of ``Neo4jStore``): a namespace's key-value settings (its
soul, the store's embedder) as ``GraphMemMeta`` nodes, and leases kept the same way: a claim
reads the lease under its node's write lock with the server's clock, so claims of one key from
any process on any machine run one after another and are judged by one clock."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .base import lease_holder, lease_value


class MetaMixin:
    def get_meta(self, namespace: str, key: str) -> str | None:
        rows = self._read("meta_get", namespace=namespace, key=key)
        return rows[0]["value"] if rows else None

    def set_meta(self, namespace: str, key: str, value: str | None) -> None:
        def work(tx: Any) -> None:
            if namespace:
                self._tx(tx, "namespace_ensure", namespace=namespace, now=datetime.now(timezone.utc))
            if value is None:
                self._tx(tx, "meta_delete", namespace=namespace, key=key)
            else:
                self._tx(tx, "meta_set", namespace=namespace, key=key, value=value)

        self._run(True, work)

    def claim(self, namespace: str, key: str, owner: str, seconds: float, take_from: str | None = None) -> bool:
        def work(tx: Any) -> bool:
            (row,) = self._tx(tx, "lease_lock", namespace=namespace, key=key)
            value = lease_value(row["value"], owner, row["now"], seconds, take_from)  # the server's clock: one for every machine
            if value is not None:
                self._tx(tx, "meta_set", namespace=namespace, key=key, value=value)
            return value is not None

        return self._run(True, work)

    def release(self, namespace: str, key: str, owner: str) -> None:
        def work(tx: Any) -> None:
            (row,) = self._tx(tx, "lease_lock", namespace=namespace, key=key)
            if lease_holder(row["value"])[0] in (owner, None):
                self._tx(tx, "meta_delete", namespace=namespace, key=key)

        self._run(True, work)
