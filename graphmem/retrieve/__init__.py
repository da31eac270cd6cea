"""Recall, scoring and context assembly: plain functions over the models, shared by every backend."""

from .context import assemble
from .recall import Recaller, RecallResult, merge_layers
from .scoring import frequency, recency, relevance, score

__all__ = ["RecallResult", "Recaller", "assemble", "frequency", "merge_layers", "recency", "relevance", "score"]
