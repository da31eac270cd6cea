"""The embedded store's re-embedding: target-model vectors fill ``vectors_next`` beside the live
``vectors`` table and replace it in one transaction (a mixin of ``EmbeddedStore``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ValidationError
from ..models import Node
from .base import VECTOR_KINDS, reembedded_rows, swap_target
from .embedded_ann import drop_indexes


class ReembedMixin:
    # re-embedding ---------------------------------------------------------------------------
    def reembed_target(self) -> tuple[str, int] | None:
        with self._lock, self._guard():
            rows = self._global_meta(self.conn)
        self._next = (rows["next_embedder"], int(rows["next_dim"])) if rows.get("next_embedder") else None
        return self._next

    def begin_reembed(self, *, embedder: str, dim: int) -> None:
        if (embedder, dim) == (self.embedder, self.dim):
            raise ValidationError(f"the store is already embedded with {embedder} ({dim}-d)")
        with self._lock, self._guard(), self._tx() as cur:
            if self.reembed_target() != (embedder, dim):
                cur.execute("DELETE FROM vectors_next")  # another target's vectors: start over
            for key, value in (("next_embedder", embedder), ("next_dim", str(dim))):
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('', ?, ?)", (key, value))
            self._next = (embedder, dim)

    def reembed_pending(self, limit: int) -> list[Node]:
        marks = ",".join("?" * len(VECTOR_KINDS))
        with self._lock, self._guard():
            self._sync()
            rows = self.conn.execute(
                f"SELECT {self._COLS} FROM nodes n WHERE kind IN ({marks}) AND NOT EXISTS "  # noqa: S608 (placeholders)
                "(SELECT 1 FROM vectors_next v WHERE v.rowid = n.rowid) ORDER BY rowid LIMIT ?",
                (*VECTOR_KINDS, limit),
            )
            return self._hydrate(rows)

    def put_reembedded(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        vecs = reembedded_rows(self.reembed_target(), ids, vectors)
        with self._lock, self._guard(), self._tx() as cur:
            for node_id, vec in zip(ids, vecs):
                cur.execute(
                    "INSERT OR REPLACE INTO vectors_next SELECT rowid, ? FROM nodes WHERE namespace = ? AND id = ?",
                    (vec.tobytes(), namespace, node_id),
                )

    def finish_reembed(self) -> None:
        target = swap_target(self)
        with self._lock, self._guard():
            with self._tx() as cur:
                cur.execute("DELETE FROM vectors")
                cur.execute("INSERT INTO vectors SELECT rowid, vec FROM vectors_next")
                cur.execute("DELETE FROM vectors_next")
                cur.execute("DELETE FROM meta WHERE namespace = '' AND key IN ('next_embedder', 'next_dim')")
                for key, value in (("embedder", target[0]), ("dim", str(target[1]))):
                    cur.execute("INSERT OR REPLACE INTO meta VALUES ('', ?, ?)", (key, value))
            self.embedder, self.dim = target
            self._next = None
            drop_indexes(self._vindex, self._ann_root, files=True)
