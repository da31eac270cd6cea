"""How latency and memory grow with the store: 10k, 100k and 1M memories, on both backends.

    python benchmarks/scale.py                      # 10k, 100k, 1M on both (1M writes take ~20 minutes here)
    python benchmarks/scale.py --sizes 10000 100000 --backends neo4j

One store grows through the sizes (writes in batches of 1,000, timed). At each size the vector
graphs due are built or merged (embedded; timed: in use they build in the background while
searches scan exactly), 100 context() calls are timed (p50/p95) and peak resident memory is read
(the client's; on Neo4j also the server's, from the pid file ``scripts/neo4j-dev`` writes). Then a
second handle with the approximate index off (exact scans: embedded ``vector_ann_threshold=0``,
Neo4j ``neo4j_exact_below`` above any size) answers the same questions: its context latency, and
the recall of the index's vector top 10 and top 50 against its exact ones. Neo4j runs against
the server the settings name (``GRAPHMEM_NEO4J_URI``, ...) in the namespace ``scale``, which it
empties first and drops at the end (``--keep`` leaves it, ``--reuse`` measures it again
without writing; the embedded store does the same in ``--dir``). Prints a table and writes a PNG
of latency against size to --out.

    python benchmarks/scale.py --sizes 1000000 --backends embedded --embed-cache --dir D --keep
    python benchmarks/scale.py --sizes 1000000 --backends embedded --dir D --keep --reuse

Neo4j's exact scan reads every vector property on the server (~3 s a context at 100k), so above
``--neo4j-exact-contexts`` memories its exact-scan contexts are not timed, and its recall is
always counted against an exact top k computed here, in numpy, over the vectors the benchmark
wrote (every synthetic memory stays active).

``--embed-cache`` embeds each distinct sentence once: the synthetic memories repeat sentences
(194,378 distinct in 1M), so without it writes/s at 1M measures the embedding model, not the
store. The writes still go through ``remember_many`` whole (tagging, entities, edges, the store).

    python benchmarks/scale.py --sizes 100000 1000000 --backends neo4j --embed-cache
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_latency import QUESTIONS, questions, synth_memories  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.models import Status  # noqa: E402
from graphmem.settings import Settings  # noqa: E402


class RepeatCache:
    """The embedder's ``embed`` with a memory of the texts it has embedded (``--embed-cache``),
    and the exact truth over what was written: its distinct sentences and how often each was."""

    def __init__(self, embedder: Any, enabled: bool) -> None:
        self.embedder, self.raw, self.memo, self.enabled = embedder, embedder.embed, {}, enabled
        self.counts: dict[str, int] = {}
        self._matrix: np.ndarray | None = None  # the distinct sentences' vectors, built once per size
        if enabled:
            embedder.embed = self.embed

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if (t, query) not in self.memo]
        if missing:
            self.memo.update(((t, query), v) for t, v in zip(missing, self.raw(missing, query=query)))
        return np.stack([self.memo[(t, query)] for t in texts])

    def wrote(self, texts: list[str]) -> None:
        for t in texts:
            self.counts[t] = self.counts.get(t, 0) + 1
        self._matrix = None

    def kth_similarities(self, queries: np.ndarray, k: int) -> list[float]:
        """For each query, the exact k-th best cosine over every memory written (a sentence
        written n times is n memories)."""
        texts = list(self.counts)
        if self._matrix is None:  # asked for k = 10 and 50: embedded (or stacked) once
            self._matrix = self.embed(texts) if self.enabled else self.raw(texts)
        matrix = self._matrix
        counts = np.array([self.counts[t] for t in texts])
        out = []
        for sims in queries @ matrix.T:
            order = np.argsort(-sims)
            out.append(float(sims[order[np.searchsorted(np.cumsum(counts[order]), k)]]))
        return out


def timed_contexts(mem: Memory, qs: list[str]) -> list[float]:
    for q in qs[:5]:
        mem.context(q, namespace="scale")
    ms = []
    for q in qs:
        t = time.perf_counter()
        mem.context(q, namespace="scale", budget=1500)
        ms.append((time.perf_counter() - t) * 1000)
    return ms


def vector_recall(graph: Memory, truth: Memory | RepeatCache, qs: list[str], k: int) -> float:
    """Mean share of the graph's vector top k that belongs in the exact top k: as similar as the
    exact k-th or more (the synthetic memories repeat sentences, so the exact top k's last places
    are ties that any of the tied rows fills equally well; scores are exact on both sides). The
    truth is a handle scanning exactly (tolerance 1e-6) or the cosines computed here (1e-5: the
    server's float arithmetic against numpy's)."""
    vs = graph.embedder.embed(qs, query=True)
    if isinstance(truth, RepeatCache):
        kths, tol = truth.kth_similarities(vs, k), 1e-5
    else:
        kths = [truth.store.vector_search("scale", "memory", v, k, [Status.active])[-1][1] for v in vs]
        tol = 1e-6
    got = []
    for v, kth in zip(vs, kths):
        have = graph.store.vector_search("scale", "memory", v, k, [Status.active])
        got.append(sum(sim >= kth - tol for _, sim in have) / k)
    return float(np.mean(got))


ROOT = Path(__file__).resolve().parent.parent


def server_peak_mib(pid_file: Path) -> float:
    """The Neo4j server's peak resident memory (VmHWM), where it runs here."""
    try:
        status = Path(f"/proc/{int(pid_file.read_text().strip())}/status").read_text()
    except (OSError, ValueError):
        return float("nan")
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), float("nan"))


def dir_mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20 if path.exists() else float("nan")


def run(backend: str, sizes: list[int], args: argparse.Namespace, tmp: Path) -> list[tuple]:
    rng = random.Random(7)  # the same memories and questions on both backends

    def open_memory(exact: bool) -> Memory:
        if backend == "embedded":
            return Memory(tmp / "scale.db", settings=Settings(
                extraction="off", vector_ann_threshold=0 if exact else args.ann_threshold))
        knobs: dict[str, Any] = {"neo4j_exact_below": 2**62} if exact else {}
        return Memory(settings=Settings(backend="neo4j", extraction="off", **knobs))

    mem = open_memory(exact=False)
    written = RepeatCache(mem.embedder, args.embed_cache)
    reuse = args.reuse and mem.store.has_namespace("scale")
    if mem.store.has_namespace("scale") and not reuse:
        mem.store.delete_namespace("scale")
    rows, have = [], 0
    for size in sorted(sizes):
        batch = synth_memories(size - have, rng)
        held = mem.store.count("scale", edges=False).get("memory", 0) if reuse else size
        if held != size:
            raise SystemExit(f"--reuse: the namespace 'scale' holds {held:,} memories, not {size:,}")
        t0 = time.perf_counter()
        if not reuse:
            for i in range(0, len(batch), 1000):
                mem.remember_many(batch[i : i + 1000], namespace="scale")
        write_s = time.perf_counter() - t0
        rate = (size - have) / write_s if size > have and not reuse else float("nan")
        have = size
        written.wrote([m["text"] for m in batch])
        qs = questions(args.queries, rng, QUESTIONS[:4])
        mem.context(qs[0], namespace="scale")  # loads the vectors
        graph_s = float("nan")
        if backend == "embedded":
            t0 = time.perf_counter()
            mem.store.settle()
            graph_s = time.perf_counter() - t0
        ms = timed_contexts(mem, qs)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        exact_ms = [float("nan")]
        if backend == "embedded" or size <= args.neo4j_exact_contexts:
            exact = open_memory(exact=True)
            exact_ms = timed_contexts(exact, qs)
            if backend == "embedded":
                mem.context(qs[0], namespace="scale")  # the other handle's writes (access counts) made this one reload
                mem.store.settle()
                at10, at50 = vector_recall(mem, exact, qs, 10), vector_recall(mem, exact, qs, 50)
            exact.close()
        if backend == "neo4j":
            at10, at50 = vector_recall(mem, written, qs, 10), vector_recall(mem, written, qs, 50)
        if backend == "embedded":
            server, disk = float("nan"), dir_mib(tmp)
        else:
            server, disk = server_peak_mib(args.neo4j_dir / "server.pid"), dir_mib(args.neo4j_dir / "data")
        rows.append((backend, size, rate, graph_s, float(np.percentile(ms, 50)), float(np.percentile(ms, 95)),
                     float(np.percentile(exact_ms, 50)), float(np.percentile(exact_ms, 95)), at10, at50, peak, server,
                     disk))
        print(f"{backend} {size:,} done", file=sys.stderr, flush=True)
    if not args.keep and (backend == "neo4j" or args.dir is not None):
        mem.store.delete_namespace("scale")
    mem.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--backends", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--ann-threshold", type=int, default=50_000,
                    help="vectors of a kind before the HNSW graph is used (graphmem's default)")
    ap.add_argument("--neo4j-dir", type=Path, default=ROOT / ".neo4j-dev",
                    help="the Neo4j server's directory, for its peak memory and disk size (scripts/neo4j-dev's)")
    ap.add_argument("--neo4j-exact-contexts", type=int, default=100_000,
                    help="time Neo4j's exact-scan contexts up to this many memories (~3 s each at 100k)")
    ap.add_argument("--embed-cache", action="store_true",
                    help="embed each distinct sentence once (the synthetic memories repeat sentences)")
    ap.add_argument("--keep", action="store_true",
                    help="leave the namespace 'scale' in place (Neo4j: for benchmarks/neo4j_profile.py; embedded: in --dir)")
    ap.add_argument("--reuse", action="store_true",
                    help="measure a namespace a --keep run left (one size, the one it holds) without writing it again")
    ap.add_argument("--dir", type=Path, help="the embedded store's directory (default: a temporary one, removed)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = ap.parse_args()
    rows = []
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="graphmem-scale-") as tmp:
        for backend in args.backends:
            rows += run(backend, args.sizes, args, args.dir or Path(tmp))

    def num(value: float, form: str) -> str:
        return "-" if value != value else format(value, form)

    print("| backend | memories | writes/s | graph build/merge s | context p50 / p95 ms | exact scans: context p50 / p95 ms"
          " | vector recall@10 / @50 vs exact | peak RSS MiB (client / server) | disk MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for backend, size, rate, graph_s, p50, p95, e50, e95, at10, at50, peak, server, mib in rows:
        print(f"| {backend} | {size:,} | {num(rate, ',.0f')} | {num(graph_s, '.1f')} | {p50:.1f} / {p95:.1f} | "
              f"{num(e50, '.1f')} / {num(e95, '.1f')} | {at10:.3f} / {at50:.3f} | {peak:,.0f} / {num(server, ',.0f')} | {num(mib, ',.0f')} |")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        for backend in args.backends:
            mine = [r for r in rows if r[0] == backend]
            sizes = [r[1] for r in mine]
            ax.plot(sizes, [r[5] for r in mine], "o-", label=f"{backend}: context p95")
            ax.plot(sizes, [r[7] for r in mine], "o--", label=f"{backend}: context p95, exact scans")
        ax.set_xscale("log")
        ax.set_yscale("log")  # Neo4j's exact scans are seconds at 100k
        ax.set_xlabel("memories in the namespace")
        ax.set_ylabel("ms")
        ax.set_title("graphmem context() latency against store size")
        ax.legend()
        fig.tight_layout()
        args.out.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.out / "scale.png", dpi=120)
    except ImportError:
        pass


if __name__ == "__main__":
    main()
