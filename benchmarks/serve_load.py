"""Load on ``graphmem serve``: N concurrent clients on loopback for a bounded time against a
live server (``--workers``: its processes, several settings compared in one run), a mix of
reads and writes, on each backend.

    python benchmarks/serve_load.py                       # 8 clients, 30 s, embedded, 1 worker
    python benchmarks/serve_load.py --backends embedded,neo4j --clients 16 --seconds 60
    python benchmarks/serve_load.py --backends embedded,neo4j --workers 1 2
    (Neo4j: the test server of scripts/neo4j-dev --test, or GRAPHMEM_TEST_NEO4J_URI)

Before the clients start, ``--seed`` memories are written into the namespace through the
Python API. Each client loops: recall 60 %, append two turns 20 %, context 10 %, get a memory
10 %. Prints one row per backend: requests, requests/s, latency p50/p95/p99 in ms, errors
(any status other than the one expected, or a transport error); then p50/p95 per operation.
The machine is shared: quote medians from one run."""

from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PEOPLE = ["Ana", "Bo", "Chen Wei", "Dara", "Eitan", "Fatima", "Goro", "Hana", "Ivo", "王芳"]
THINGS = ["green tea", "Rust", "climbing", "Lisbon", "jazz", "the night shift", "sushi", "Kubernetes", "chess", "豆浆"]
VERBS = ["likes", "works with", "lives near", "avoids", "talks about", "prefers"]
QUESTIONS = ["what does {p} like?", "where does {p} live?", "{p} and {t}", "who talks about {t}?", "{t}"]


def sentence(rng: random.Random) -> tuple[str, str, str, str]:
    p, v, t = rng.choice(PEOPLE), rng.choice(VERBS), rng.choice(THINGS)
    return f"{p} {v} {t} (note {rng.randrange(10**6)})", p, v.replace(" ", "_"), t


def seed(env: dict[str, str], namespace: str, n: int) -> list[str]:
    from graphmem import Memory
    from graphmem.settings import Settings

    rng = random.Random(7)
    conf = Settings(**{k[9:].lower(): v for k, v in env.items() if k.startswith("GRAPHMEM_") and k[9:].lower()
                       in Settings.model_fields})
    with Memory(settings=conf) as mem:
        ids = []
        for start in range(0, n, 500):
            batch = [dict(zip(("text", "subject", "predicate", "object"), sentence(rng)), category="fact")
                     for _ in range(min(500, n - start))]
            ids += [m.id for m in mem.remember_many(batch, namespace=namespace)]
    return ids


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(env: dict[str, str], workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "serve", "--port", str(port), "--log-level",
                             "warning", "--workers", str(workers)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"graphmem serve exited: {proc.stderr.read()}")
        try:
            if httpx.get(url + "/ready", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("graphmem serve did not become ready in 120 s")


def client(url: str, namespace: str, ids: list[str], until: float, seed_: int,
           out: dict[str, list[float]], errors: list[str], lock: threading.Lock) -> None:
    rng = random.Random(seed_)
    q = {"namespace": namespace}
    mine: dict[str, list[float]] = defaultdict(list)
    bad: list[str] = []
    with httpx.Client(base_url=url, timeout=60) as http:
        while time.monotonic() < until:
            roll = rng.random()
            p, t = rng.choice(PEOPLE), rng.choice(THINGS)
            if roll < 0.6:
                op, call, ok = "recall", lambda: http.post("/v1/recall", params=q, json={
                    "query": rng.choice(QUESTIONS).format(p=p, t=t), "k": 10}), 200
            elif roll < 0.8:
                op, call, ok = "append", lambda: http.post(f"/v1/sessions/load-{seed_}/messages", params=q, json={
                    "messages": [{"role": "user", "content": sentence(rng)[0], "speaker": p},
                                 {"role": "assistant", "content": f"Noted about {t}."}]}), 201
            elif roll < 0.9:
                op, call, ok = "context", lambda: http.post("/v1/context", params=q, json={
                    "query": f"help {p} with {t}", "budget": 800}), 200
            else:
                op, call, ok = "get", lambda: http.get(f"/v1/memories/{rng.choice(ids)}", params=q), 200
            t0 = time.perf_counter()
            try:
                status = call().status_code
            except httpx.HTTPError as exc:
                status, why = None, type(exc).__name__
            ms = (time.perf_counter() - t0) * 1000
            mine[op].append(ms)
            if status != ok:
                bad.append(f"{op}: {status if status is not None else why}")
    with lock:
        for op, v in mine.items():
            out[op] += v
        errors += bad


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def run(backend: str, workers: int, clients: int, seconds: float, n_seed: int, tmp: Path) -> tuple[list[str], list[str]]:
    env = {**os.environ, "GRAPHMEM_PATH": str(tmp / f"load-{backend}-{workers}.db"), "GRAPHMEM_KEYS_PATH": str(tmp / "keys.db"),
           "GRAPHMEM_EXTRACTION": "off", "GRAPHMEM_ENRICHMENT": "background"}
    if backend == "neo4j":
        env.update(GRAPHMEM_BACKEND="neo4j",
                   GRAPHMEM_NEO4J_URI=os.environ.get("GRAPHMEM_TEST_NEO4J_URI", "bolt://127.0.0.1:7688"),
                   GRAPHMEM_NEO4J_PASSWORD=os.environ.get("GRAPHMEM_TEST_NEO4J_PASSWORD", "graphmem-dev"))
    namespace = f"load-{int(time.time())}"
    ids = seed(env, namespace, n_seed)
    proc, url = start(env, workers)
    try:
        out: dict[str, list[float]] = defaultdict(list)
        errors: list[str] = []
        lock = threading.Lock()
        until = time.monotonic() + seconds
        threads = [threading.Thread(target=client, args=(url, namespace, ids, until, i, out, errors, lock))
                   for i in range(clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(30)
    every = [v for vs in out.values() for v in vs]
    row = [f"| {backend} | {workers} | {clients} | {wall:.0f} | {len(every)} | {len(every) / wall:.1f} | {pct(every, .5):.1f} | "
           f"{pct(every, .95):.1f} | {pct(every, .99):.1f} | {len(errors)} |"]
    ops = [f"| {backend} | {workers} | {op} | {len(v)} | {pct(v, .5):.1f} | {pct(v, .95):.1f} |" for op, v in sorted(out.items())]
    if errors:
        print(f"{backend}: first errors: {errors[:5]}", file=sys.stderr)
    return row, ops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default="embedded", help="comma-separated: embedded, neo4j")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--seed", type=int, default=2000, help="memories written before the clients start")
    ap.add_argument("--workers", type=int, nargs="+", default=[1], help="graphmem serve --workers, each in turn")
    args = ap.parse_args()
    rows = ["| backend | workers | clients | seconds | requests | requests/s | p50 ms | p95 ms | p99 ms | errors |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    ops = ["| backend | workers | operation | requests | p50 ms | p95 ms |", "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends.split(","):
            for workers in args.workers:
                r, o = run(backend.strip(), workers, args.clients, args.seconds, args.seed, Path(tmp))
                rows += r
                ops += o
    print("\n".join(rows))
    print()
    print("\n".join(ops))


if __name__ == "__main__":
    main()
