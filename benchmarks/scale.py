"""How latency and memory grow with the store: 10k, 100k and 1M memories, embedded backend.

    python benchmarks/scale.py                      # 10k, 100k, 1M (1M writes take ~20 minutes here)
    python benchmarks/scale.py --sizes 10000 100000

One store grows through the sizes (writes in batches of 1,000, timed). At each size the vector
graphs due are built or merged (timed: in use they build in the background while searches scan
exactly), 100 context() calls are timed (p50/p95) and the process's peak resident memory is read.
Then a second handle on the same file with the graphs off (exact scans) answers the same
questions: its context latency, and the recall of the graph's vector top 10 and top 50 against
its exact ones. Prints a table and writes a PNG of latency against size to --out.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_latency import people, synth_memories  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.models import Status  # noqa: E402
from graphmem.settings import Settings  # noqa: E402


def timed_contexts(mem: Memory, qs: list[str]) -> list[float]:
    for q in qs[:5]:
        mem.context(q, namespace="scale")
    ms = []
    for q in qs:
        t = time.perf_counter()
        mem.context(q, namespace="scale", budget=1500)
        ms.append((time.perf_counter() - t) * 1000)
    return ms


def vector_recall(graph: Memory, exact: Memory, qs: list[str], k: int) -> float:
    """Mean share of the graph's vector top k that belongs in the exact top k: as similar as the
    exact k-th or more (the synthetic memories repeat sentences, so the exact top k's last places
    are ties that any of the tied rows fills equally well; scores are exact on both sides)."""
    got = []
    for q in qs:
        v = exact.embedder.embed([q], query=True)[0]
        kth = exact.store.vector_search("scale", "memory", v, k, [Status.active])[-1][1]
        have = graph.store.vector_search("scale", "memory", v, k, [Status.active])
        got.append(sum(sim >= kth - 1e-6 for _, sim in have) / k)
    return float(np.mean(got))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--ann-threshold", type=int, default=50_000,
                    help="vectors of a kind before the HNSW graph is used (graphmem's default)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = ap.parse_args()
    rng = random.Random(7)
    pop = people(300, random.Random(1))
    templates = ["What does {p} prefer?", "Where does {p} work?", "Who manages {p}?", "What is {p} allergic to?"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="graphmem-scale-") as tmp:
        mem = Memory(Path(tmp) / "scale.db", settings=Settings(extraction="off", vector_ann_threshold=args.ann_threshold))
        have, write_s = 0, 0.0
        for size in sorted(args.sizes):
            batch = synth_memories(size - have, rng)
            t0 = time.perf_counter()
            for i in range(0, len(batch), 1000):
                mem.remember_many(batch[i : i + 1000], namespace="scale")
            write_s = time.perf_counter() - t0
            rate = (size - have) / write_s if size > have else float("nan")
            have = size
            qs = [rng.choice(templates).format(p=rng.choice(pop)) for _ in range(args.queries)]
            mem.context(qs[0], namespace="scale")  # loads the vectors
            t0 = time.perf_counter()
            mem.store.settle()
            graph_s = time.perf_counter() - t0
            ms = timed_contexts(mem, qs)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            exact = Memory(Path(tmp) / "scale.db", settings=Settings(extraction="off", vector_ann_threshold=0))
            exact_ms = timed_contexts(exact, qs)
            mem.context(qs[0], namespace="scale")  # the other handle's writes (access counts) made this one reload
            mem.store.settle()
            at10, at50 = vector_recall(mem, exact, qs, 10), vector_recall(mem, exact, qs, 50)
            exact.close()
            disk = sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file()) / 2**20
            rows.append((size, rate, graph_s, float(np.percentile(ms, 50)), float(np.percentile(ms, 95)),
                         float(np.percentile(exact_ms, 50)), float(np.percentile(exact_ms, 95)), at10, at50, peak, disk))
            print(f"{size:,} done", file=sys.stderr, flush=True)
        mem.close()
    print("| memories | writes/s | graph build/merge s | context p50 / p95 ms | exact scans: context p50 / p95 ms | "
          "vector recall@10 / @50 vs exact | peak RSS MiB | disk MiB (file + graphs) |")
    print("|---|---|---|---|---|---|---|---|")
    for size, rate, graph_s, p50, p95, e50, e95, at10, at50, peak, mib in rows:
        print(f"| {size:,} | {rate:,.0f} | {graph_s:.1f} | {p50:.1f} / {p95:.1f} | {e50:.1f} / {e95:.1f} | "
              f"{at10:.3f} / {at50:.3f} | {peak:,.0f} | {mib:,.0f} |")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        sizes = [r[0] for r in rows]
        ax.plot(sizes, [r[3] for r in rows], "o-", label="context p50")
        ax.plot(sizes, [r[4] for r in rows], "o-", label="context p95")
        ax.plot(sizes, [r[5] for r in rows], "o--", label="context p50, exact scans")
        ax.plot(sizes, [r[6] for r in rows], "o--", label="context p95, exact scans")
        ax.set_xscale("log")
        ax.set_xlabel("memories in the namespace")
        ax.set_ylabel("ms")
        ax.set_title("graphmem context() latency, embedded store")
        ax.legend()
        fig.tight_layout()
        args.out.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.out / "scale.png", dpi=120)
    except ImportError:
        pass


if __name__ == "__main__":
    main()
