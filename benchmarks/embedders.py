"""Which embedder should be the default? Speed, score separation and dense retrieval on LoCoMo.

    python benchmarks/embedders.py [--locomo ../shared/bench/locomo/locomo10.json]

For each embedder: sentences/s on LoCoMo turns (batches of 256), the cosine of related and
unrelated English/Chinese pairs, and evidence recall@10 of dense retrieval alone over the raw
turns of each conversation (categories 1-4), the number the LoCoMo benchmark's README quotes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import locomo_data

from graphmem.embed import make_embedder

PAIRS = [  # (a, b, related?)
    ("User prefers TypeScript over JavaScript", "用户更喜欢 TypeScript 而不是 JavaScript", True),
    ("I'm allergic to peanuts", "我对花生过敏", True),
    ("Where does Ann work?", "Ann is an engineer at Northwind", True),
    ("User prefers TypeScript over JavaScript", "The weather in Paris is sunny", False),
    ("我对花生过敏", "下个月我要去上海出差", False),
    ("Where does Ann work?", "Bob's cat knocked over a plant", False),
]


def load_locomo(path: Path):
    for conv in locomo_data.load(path):
        qs = [(q.text, q.evidence) for q in conv.questions if q.category in (1, 2, 3, 4) and q.evidence]
        yield [(t.id, t.text) for t in conv.turns], qs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", type=Path, default=locomo_data.DEFAULT_PATH)
    ap.add_argument("--embedders", nargs="+", default=["use", "e5"])
    args = ap.parse_args()
    convs = list(load_locomo(args.locomo))
    rows = []
    for name in args.embedders:
        emb = make_embedder(name)
        a = emb.embed([p[0] for p in PAIRS])
        b = emb.embed([p[1] for p in PAIRS])
        sims = np.einsum("ij,ij->i", a, b)
        related = [s for s, p in zip(sims, PAIRS) if p[2]]
        unrelated = [s for s, p in zip(sims, PAIRS) if not p[2]]
        hits, n, texts_done, secs = 0.0, 0, 0, 0.0
        for turns, questions in convs:
            t0 = time.perf_counter()
            tv = np.vstack([emb.embed([t for _, t in turns[i : i + 256]]) for i in range(0, len(turns), 256)])
            secs += time.perf_counter() - t0
            texts_done += len(turns)
            qv = emb.embed([q for q, _ in questions], query=True)
            ids = [d for d, _ in turns]
            for (q, ev), v in zip(questions, qv):
                top = np.argsort(-(tv @ v))[:10]
                hits += len(ev & {ids[i] for i in top}) / len(ev)
                n += 1
        rows.append((emb.name, emb.dim, texts_done / secs, min(related), max(unrelated), hits / n, n))
    print("| embedder | dim | turns/s | related cos (min) | unrelated cos (max) | LoCoMo dense recall@10 |")
    print("|---|---|---|---|---|---|")
    for name, dim, speed, rel, unrel, recall, n in rows:
        print(f"| {name} | {dim} | {speed:,.0f} | {rel:.2f} | {unrel:.2f} | {recall:.3f} |")
    print(f"\n{rows[0][-1]} questions (categories 1-4), each searched within its own conversation; one run.")


if __name__ == "__main__":
    main()
