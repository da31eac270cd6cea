"""The Neo4j store's re-embedding: target-model vectors fill the second vector property
(``embedding_b``, or ``embedding`` again) with its own vector indexes, beside the live one that
search keeps using; the swap flips the live property and drops the old one (a mixin of
``Neo4jStore``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ValidationError
from ..models import Node
from .base import VECTOR_KINDS, reembedded_rows, swap_target
from .cypher import query
from .neo4j_rows import WRITE_BATCH
from .neo4j_rows import chunks as _chunks

_BATCH = 10_000  # nodes marked or cleared per transaction


class ReembedMixin:
    # re-embedding ------------------------------------------------------------------------------
    def reembed_target(self) -> tuple[str, int] | None:
        name, dim = self.get_meta("", "next_embedder"), self.get_meta("", "next_dim")
        self._next = (name, int(dim)) if name and dim else None
        return self._next

    def _clear_vectors(self, prop: str) -> None:
        while self._write("reembed_clear", _ids={"vector": prop}, batch=_BATCH)[0]["n"] >= _BATCH:
            pass

    def _drop_vector_indexes(self, prop: str) -> None:
        with self._errors(), self._session() as session:
            for row in self._read("schema_vector_indexes"):
                if row["name"].endswith("_" + prop):
                    session.run(query("schema_drop_index").text, {"name": row["name"]}).consume()

    def begin_reembed(self, *, embedder: str, dim: int) -> None:
        """The second vector property gets its own vector indexes, sized for the target."""
        if (embedder, dim) == (self.embedder, self.dim):
            raise ValidationError(f"the store is already embedded with {embedder} ({dim}-d)")
        if self.reembed_target() == (embedder, dim):
            return  # resume
        self._drop_vector_indexes(self._shadow)
        self._clear_vectors(self._shadow)
        self._apply_schema(dim, self._shadow, only_vectors=True)
        for key, value in (("next_embedder", embedder), ("next_dim", str(dim))):
            self.set_meta("", key, value)
        self._next = (embedder, dim)
        while self._write("reembed_mark", kinds=list(VECTOR_KINDS), batch=_BATCH)[0]["n"] >= _BATCH:
            pass

    def reembed_pending(self, limit: int) -> list[Node]:
        return self._hydrate(self._rows("reembed_pending", limit=limit))

    def put_reembedded(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        vecs = reembedded_rows(self.reembed_target(), ids, vectors)
        rows = [{"id": i, "vector": v.tolist()} for i, v in zip(ids, vecs)]
        for chunk in _chunks(rows, WRITE_BATCH):
            self._write("reembed_put", namespace=namespace, rows=chunk, shadow=self._shadow)

    def finish_reembed(self) -> None:
        """Flip the live property, then drop the old one's indexes and values."""
        target = swap_target(self)
        old = self._prop
        for key, value in (("vector_prop", self._shadow), ("embedder", target[0]), ("dim", str(target[1])),
                           ("next_embedder", None), ("next_dim", None)):
            self.set_meta("", key, value)
        self._prop, (self.embedder, self.dim), self._next = self._shadow, target, None
        self._drop_vector_indexes(old)
        self._clear_vectors(old)
