"""Cold start of the command line: the wall time and CPU of one `graphmem` command run as a
new process, as a user types it, on an embedded store of 2,000 turns and 500 memories.

    python benchmarks/cli_cold.py              # 7 runs of each command
    python benchmarks/cli_cold.py --runs 15
    python benchmarks/cli_cold.py --src /tmp/before   # also a checkout of another commit, runs interleaved

With ``--src`` each command also runs from that source tree (``git worktree add /tmp/before
REV``; its package found first on PYTHONPATH, same interpreter and store), each run of the one
beside a run of the other, so the two columns share the machine's noise.

Each command runs in a fresh process (interpreter start, imports, store open, the embedder
where the command needs one, the work, exit). The first row runs `recall` with an empty
embedder cache (the first use on a machine: the tokenizer and weights are built from the
package and cached); the other rows find the cache. Prints a markdown table with the median
and the slowest run of each command, wall seconds and CPU seconds (user + system).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = [
    ["--help"],
    ["--version"],
    ["list", "--limit", "20"],
    ["show", "{memory}"],
    ["stats"],
    ["history", "{memory}"],
    ["recall", "What does Alice prefer for tooling?"],
    ["context", "What does Alice prefer for tooling?", "--budget", "800"],
]


def run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one command in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([str(Path(sys.executable).with_name("graphmem")), *args], env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--src", type=Path, help="a checkout of another commit, measured beside this one")
    args = ap.parse_args()
    from graphmem import Memory
    from graphmem.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        db, cache = Path(tmp) / "graphmem.db", Path(tmp) / "cache"
        # bytecode is written and read as on a user's machine (some CI images turn it off)
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
               "GRAPHMEM_PATH": str(db), "GRAPHMEM_CACHE_DIR": str(cache), "GRAPHMEM_EXTRACTION": "off"}
        trees = {"now": env}
        if args.src:  # its own embedder cache: the first-use row builds one for each
            trees["before"] = {**env, "PYTHONPATH": str(args.src.resolve()), "GRAPHMEM_CACHE_DIR": str(cache) + "-before"}
        with Memory(db, settings=Settings(extraction="off", cache_dir=Path(tmp) / "seed-cache")) as mem:
            for s in range(20):
                mem.add_messages(f"s{s}", [f"Turn {i} of session {s}: Alice talks about TypeScript, Rust and the "
                                           f"Atlas pipeline, item {i}." for i in range(100)])
            first = mem.remember_many([{"text": f"Alice prefers tool number {i} for the Atlas tooling"}
                                       for i in range(500)])[0]
            memory = mem.update(first.id, text="Alice prefers Rust for the Atlas tooling").id
        recall = ["recall", "What does Alice prefer for tooling?"]
        first_use = {name: run(recall, tree_env) for name, tree_env in trees.items()}  # each builds its cache
        for tree_env in trees.values():
            run(["--help"], tree_env)  # bytecode written
        rows = []
        for command in COMMANDS:
            argv = [a.replace("{memory}", memory) for a in command]
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
            for _ in range(args.runs):
                for name, tree_env in trees.items():
                    runs[name].append(run(argv, tree_env))
            rows.append((argv[0], runs))
    names = list(trees)
    cols = " | ".join(f"{n}: CPU median s | {n}: wall median / max s" for n in names)
    print(f"| command ({args.runs} runs each, a new process each, interleaved) | {cols} |")
    print("|---|" + "---|---|" * len(names))
    first = " | ".join(f"{first_use[n][1]:.2f} | {first_use[n][0]:.2f}" for n in names)
    print(f"| recall, first use (empty embedder cache) | {first} |")
    for command, runs in rows:
        cells = []
        for n in names:
            walls, cpus = zip(*runs[n])
            cells.append(f"{statistics.median(cpus):.2f} | {statistics.median(walls):.2f} / {max(walls):.2f}")
        print(f"| {command} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
