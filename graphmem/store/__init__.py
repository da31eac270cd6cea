"""Storage backends behind one protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import VECTOR_KINDS, Direction, Store, StoreCapabilities, no_vectors
from .embedded import EmbeddedStore

if TYPE_CHECKING:
    from ..settings import Settings


def open_store(settings: "Settings") -> Store:
    """The backend ``settings`` names (``GRAPHMEM_BACKEND``), not yet initialised."""
    if settings.backend == "neo4j":
        from .neo4j import Neo4jStore

        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
        return Neo4jStore(
            settings.neo4j_uri, settings.neo4j_user, password, settings.neo4j_database,
            retry_seconds=settings.neo4j_retry_seconds, exact_below=settings.neo4j_exact_below,
            min_candidates=settings.neo4j_vector_candidates,
        )
    return EmbeddedStore(settings.path, ann_threshold=settings.vector_ann_threshold)


__all__ = ["VECTOR_KINDS", "Direction", "EmbeddedStore", "Store", "StoreCapabilities", "no_vectors", "open_store"]
