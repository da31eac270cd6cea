"""Where a Neo4j context spends its time, query by query, and the PROFILE of the recall queries.

    python benchmarks/recall_latency.py --sizes 100000 --backends neo4j --keep   # writes bench100000 once
    python benchmarks/neo4j_profile.py                                           # then, as often as needed

Every named query (``cypher/store/*.cypher``) the store runs is timed over --queries contexts
(query vectors given, after --warm untimed ones): calls per context, median ms, ms per context.
Then the queries recall sends for the first question are run again under PROFILE: each plan's
operators with their rows and db hits, and the server's own time. Runs against the server the
settings name (``GRAPHMEM_NEO4J_URI``, ...).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_latency import questions  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.settings import Settings  # noqa: E402
from graphmem.store.cypher import query as named_query  # noqa: E402

PROFILED = ("recall_layer", "recall_walk", "turns_beside", "nodes_get", "vector_scores")


def plan_lines(plan: dict[str, Any], depth: int = 0) -> list[str]:
    args = plan.get("args", {})
    rows, hits = plan.get("rows", args.get("Rows")), plan.get("dbHits", args.get("DbHits"))
    detail = " ".join(str(args.get("Details") or "").split())[:100]
    lines = [f"{'  ' * depth}{plan.get('operatorType', '?').split('@')[0]}  rows={rows} db_hits={hits}  {detail}"]
    for child in plan.get("children", []):
        lines += plan_lines(child, depth + 1)
    return lines


def db_hits(plan: dict[str, Any]) -> int:
    own = plan.get("dbHits", plan.get("args", {}).get("DbHits")) or 0
    return own + sum(db_hits(c) for c in plan.get("children", []))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--namespace", default="bench100000", help="recall_latency.py --keep's namespace for 100k")
    ap.add_argument("--queries", type=int, default=110)
    ap.add_argument("--warm", type=int, default=20)
    args = ap.parse_args()
    mem = Memory(settings=Settings(backend="neo4j", extraction="off"))
    store, ns = mem.store, args.namespace
    if not store.has_namespace(ns):
        sys.exit(f"no namespace {ns!r}: run benchmarks/recall_latency.py --sizes 100000 --backends neo4j --keep first")
    qs = questions(args.warm + args.queries, random.Random(7))
    vecs = {q: mem.embedder.embed([q], query=True)[0] for q in qs}
    for q in qs[: args.warm]:
        mem.context(q, budget=1500, namespace=ns, query_vector=vecs[q])

    times: dict[str, list[float]] = defaultdict(list)
    first: dict[tuple[str, Any], dict[str, Any]] = {}  # the first call of each query (and kind): profiled below
    statement = store._statement

    def timed(write: bool, name: str, params: dict[str, Any]) -> list[Any]:
        first.setdefault((name, params.get("kind")), dict(params))
        t = time.perf_counter()
        try:
            return statement(write, name, params)
        finally:
            times[name].append((time.perf_counter() - t) * 1000)

    store._statement = timed
    wall = []
    for q in qs[args.warm:]:
        t = time.perf_counter()
        mem.context(q, budget=1500, namespace=ns, query_vector=vecs[q])
        wall.append((time.perf_counter() - t) * 1000)
    store._statement = statement
    n = len(wall)
    print(f"context with the query vector given, {n} questions: p50 {np.percentile(wall, 50):.1f} ms, "
          f"p95 {np.percentile(wall, 95):.1f} ms\n")
    print("| query | calls per context | median ms | ms per context |\n|---|---|---|---|")
    for name, ms in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(f"| {name} | {len(ms) / n:.2f} | {statistics.median(ms):.1f} | {sum(ms) / n:.1f} |")

    with store._session() as session:
        for (name, kind), params in first.items():
            if name not in PROFILED:
                continue
            params = dict(params)
            text = named_query(name).render(**params.pop("_ids", {}))
            session.run("PROFILE " + text, params).consume()  # once to plan and warm
            summary = session.run("PROFILE " + text, params).consume()
            took = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
            print(f"\nPROFILE {name}{f' ({kind})' if kind else ''}: {db_hits(summary.profile):,} db hits, {took} ms on "
                  "the server")
            print("\n".join(plan_lines(summary.profile)))
    mem.close()


if __name__ == "__main__":
    main()
