"""Near-duplicate groups among a namespace's active memories, by the write-time dedupe rules
(``rules.is_duplicate``), found without comparing every pair:

- the same subject-predicate-object: grouped by the normalised triple;
- keyword Jaccard >= 0.6 with >= 3 shared keywords: a prefix-filtering set-similarity join
  (two sets that reach the threshold share a token among their rarest few), blocked by
  subject (two subjects never make one fact), then checked. A token already in 100 of one
  subject's memories is boilerplate and pairs no more (so the pass stays near-linear);
- cosine >= ``merge_cosine``: blocked matrix products over the unit vectors, within each
  subject (and against the memories that name none), upper triangle only.

Every candidate pair is then checked with the full rule, and groups are joined strongest
pair first, never joining two values of one attribute (same subject and predicate, another
object) into one group."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from ..extract.schema import normalise_predicate
from ..models import MemoryRecord
from ..text import normalise_name
from .rules import DUP_JACCARD, DUP_SHARED, Fact, fact_of, is_duplicate

_BLOCK = 512  # rows per matrix product (512 x n float32)
# A token already in this many memories of one subject is boilerplate, not evidence of a
# duplicate: the keyword join pairs through it no more (the triple and cosine passes still run).
_MAX_POSTING = 100


def _pairs_by_triple(keys: Sequence[tuple[str | None, str | None, str | None]]) -> set[tuple[int, int]]:
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        if all(key):
            groups[key].append(i)
    return {(g[0], j) for g in groups.values() for j in g[1:]}


def _prefix(tokens: frozenset[str], freq: Counter) -> list[str]:
    """The rarest tokens a set must share with any set it reaches Jaccard ``DUP_JACCARD`` with."""
    n = len(tokens)
    return sorted(tokens, key=lambda t: (freq[t], t))[: n - math.ceil(DUP_JACCARD * n) + 1]


def _pairs_by_keywords(facts: Sequence[Fact], subjects: Sequence[str | None]) -> set[tuple[int, int]]:
    """A prefix-filtering set-similarity join, blocked by subject: facts about two different
    subjects are never duplicates, so each subject's memories are joined among themselves
    (tokens ordered by their frequency within the subject, so the subject's own name never
    fills the prefix), and with the memories that name no subject (tokens ordered globally)."""
    usable = [i for i, f in enumerate(facts) if len(f.keywords) >= DUP_SHARED]
    blocks: dict[str | None, list[int]] = defaultdict(list)
    for i in usable:
        blocks[subjects[i]].append(i)
    out: set[tuple[int, int]] = set()

    def join(members: list[int], freq: Counter) -> None:
        index: dict[str, list[int]] = defaultdict(list)
        for i in members:
            for t in _prefix(facts[i].keywords, freq):
                posting = index[t]
                if len(posting) < _MAX_POSTING:  # a full list is boilerplate: it pairs no more
                    out.update((j, i) for j in posting)
                    posting.append(i)

    global_freq = Counter(t for i in usable for t in facts[i].keywords)
    unnamed: dict[str, list[int]] = defaultdict(list)
    for i in blocks.get(None, []):
        for t in _prefix(facts[i].keywords, global_freq):
            if len(unnamed[t]) < _MAX_POSTING:
                unnamed[t].append(i)
    for subject, members in blocks.items():
        join(members, Counter(t for i in members for t in facts[i].keywords) if subject else global_freq)
        if subject is not None and unnamed:
            for i in members:
                for t in _prefix(facts[i].keywords, global_freq):
                    posting = unnamed.get(t, ())
                    if len(posting) < _MAX_POSTING:
                        out.update((min(i, j), max(i, j)) for j in posting)
    return out


def _scan(left: np.ndarray, right: np.ndarray, threshold: float, upper: bool) -> list[tuple[int, int, float]]:
    """(row, col, cosine) of the pairs of unit rows at or above ``threshold``; ``upper``: left is
    right, only pairs row < col."""
    hits: list[tuple[int, int, float]] = []
    for start in range(0, left.shape[0], _BLOCK):
        offset = start if upper else 0
        sims = left[start : start + _BLOCK] @ right[offset:].T
        rows = np.flatnonzero(sims.max(axis=1) >= threshold)  # most rows have no hit: skip them cheaply
        for r in rows.tolist():
            for c in np.flatnonzero(sims[r] >= threshold).tolist():
                i, j = start + r, offset + c
                if not upper or j > i:
                    hits.append((i, j, float(sims[r, c])))
    return hits


def _pairs_by_cosine(vectors: np.ndarray, threshold: float, subjects: Sequence[str | None]
                     ) -> dict[tuple[int, int], float]:
    """Pairs at or above ``threshold`` among memories that may be one fact: those about the same
    subject, and those that name none with every other. A namespace whose memories all share
    one subject costs one n x n pass (blocked, upper triangle)."""
    blocks: dict[str | None, list[int]] = defaultdict(list)
    for i, subject in enumerate(subjects):
        blocks[subject].append(i)
    unnamed = np.asarray(blocks.pop(None, []), dtype=np.int64)
    unnamed_mat = vectors[unnamed] if len(unnamed) else None
    out: dict[tuple[int, int], float] = {}
    for idx in [np.asarray(m, dtype=np.int64) for m in blocks.values()] + ([unnamed] if len(unnamed) else []):
        mat = vectors[idx] if len(idx) < len(vectors) else vectors
        if len(idx) > 1:
            for r, c, v in _scan(mat, mat, threshold, upper=True):
                out[(int(idx[r]), int(idx[c]))] = v
        if unnamed_mat is not None and idx is not unnamed:
            for r, c, v in _scan(mat, unnamed_mat, threshold, upper=False):
                a, b = int(idx[r]), int(unnamed[c])
                out[(min(a, b), max(a, b))] = v
    return out


def find_groups(memories: Sequence[MemoryRecord], vectors: np.ndarray | None, paraphrase_cos: float
                ) -> list[tuple[list[int], dict[int, str]]]:
    """Groups of indexes into ``memories`` that are one fact, each with the reason each
    member joined. ``vectors``: unit rows aligned with ``memories`` (NaN rows: none)."""
    facts = [Fact(m.id, m.text, frozenset(m.keywords), m.subject, m.predicate, m.object) if m.keywords
             else fact_of(m.id, m.text, m.subject, m.predicate, m.object) for m in memories]
    keys = [(normalise_name(m.subject) if m.subject else None, normalise_predicate(m.predicate) if m.predicate else None,
             normalise_name(m.object) if m.object else None) for m in memories]
    subjects = [k[0] or None for k in keys]
    vecs = np.nan_to_num(np.asarray(vectors, dtype=np.float32), nan=0.0) if vectors is not None else None
    cos = _pairs_by_cosine(vecs, paraphrase_cos, subjects) if vecs is not None and len(memories) > 1 else {}
    pairs = [(i, j) for i, j in _pairs_by_triple(keys) | _pairs_by_keywords(facts, subjects) | set(cos)
             if not (subjects[i] and subjects[j] and subjects[i] != subjects[j])]  # two subjects: never one fact
    sims = np.zeros(len(pairs), dtype=np.float32)
    if vecs is not None and pairs:
        left, right = np.asarray(pairs, dtype=np.int64).T
        for start in range(0, len(pairs), 100_000):  # cosines of every candidate pair, in bulk
            a, b = left[start : start + 100_000], right[start : start + 100_000]
            sims[start : start + 100_000] = np.einsum("ij,ij->i", vecs[a], vecs[b])
    checked: list[tuple[float, int, int, str]] = []
    for (i, j), c in zip(pairs, sims.tolist()):
        why = is_duplicate(facts[i], facts[j], c, paraphrase_cos)
        if why:
            strength = 2.0 if why == "same fact" else 1.0 + c
            checked.append((strength, min(i, j), max(i, j), why))
    checked.sort(key=lambda t: (-t[0], t[1], t[2]))

    parent = list(range(len(memories)))
    members: dict[int, list[int]] = {}
    values: dict[int, dict[tuple[str, str], str]] = {}  # root -> (subject, predicate) -> object, and its subject
    reasons: dict[int, str] = {}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def attributes(r: int) -> dict[tuple[str, str], str]:
        if r not in values:
            s, p, o = keys[r]
            values[r] = {("", ""): s} if s else {}  # one subject per group
            if s and p and o:
                values[r][(s, p)] = o
        return values[r]

    for _, i, j, why in checked:
        ri, rj = root(i), root(j)
        if ri == rj:
            continue
        va, vb = attributes(ri), attributes(rj)
        if any(k in va and va[k] != o for k, o in vb.items()):
            continue  # two subjects, or two values of one attribute, never end up in one group
        if len(members.get(ri, ())) < len(members.get(rj, ())):
            ri, rj, va, vb = rj, ri, vb, va  # the smaller group joins the larger: linear overall
        parent[rj] = ri
        members.setdefault(ri, [ri]).extend(members.pop(rj, [rj]))
        va.update(vb)
        reasons.setdefault(i, why)
        reasons.setdefault(j, why)
    return [(sorted(group), {k: reasons.get(k, "") for k in group}) for group in members.values() if len(group) > 1]
