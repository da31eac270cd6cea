"""graphmem's exception tree.

Every error graphmem raises on purpose is a ``GraphMemError``. Backend errors
(sqlite3, neo4j) and pydantic validation errors are mapped at the edge with
``raise ... from exc`` so callers only ever need to catch this tree.
"""

from __future__ import annotations


class GraphMemError(Exception):
    """Root of every error graphmem raises."""


class ValidationError(GraphMemError, ValueError):
    """Input that graphmem refuses: empty or oversized text, bad vectors, malformed records."""


class ImportFormatError(ValidationError):
    """A line of an import file that could not be read; carries its line number."""

    def __init__(self, line: int, reason: str, message: str | None = None) -> None:
        super().__init__(message or f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class NotFoundError(GraphMemError, LookupError):
    """An id or a name that does not exist in the namespace asked for."""


class NamespaceNotFoundError(NotFoundError):
    """A namespace nothing was ever written to."""


class ConfigurationError(GraphMemError):
    """Settings that cannot work: unknown backend, embedder mismatch with the store, missing model."""


class StoreError(GraphMemError):
    """The storage backend failed (I/O, locking, corruption)."""


class ConflictError(StoreError):
    """The write conflicts with what is stored (a session id taken, a name that means two
    entities, a record another writer changed); nothing was written."""


class WriteRace(ConflictError):
    """Another writer (a thread with its own ``Memory``, another process) changed a record this
    write was computed from, or created an entity it was about to create; nothing was written.
    graphmem runs such a write again itself, on what is stored now."""


class EmbeddingError(GraphMemError):
    """The embedding model failed or produced unusable vectors."""


class ExtractionError(GraphMemError):
    """The extractor could not answer for a window: the model would not load, the server kept
    failing after its retries, or the reply was unusable. The window is recorded as failed with
    this reason and can be retried."""


class ModelLoadError(ExtractionError, ConfigurationError):
    """The extraction model could not be loaded (missing package or file, unreadable GGUF)."""
