"""Recall's candidates and the signals that come from where a candidate sits: a procedure found
through one of its steps, and a turn's relevance borrowed from its conversation (the turns beside
it, the best other turn of its session)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..settings import RecallOptions
from ..store import Store
from .recall_parts import is_question
from .scoring import relevance

STEP_MARK_COS = 0.5  # a step found by meaning is marked as the procedure's match from this cosine


@dataclass
class Candidate:
    """A node as one layer's search found it, before it is scored."""

    semantic: float | None = None
    keyword_raw: float = 0.0
    graph: float = 0.0
    via: list[str] = field(default_factory=list)
    entity: str | None = None  # the entity a graph hit mentions
    said: str | None = None  # the query's person who said this turn
    step: int | None = None  # a procedure found by one of its steps: that step's order
    name_only: bool = False  # a graph hit that matches nothing of the question but its names


def found_by_steps(store: Store, namespace: str, cands: dict[str, Candidate], by_vector: list[tuple[str, float]],
                   by_keyword: list[tuple[str, float]]) -> None:
    """Procedures found through one of their steps ("what comes after the migrations?"): a
    step's cosine and BM25 count for its procedure, and the best step is marked."""
    steps = {s.id: s for s in store.get(namespace, list({i for i, _ in [*by_vector, *by_keyword]}))
             if s.kind == "step"}
    best: dict[str, float] = {}
    for hits, by in ((by_vector, "vector"), (by_keyword, "keyword")):
        for node_id, value in hits:
            step = steps.get(node_id)
            if step is None:
                continue
            c = cands.setdefault(step.procedure_id, Candidate())
            c.via.append(by)
            if by == "vector":
                c.semantic = max(c.semantic or 0.0, value)
            else:
                c.keyword_raw = max(c.keyword_raw, value)
            if by == "vector" and value < STEP_MARK_COS:
                continue  # counts for its procedure, too far in meaning to be called its match
            mark = 1.0 + value if by == "keyword" else value  # a step that has the query's words first
            if mark > best.get(step.procedure_id, -1.0):
                best[step.procedure_id], c.step = mark, step.order


def conversation_context(store: Store, namespace: str, kept: dict, base: dict[str, float], cands: dict[str, Candidate],
                         qvec: np.ndarray, admitted, options: RecallOptions, asks: bool) -> dict[str, float]:
    """Relevance a turn takes from its conversation: a share of an adjacent turn's (the
    answer to a question often repeats none of its words; adjacent turns of the best hits
    are fetched along NEXT edges when they were not candidates) and a share of the best
    other turn of its session (evidence clusters in sessions). ``kept``, ``base`` and
    ``cands`` gain the fetched turns. In ``answers`` mode a turn borrows only from the
    question right before it, and both signals apply only when the query asks a question:
    a query that states something (a phrase, keywords) looks for the one turn that says it,
    and lifting the turns around other matches only buries that turn (MemoryBank)."""
    out: dict[str, float] = {}
    borrow = options.neighbour_turns if asks or options.neighbour_mode == "all" else 0.0
    if borrow and options.neighbour_fetch and base:
        top = sorted(base, key=lambda i: -base[i])[: options.neighbour_fetch]
        found, sims = store.turns_beside(namespace, top, qvec, set(kept))
        if found:
            fresh = [r for r in found if admitted("message", r)]
            for r in fresh:
                cands[r.id] = Candidate(semantic=max(0.0, sims.get(r.id, 0.0)), via=["context"])
                kept[r.id] = (r, 0.0)
                base[r.id] = relevance(cands[r.id].semantic, 0.0, 0.0, options.relevance)
    at = {(rec.session_id, rec.seq): i for i, (rec, _) in kept.items()}
    if borrow:
        for i, (rec, _) in kept.items():
            lent = []
            for d in (-1, 1):
                j = at.get((rec.session_id, rec.seq + d))
                if j is None:
                    continue
                if options.neighbour_mode == "answers" and not (d == -1 and is_question(kept[j][0].content)):
                    continue
                lent.append(base[j])
            if lent:
                out[i] = borrow * max(lent)
    if options.session_prior and (asks or options.neighbour_mode == "all"):
        best: dict[str, list[tuple[float, str]]] = {}  # session -> its two best turns (one pass: hundreds a session)
        for i, (rec, _) in kept.items():
            two = best.setdefault(rec.session_id, [])
            two.append((base[i], i))
            if len(two) > 2:
                two.sort(key=lambda hit: -hit[0])
                del two[2:]
        for i, (rec, _) in kept.items():
            other = max((b for b, j in best[rec.session_id] if j != i), default=0.0)
            out[i] = out.get(i, 0.0) + options.session_prior * other
    return out
