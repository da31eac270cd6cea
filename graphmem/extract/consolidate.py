"""What to do with an extracted memory given the similar memories already stored: plain
rules, shared by every backend.

- merge (duplicate): keyword Jaccard >= 0.6 with >= 3 shared keywords, the same
  subject-predicate-object, or a near paraphrase (cosine >= 0.9);
- supersede (override): same subject and predicate with a new object, or the same endpoints
  with a new predicate, *and* about the same thing: cosine >= 0.55, or >= 0.2 when the
  predicate names one attribute (``prefers_language``, not a bare ``prefers``). Two memories
  that merely look alike never supersede each other;
- add (coexist): everything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..text import normalise_name
from .schema import normalise_predicate

DUP_JACCARD = 0.6
DUP_SHARED = 3
PARAPHRASE_COS = 0.9
SAME_TOPIC_COS = 0.55
SPECIFIC_TOPIC_COS = 0.2


@dataclass(frozen=True)
class Fact:
    """The fields the rules read, for a stored memory or a candidate alike."""

    id: str
    text: str
    keywords: frozenset[str]
    subject: str | None
    predicate: str | None
    object: str | None


@dataclass(frozen=True)
class Decision:
    action: Literal["add", "merge", "supersede"]
    target: str | None = None
    reason: str = ""


def keyword_overlap(a: frozenset[str], b: frozenset[str]) -> tuple[float, int]:
    shared = len(a & b)
    union = len(a | b)
    return (shared / union if union else 0.0), shared


def _same(a: str | None, b: str | None, predicate: bool = False) -> bool:
    if not a or not b:
        return False
    return normalise_predicate(a) == normalise_predicate(b) if predicate else normalise_name(a) == normalise_name(b)


def decide(candidate: Fact, similar: Sequence[tuple[Fact, float]]) -> Decision:
    """``similar``: stored active memories with their cosine to the candidate, best first."""
    for old, cos in similar:
        jac, shared = keyword_overlap(candidate.keywords, old.keywords)
        same_sp = _same(candidate.subject, old.subject) and _same(candidate.predicate, old.predicate, True)
        same_triple = same_sp and _same(candidate.object, old.object)
        if same_sp and candidate.object and old.object and not same_triple:
            continue  # a new value for the same attribute is never a duplicate, however alike the words
        if (jac >= DUP_JACCARD and shared >= DUP_SHARED) or same_triple or cos >= PARAPHRASE_COS:
            why = "same fact" if same_triple else f"keyword jaccard {jac:.2f}" if shared >= DUP_SHARED else f"cosine {cos:.2f}"
            return Decision("merge", old.id, why)
    for old, cos in similar:
        # a specific predicate (prefers_language) names one attribute; a bare verb (prefers,
        # likes, has) covers many, so only a memory about the same thing may be replaced
        specific = "_" in normalise_predicate(candidate.predicate or "")
        if cos < (SPECIFIC_TOPIC_COS if specific else SAME_TOPIC_COS) or not _same(candidate.subject, old.subject):
            continue
        if _same(candidate.predicate, old.predicate, True) and not _same(candidate.object, old.object):
            return Decision("supersede", old.id, f"{old.predicate}: {old.object} -> {candidate.object}")
        if _same(candidate.object, old.object) and candidate.predicate and not _same(candidate.predicate, old.predicate, True):
            return Decision("supersede", old.id, f"{old.subject} -> {old.object}: {old.predicate} -> {candidate.predicate}")
    return Decision("add")
