"""Vector recall inside one tenant on Neo4j: many tenants share each HNSW index.

    python benchmarks/neo4j_tenants.py --uri bolt://127.0.0.1:7687            # 100k in 20 tenants
    python benchmarks/neo4j_tenants.py --uri ... --size 20000 --queries 30

The memories of ``benchmarks/recall_latency.py`` (its synthetic facts about 300 people) are
embedded once with graphmem's default embedder (cached in --cache) and written straight through
the store (``put``, batches of 1,000) into 20 namespaces of mixed sizes (a Zipf-like split: the
largest holds ~28%, the smallest ~0.4%). For every tenant, questions about the synthetic
people are asked of ``vector_search`` (k = 10, active memories) as a recall asks it, and of an
exact scan of the tenant (the store with ``exact_below`` above any size): recall@10 is the
share of the approximate top 10 as similar as the exact 10th or more (ties among repeated
sentences count as found), with the latency of each search. Prints one row per tenant and the
mean over tenants, and names the server's version and the search path the store took.
Runs in namespaces ``tenants-NN``, which it empties first and, with --drop, deletes after.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_latency import questions, synth_memories  # noqa: E402

from graphmem.embed import make_embedder  # noqa: E402
from graphmem.models import MemoryRecord, Status  # noqa: E402
from graphmem.settings import Settings  # noqa: E402
from graphmem.store.neo4j import Neo4jStore  # noqa: E402


def tenant_sizes(size: int, tenants: int) -> list[int]:
    """Zipf-like shares (1/rank), every tenant at least 20 memories; they add up to ``size``."""
    weights = np.array([1.0 / (rank + 1) for rank in range(tenants)])
    sizes = np.maximum(20, np.floor(size * weights / weights.sum())).astype(int)
    sizes[0] += size - int(sizes.sum())
    return [int(s) for s in sizes]


def embedded_memories(size: int, cache: Path, embedder_name: str) -> tuple[list[dict], np.ndarray]:
    memories = synth_memories(size, random.Random(7))
    path = cache / f"tenants-{size}-{embedder_name.replace('/', '_')}.npy"
    if path.exists():
        return memories, np.load(path)
    embedder = make_embedder(embedder_name)
    t0 = time.perf_counter()
    vectors = np.concatenate([embedder.embed([m["text"] for m in memories[i : i + 2000]])
                              for i in range(0, size, 2000)])
    print(f"embedded {size:,} memories in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return memories, vectors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=Settings().neo4j_uri)
    secret = Settings().neo4j_password
    ap.add_argument("--password", default=secret.get_secret_value() if secret else "graphmem-dev")
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--tenants", type=int, default=20)
    ap.add_argument("--queries", type=int, default=20, help="questions per tenant")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--cache", type=Path, default=Path("benchmarks/out"))
    ap.add_argument("--skip-write", action="store_true", help="the tenants are written already")
    ap.add_argument("--drop", action="store_true", help="delete the tenants' namespaces at the end")
    args = ap.parse_args()

    settings = Settings()
    embedder = make_embedder(settings.embedder)
    store = Neo4jStore(args.uri, "neo4j", args.password)
    store.init(embedder=embedder.name, dim=embedder.dim)
    exact = Neo4jStore(args.uri, "neo4j", args.password, exact_below=2**62)
    exact.init(embedder=embedder.name, dim=embedder.dim)
    sizes = tenant_sizes(args.size, args.tenants)
    names = [f"tenants-{i:02d}" for i in range(args.tenants)]
    if not args.skip_write:
        memories, vectors = embedded_memories(args.size, args.cache, settings.embedder)
        order = np.random.default_rng(3).permutation(args.size)  # tenants draw from the same facts
        start, t0 = 0, time.perf_counter()
        for name, n in zip(names, sizes):
            if store.has_namespace(name):
                store.delete_namespace(name)
            rows = order[start : start + n]
            start += n
            for i in range(0, n, 1000):
                chunk = rows[i : i + 1000]
                records = [MemoryRecord(namespace=name, text=memories[j]["text"], importance=memories[j]["importance"])
                           for j in chunk]
                store.put(name, records, vectors[chunk])
        print(f"wrote {args.size:,} memories in {args.tenants} tenants: {args.size / (time.perf_counter() - t0):.0f}/s",
              file=sys.stderr)

    qs = questions(args.queries * args.tenants, random.Random(11))
    qv = embedder.embed(qs, query=True)
    print(f"server {store.server_version_text} · search path: {store.vector_path} · k={args.k}")
    print("| tenant | memories | share | recall@10 | ms p50 | ms p95 | exact ms p50 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    recalls, all_ms = [], []
    for t, (name, n) in enumerate(zip(names, sizes)):
        got, ms, exact_ms = [], [], []
        for v in qv[t * args.queries : (t + 1) * args.queries]:
            t0 = time.perf_counter()
            truth = exact.vector_search(name, "memory", v, args.k, [Status.active])
            exact_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            have = store.vector_search(name, "memory", v, args.k, [Status.active])
            ms.append((time.perf_counter() - t0) * 1000)
            kth = truth[-1][1]
            got.append(sum(sim >= kth - 1e-6 for _, sim in have) / len(truth))
        recalls.append(float(np.mean(got)))
        all_ms += ms
        print(f"| {name} | {n:,} | {n / args.size:.1%} | {recalls[-1]:.3f} | {np.percentile(ms, 50):.1f} "
              f"| {np.percentile(ms, 95):.1f} | {np.percentile(exact_ms, 50):.1f} |")
    print(f"| mean over tenants | {args.size:,} | | {np.mean(recalls):.3f} | {np.percentile(all_ms, 50):.1f} "
          f"| {np.percentile(all_ms, 95):.1f} | |")
    print(f"worst tenant recall@10: {min(recalls):.3f}")
    if args.drop:
        for name in names:
            store.delete_namespace(name)
    store.close()
    exact.close()


if __name__ == "__main__":
    main()
