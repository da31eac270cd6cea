"""What OpenBLAS's worker threads cost a recall: wall time and the client's CPU per context()
with numpy's default BLAS threads and with one, on both backends.

    python benchmarks/blas_threads.py                       # embedded and neo4j, 10k memories
    python benchmarks/blas_threads.py --backends embedded --size 100000

OpenBLAS workers spin for a while after each call waiting for the next one; on a machine whose
cores a Neo4j server (or the application) shares, that spinning is CPU taken from them. The
client's CPU is the process's CPU time over a block of queries (every thread, the spinning
included) divided by the queries. Prints a markdown table; medians and p95 of one run, each
setting run as two blocks of half the queries, alternating (A B A B), so the machine's noise
falls on both alike.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from recall_latency import open_memory, people, synth_memories


def measure(backend: str, size: int, workdir: Path, queries: int) -> list[dict]:
    rng = random.Random(size)
    mem = open_memory(backend, size, workdir)
    ns = f"blas{size}"
    if not mem.store.has_namespace(ns):
        rows = synth_memories(size, rng)
        for i in range(0, size, 1000):
            mem.remember_many(rows[i : i + 1000], namespace=ns)
    pop = people(300, random.Random(1))
    qs = [rng.choice(["What does {p} prefer?", "Where does {p} work?", "Who manages {p}?",
                      "Which trip is {p} planning?"]).format(p=rng.choice(pop)) for _ in range(queries)]
    for q in qs[:20]:
        mem.context(q, namespace=ns)
    wall: dict[str, list[float]] = {"default": [], "1 thread": []}
    cpu = {name: 0.0 for name in wall}
    for half in (qs[: len(qs) // 2], qs[len(qs) // 2 :]):  # A B A B: each setting a whole block, twice
        for name, limit in (("default", None), ("1 thread", 1)):
            with threadpool_limits(limits=limit, user_api="blas"):
                c0 = time.process_time()
                for q in half:
                    t0 = time.perf_counter()
                    mem.context(q, namespace=ns)
                    wall[name].append((time.perf_counter() - t0) * 1000)
                cpu[name] += time.process_time() - c0
    if backend == "neo4j":
        mem.store.delete_namespace(ns)
    mem.close()
    return [{"column": f"{backend} {size:,}, BLAS {name}", "context p50 ms": float(np.percentile(wall[name], 50)),
             "context p95 ms": float(np.percentile(wall[name], 95)),
             "client CPU ms per context": cpu[name] / len(qs) * 1000} for name in wall]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--backends", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dir", type=Path, default=None, help="where the embedded store goes (kept for reruns)")
    args = ap.parse_args()
    blas = [f"{i['internal_api']} {i['version']}, {i['num_threads']} threads" for i in threadpool_info()
            if i["user_api"] == "blas"]
    print("BLAS:", "; ".join(blas) or "none found")
    with tempfile.TemporaryDirectory(prefix="graphmem-blas-") as tmp:
        workdir = args.dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        rows = [r for b in args.backends for r in measure(b, args.size, workdir, args.queries)]
    keys = [k for k in rows[0] if k != "column"]
    print("| | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for r in rows:
        print(f"| {r['column']} | " + " | ".join(f"{r[k]:.1f}" for k in keys) + " |")


if __name__ == "__main__":
    main()
