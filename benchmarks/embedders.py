"""Which embedder should be the default? Speed, score separation and dense retrieval on LoCoMo.

    python benchmarks/embedders.py [--locomo ../shared/bench/locomo/locomo10.json]

For each embedder: sentences/s on LoCoMo turns (batches of 256), the cosine of related and
unrelated English/Chinese pairs, and evidence recall@10 of dense retrieval alone over the raw
turns of each conversation (categories 1-4), the number the LoCoMo benchmark's README quotes.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np

from graphmem.embed import make_embedder

PAIRS = [  # (a, b, related?)
    ("User prefers TypeScript over JavaScript", "用户更喜欢 TypeScript 而不是 JavaScript", True),
    ("I'm allergic to peanuts", "我对花生过敏", True),
    ("Where does Ann work?", "Ann is an engineer at Northwind", True),
    ("User prefers TypeScript over JavaScript", "The weather in Paris is sunny", False),
    ("我对花生过敏", "下个月我要去上海出差", False),
    ("Where does Ann work?", "Bob's cat knocked over a plant", False),
]


def evidence_ids(raw: list[str]) -> set[str]:
    """LoCoMo evidence ids, normalised: 'D8:6; D9:17' splits, 'D:11:26' and 'D30:05' mend."""
    out = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if m:
                out.add(f"D{m.group(1)}:{m.group(2)}")
    return out


def load_locomo(path: Path):
    data = json.loads(path.read_text(encoding="utf-8"))
    for conv in data:
        c = conv["conversation"]
        turns = [(t["dia_id"], t["text"]) for k, v in c.items() if re.fullmatch(r"session_\d+", k) for t in v]
        qs = [(q["question"], evidence_ids(q.get("evidence", []))) for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)]
        yield turns, [q for q in qs if q[1]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", type=Path, default=Path(__file__).resolve().parents[2] / "shared/bench/locomo/locomo10.json")
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
