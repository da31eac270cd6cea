"""Recall and context latency at 10k and 100k memories, and write throughput, on both backends.

    python benchmarks/recall_latency.py                         # embedded and neo4j, 10k and 100k
    python benchmarks/recall_latency.py --sizes 10000           # quicker
    python benchmarks/recall_latency.py --backends embedded     # no server needed
    python benchmarks/recall_latency.py --sizes 100000 --backends neo4j --keep   # write once, measure again
    python benchmarks/recall_latency.py --turns 100000 --backends embedded       # long sessions instead

The Neo4j backend uses GRAPHMEM_NEO4J_URI / _USER / _PASSWORD / _DATABASE (start one with
scripts/neo4j-dev start); each run writes its own namespace there and deletes it afterwards
(with --keep it stays, and a later --keep run of the same size reuses it: only reads measured).

Synthetic namespaces: memories of realistic length (10-40 words) about a population of
people, organisations, places and things, each with 2-4 entities and a relation. Queries are
questions about random entities. Prints a markdown table; medians and p95 of one run.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from graphmem import Memory
from graphmem.settings import Settings

FIRST = ["Alice", "Bob", "Carmen", "Deepak", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Luca",
         "Mei", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yusuf", "Zoe"]
LAST = ["Chen", "Garcia", "Ivanova", "Kowalski", "Müller", "Nakamura", "Okafor", "Patel", "Rossi", "Silva",
        "Smith", "Tanaka", "Wang", "Yilmaz", "Zhang"]
ORGS = ["Northwind", "Initech", "Globex", "Umbrella Labs", "Stark Analytics", "Wayne Logistics", "Acme Foods",
        "Hooli", "Vandelay Imports", "Cyberdyne", "Tyrell Systems", "Soylent Co"]
PLACES = ["Berlin", "Lisbon", "Shanghai", "Nairobi", "Toronto", "Osaka", "Madrid", "Austin", "Warsaw", "Lagos",
          "Mumbai", "Oslo", "Seoul", "Lima", "Dublin"]
THINGS = ["TypeScript", "Rust", "green tea", "espresso", "jazz", "rock climbing", "sourdough", "chess", "Kubernetes",
          "PostgreSQL", "oat milk", "cycling", "sushi", "the piano", "watercolours", "marathons", "board games"]
TEMPLATES = [
    ("{p} works at {o} in {pl} as a senior engineer on the payments team since last spring", "works_at", "o"),
    ("{p} prefers {t} and mentioned it several times during the planning meetings this quarter", "prefers", "t"),
    ("{p} moved to {pl} two years ago and still misses the food from home, especially on holidays", "lives_in", "pl"),
    ("{p} is allergic to {t}, so team lunches should avoid it; this came up at the offsite", "allergic_to", "t"),
    ("{p} manages {p2} and holds a one-to-one with them every Thursday afternoon at {o}", "manages", "p2"),
    ("{p} is learning {t} on weekends and wants to get good enough to teach a workshop", "learning", "t"),
    ("{p} plans a trip to {pl} in the autumn to visit friends and attend a conference", "plans_trip", "pl"),
    ("{p} recommended {o} as a vendor because their support answered within an hour", "recommends", "o"),
]


def people(n: int, rng: random.Random) -> list[str]:
    names = [f"{f} {l}" for f in FIRST for l in LAST]
    rng.shuffle(names)
    return names[:n]


QUESTIONS = ["What does {p} prefer?", "Where does {p} work?", "Who manages {p}?", "What is {p} allergic to?",
             "Which trip is {p} planning?", "What is {p} learning on weekends?"]


def questions(n: int, rng: random.Random, templates: list[str] = QUESTIONS) -> list[str]:
    """``n`` questions about the synthetic people (the same 300 every run), drawn with ``rng``."""
    pop = people(300, random.Random(1))
    return [rng.choice(templates).format(p=rng.choice(pop)) for _ in range(n)]


def synth_memories(n: int, rng: random.Random) -> list[dict]:
    pop = people(300, rng)
    out = []
    for _ in range(n):
        tpl, pred, obj_key = rng.choice(TEMPLATES)
        v = {"p": rng.choice(pop), "p2": rng.choice(pop), "o": rng.choice(ORGS), "pl": rng.choice(PLACES),
             "t": rng.choice(THINGS)}
        text = tpl.format(**v)
        types = {"p": "person", "p2": "person", "o": "org", "pl": "place", "t": "thing"}
        ents = [{"name": v[k], "type": types[k]} for k in ("p", "p2", "o", "pl", "t") if "{" + k + "}" in tpl]
        out.append({"text": text, "subject": v["p"], "predicate": pred, "object": v[obj_key], "entities": ents,
                    "importance": round(rng.uniform(0.2, 0.9), 2)})
    return out


def synth_messages(n: int, rng: random.Random) -> list[str]:
    pop = people(300, rng)
    lines = [
        "hey, did you see the message from {p} about the {o} contract?",
        "I'm flying to {pl} next week, can you remind me to pack the charger",
        "ok sounds good",
        "{p} said the demo went well but the client wants {t} support",
        "can we move the sync to tomorrow morning? something came up",
        "thanks! that worked",
        "the build is failing again on the integration tests, probably the flaky one",
        "lunch at the sushi place near the office?",
    ]
    return [rng.choice(lines).format(p=rng.choice(pop), o=rng.choice(ORGS), pl=rng.choice(PLACES), t=rng.choice(THINGS))
            for _ in range(n)]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def open_memory(backend: str, size: int, workdir: Path, ann_threshold: int | None = None) -> Memory:
    if backend == "embedded":  # the fast path alone
        graph = {} if ann_threshold is None else {"vector_ann_threshold": ann_threshold}
        return Memory(workdir / f"bench-{size}.db", settings=Settings(extraction="off", **graph))
    return Memory(settings=Settings(backend="neo4j", extraction="off"))


def store_put_rate(mem: Memory, ns: str, n: int, rng: random.Random) -> float:
    """Memories/s through Store.put alone (vectors given, batches of 1,000): the backend's own
    write capacity, without the embedder that bounds remember()."""
    from graphmem.models import MemoryRecord

    vecs = np.random.default_rng(0).normal(size=(n, mem.embedder.dim)).astype(np.float32)
    recs = [MemoryRecord(namespace=ns, text=row["text"]) for row in synth_memories(n, rng)]
    t0 = time.perf_counter()
    for i in range(0, n, 1000):
        mem.store.put(ns, recs[i : i + 1000], vecs[i : i + 1000])
    rate = n / (time.perf_counter() - t0)
    mem.store.delete_namespace(ns)
    return rate


def run(backend: str, size: int, workdir: Path, queries: int, ann_threshold: int | None = None,
        keep: bool = False) -> dict:
    rng = random.Random(size)  # the same data and questions for every backend
    mem = open_memory(backend, size, workdir, ann_threshold)
    ns = f"bench{size}"
    nan = float("nan")
    put_rate = write_s = msg_s = deferred_s = enriched_s = nan
    msgs = deferred = [""]
    reuse = keep and mem.store.has_namespace(ns) and mem.store.count(ns).get("memory", 0) == size
    if reuse:  # written by an earlier --keep run: only the reads are measured
        synth_memories(10_000, rng), synth_memories(size, rng)  # the writes' random draws, so the same questions follow
        synth_messages(4000, rng), synth_messages(4000, rng)
    else:
        if mem.store.has_namespace(ns):
            mem.store.delete_namespace(ns)
        put_rate = store_put_rate(mem, f"{ns}-put", 10_000, rng)
        rows = synth_memories(size, rng)
        t0 = time.perf_counter()
        for i in range(0, size, 1000):
            mem.remember_many(rows[i : i + 1000], namespace=ns)
        write_s = time.perf_counter() - t0

        msgs = synth_messages(4000, rng)
        t0 = time.perf_counter()
        for i in range(0, len(msgs), 1000):
            mem.add_messages(f"chat-{i}", msgs[i : i + 1000], namespace=ns)
        msg_s = time.perf_counter() - t0
        deferred = synth_messages(4000, rng)
        t0 = time.perf_counter()
        for i in range(0, len(deferred), 1000):
            mem.add_messages(f"bulk-{i}", deferred[i : i + 1000], namespace=ns, wait=False)
        deferred_s = time.perf_counter() - t0
        mem.flush()
        enriched_s = time.perf_counter() - t0

    qs = questions(queries, rng)
    for q in qs[:20]:  # warm caches (vector matrix, graph, spaCy; the Neo4j server's JIT and page cache)
        mem.context(q, namespace=ns)
    t0 = time.perf_counter()
    if hasattr(mem.store, "settle"):  # the embedded store's vector graphs, built in the background
        mem.store.settle()
    graph_s = time.perf_counter() - t0

    def timed(fn) -> list[float]:
        out = []
        for q in qs:
            t = time.perf_counter()
            fn(q)
            out.append((time.perf_counter() - t) * 1000)
        return out

    vecs = {q: mem.embedder.embed([q], query=True)[0] for q in qs}
    recall_ms = timed(lambda q: mem.recall(q, k=10, namespace=ns))
    recall_novec_ms = timed(lambda q: mem.recall(q, k=10, namespace=ns, query_vector=vecs[q]))
    context_ms = timed(lambda q: mem.context(q, budget=1500, namespace=ns))
    context_novec_ms = timed(lambda q: mem.context(q, budget=1500, namespace=ns, query_vector=vecs[q]))
    file = workdir / f"bench-{size}.db" if backend == "embedded" else Path("/nonexistent")
    if backend == "neo4j" and not keep:
        mem.store.delete_namespace(ns)
    mem.close()
    return {
        "column": f"{backend} {size:,}",
        "store.put/s (vectors given)": put_rate,
        "remember/s": size / write_s,
        "add_messages/s": len(msgs) / msg_s,
        "add_messages/s (wait=False: durable, keyword-searchable)": len(deferred) / deferred_s,
        "  then embedded and tagged by the background worker/s": len(deferred) / enriched_s,
        "recall p50": pct(recall_ms, 50), "recall p95": pct(recall_ms, 95),
        "recall p50 (no embed)": pct(recall_novec_ms, 50), "recall p95 (no embed)": pct(recall_novec_ms, 95),
        "context p50": pct(context_ms, 50), "context p95": pct(context_ms, 95),
        "context p50 (no embed)": pct(context_novec_ms, 50), "context p95 (no embed)": pct(context_novec_ms, 95),
        "vector graphs built or loaded, s (after the writes)": graph_s if backend == "embedded" else float("nan"),
        "file MiB": file.stat().st_size / 2**20 if file.exists() else float("nan"),
    }


def run_turns(backend: str, n: int, workdir: Path, queries: int) -> dict:
    """Long sessions: ``n`` turns in 20 sessions, written through ``add_messages`` in batches
    of 1,000 (``wait=True``), then contexts asked from one of the sessions and from none."""
    rng = random.Random(n)
    mem = open_memory(backend, n, workdir)
    ns = f"turns{n}"
    if mem.store.has_namespace(ns):
        mem.store.delete_namespace(ns)
    t0 = time.perf_counter()
    per_session = n // 20
    for s in range(20):
        for i in range(0, per_session, 1000):
            mem.add_messages(f"long-{s}", synth_messages(min(1000, per_session - i), rng), namespace=ns)
    write_s = time.perf_counter() - t0
    qs = questions(queries, rng)
    for q in qs[:20]:
        mem.context(q, namespace=ns)
    out: dict[str, float] = {"add_messages/s": n / write_s}
    for label, session in (("the asking session's", lambda i: f"long-{i % 20}"), ("no session", lambda i: None)):
        ms = []
        for i, q in enumerate(qs):
            t = time.perf_counter()
            mem.context(q, budget=1500, namespace=ns, session_id=session(i))
            ms.append((time.perf_counter() - t) * 1000)
        out[f"context p50, {label}"], out[f"context p95, {label}"] = pct(ms, 50), pct(ms, 95)
    if backend == "neo4j":
        mem.store.delete_namespace(ns)
    mem.close()
    return {"column": f"{backend} {n:,} turns", **out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--backends", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dir", type=Path, default=None, help="where the stores go (default: a temp dir)")
    ap.add_argument("--keep", action="store_true",
                    help="leave each namespace in place and reuse one of the right size on the next run "
                         "(measures recall changes without writing 100k memories again; write rates then n/a)")
    ap.add_argument("--ann-threshold", type=int, default=None,
                    help="embedded: vectors per kind before the HNSW graph is used (0: exact scans; default: Settings')")
    ap.add_argument("--turns", type=int, default=0,
                    help="measure long sessions instead: this many turns in 20 sessions, no memories")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphmem-bench-") as tmp:
        workdir = args.dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        results = []
        for size in [args.turns] if args.turns else args.sizes:
            for backend in args.backends:
                results.append(run_turns(backend, size, workdir, args.queries) if args.turns else
                               run(backend, size, workdir, args.queries, args.ann_threshold, args.keep))
                print(f"done: {backend} {size:,}", flush=True)
    keys = list(results[0])
    print("| metric | " + " | ".join(r["column"] if args.turns else f"{r['column']} memories" for r in results) + " |")
    print("|---|" + "---|" * len(results))
    for key in keys[1:]:
        unit = "" if "/s" in key or "MiB" in key or ", s" in key else " ms"
        print(f"| {key}{unit} | " + " | ".join("n/a" if r[key] != r[key] else f"{r[key]:,.1f}" for r in results) + " |")
    print(f"\n{args.queries} queries per size; k=10 for recall, budget 1,500 tokens for context; "
          "medians and p95 from one run.")


if __name__ == "__main__":
    main()
