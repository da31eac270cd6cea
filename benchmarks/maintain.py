"""One maintenance run over 100k memories, on both backends: seconds and peak memory.

    python benchmarks/maintain.py                          # embedded and neo4j, 100k memories
    python benchmarks/maintain.py --size 20000 --backends embedded

A synthetic namespace (the memories of benchmarks/recall_latency.py, stored with random unit
vectors through Store.put so that filling it takes seconds, not the embedder's minutes) with
work planted for every rule: 2 % near-duplicates (the same triple reworded, or a vector at
cosine ~0.95 to another), 5 % unimportant memories unused for 200 days (expire), 1 % archived 40
days ago (purge), and a cap at 85 % of the active count (below what merge and expiry leave). Each run happens in a fresh process
(``--phase run``) so its peak RSS is the maintenance run's own (the embedder model included;
on Neo4j the server's memory is not counted). The Neo4j backend uses GRAPHMEM_NEO4J_* (start
one with scripts/neo4j-dev start); the namespace is deleted afterwards. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from recall_latency import synth_memories  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.models import MemoryRecord, Status, utcnow  # noqa: E402
from graphmem.settings import Settings  # noqa: E402
from graphmem.text import keywords  # noqa: E402

NS = "bench-maintain"


def settings(backend: str, db: Path) -> Settings:
    return Settings(backend=backend, path=db, extraction="off")


def populate(backend: str, db: Path, size: int, subjects: int = 5000) -> dict:
    rng = random.Random(7)
    nrng = np.random.default_rng(7)
    now = utcnow()
    mem = Memory(settings=settings(backend, db))
    if mem.store.has_namespace(NS):
        mem.store.delete_namespace(NS)
    dim = mem.embedder.dim
    vecs = nrng.normal(size=(size, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = synth_memories(size, rng)
    planted = {"duplicates": 0, "expire": 0, "purge": 0}
    records = []
    for i, row in enumerate(rows):
        fields = {k: row[k] for k in ("text", "subject", "predicate", "object", "importance")}
        # by default 5,000 people of ~20 memories each (recall_latency's 300 would repeat whole
        # triples); --subjects 1: every memory about one person, the worst case of the pair passes
        fields["subject"] = f"{row['subject']} {i % subjects}" if subjects > 1 else "the user"
        fields["text"] = fields["text"].replace(row["subject"], fields["subject"], 1)
        r = rng.random()
        if r < 0.02 and i > 0:  # a duplicate of an earlier memory: reworded triple, or a close vector
            j = rng.randrange(i)
            src = records[j]
            if rng.random() < 0.5:
                fields.update(text=f"As noted before: {src.text.lower()}", subject=src.subject,
                              predicate=src.predicate, object=src.object)
            else:  # a paraphrase about the same subject: found by the cosine pass
                fields.update(subject=src.subject, predicate=None, object=None)
                vecs[i] = vecs[j] + 0.3 * nrng.normal(size=dim).astype(np.float32) / np.sqrt(dim)  # cosine ~0.96
                vecs[i] /= np.linalg.norm(vecs[i])
            planted["duplicates"] += 1
        elif r < 0.07:
            fields.update(importance=0.05, created_at=now - timedelta(days=200))
            planted["expire"] += 1
        elif r < 0.08:
            fields.update(status=Status.archived, archived_at=now - timedelta(days=40), importance=0.05)
            planted["purge"] += 1
        records.append(MemoryRecord(namespace=NS, keywords=keywords(fields["text"]), **fields))
    t0 = time.perf_counter()
    for i in range(0, size, 1000):
        mem.store.put(NS, records[i : i + 1000], vecs[i : i + 1000])
    seconds = time.perf_counter() - t0
    mem.close()
    return {"planted": planted, "fill_seconds": round(seconds, 1)}


def run_phase(backend: str, db: Path, size: int, dry_run: bool) -> dict:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mem = Memory(settings=settings(backend, db))
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    active = mem.store.count(NS).get("memory:active", 0)
    cap = int(active * 0.85)  # below what merge and expiry leave: the cap has work too
    t0 = time.perf_counter()
    (run,) = mem.maintain(NS, dry_run=dry_run, policy={"max_active_memories": cap})
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mem.close()
    return {"seconds": round(seconds, 1), "peak_rss_mib": round(peak / 1024), "rss_before_mib": round(before / 1024),
            "rss_loaded_mib": round(loaded / 1024), "merged": run.merged, "expired": run.expired,
            "capped": run.capped, "purged": run.purged, "active_before": run.active_before}


def child(backend: str, db: Path, size: int, dry_run: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, "--phase", "run", "--backends", backend, "--db", str(db),
                          "--size", str(size)] + (["--dry-run"] if dry_run else []),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--backends", default="embedded,neo4j")
    ap.add_argument("--phase", choices=["all", "run"], default="all")
    ap.add_argument("--db", type=Path)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--subjects", type=int, default=5000, help="distinct subjects (1: the worst case)")
    args = ap.parse_args()
    if args.phase == "run":
        print(json.dumps(run_phase(args.backends, args.db, args.size, args.dry_run)))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="graphmem-maintain-") as tmp:
        for backend in args.backends.split(","):
            db = Path(tmp) / "maintain.db"
            filled = populate(backend, db, args.size, args.subjects)
            dry = child(backend, db, args.size, True)
            real = child(backend, db, args.size, False)
            rows.append((backend, filled, dry, real))
            if backend == "neo4j":
                with Memory(settings=settings(backend, db)) as mem:
                    mem.store.delete_namespace(NS)
    print(f"\nmaintain over {args.size:,} memories about {args.subjects:,} subject(s) (one run each)\n")
    print("| backend | planted dup / expire / purge | dry run s | run s | merged | expired | capped | purged | "
          "peak RSS MiB (model loaded) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for backend, filled, dry, real in rows:
        p = filled["planted"]
        print(f"| {backend} | {p['duplicates']} / {p['expire']} / {p['purge']} | {dry['seconds']} | {real['seconds']} | "
              f"{real['merged']} | {real['expired']} | {real['capped']} | {real['purged']} | "
              f"{real['peak_rss_mib']} ({real['rss_loaded_mib']}) |")


if __name__ == "__main__":
    main()
