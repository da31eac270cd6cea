"""Recall, scoring and context assembly: plain functions over the models, shared by every backend."""

from .context import assemble
from .graph import find_entity, history, neighbourhood
from .recall import Recaller, RecallResult
from .scoring import frequency, held_at, merge_layers, recency, relevance, score

__all__ = [
    "RecallResult", "Recaller", "assemble", "find_entity", "frequency", "held_at", "history", "merge_layers",
    "neighbourhood", "recency", "relevance", "score",
]
