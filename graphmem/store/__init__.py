"""Storage backends behind one protocol."""

from .base import Direction, Store
from .embedded import EmbeddedStore

__all__ = ["Direction", "EmbeddedStore", "Store"]
