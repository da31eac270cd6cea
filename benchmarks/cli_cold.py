"""Cold start of the command line: the wall time and CPU of one `graphmem` command run as a
new process, as a user types it, on an embedded store of 2,000 turns and 500 memories.

    python benchmarks/cli_cold.py              # 7 runs of each command
    python benchmarks/cli_cold.py --runs 15

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
    ["list", "--limit", "20"],
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
    args = ap.parse_args()
    from graphmem import Memory
    from graphmem.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        db, cache = Path(tmp) / "graphmem.db", Path(tmp) / "cache"
        env = {**os.environ, "GRAPHMEM_PATH": str(db), "GRAPHMEM_CACHE_DIR": str(cache), "GRAPHMEM_EXTRACTION": "off"}
        with Memory(db, settings=Settings(extraction="off", cache_dir=Path(tmp) / "seed-cache")) as mem:
            for s in range(20):
                mem.add_messages(f"s{s}", [f"Turn {i} of session {s}: Alice talks about TypeScript, Rust and the "
                                           f"Atlas pipeline, item {i}." for i in range(100)])
            first = mem.remember_many([{"text": f"Alice prefers tool number {i} for the Atlas tooling"}
                                       for i in range(500)])[0]
            memory = mem.update(first.id, text="Alice prefers Rust for the Atlas tooling").id
        rows = []
        wall, cpu = run(COMMANDS[3], env)  # the cache is empty: built, then written
        rows.append(("recall, first use (empty embedder cache)", [wall], [cpu]))
        for command in COMMANDS:
            argv = [a.replace("{memory}", memory) for a in command]
            walls, cpus = zip(*(run(argv, env) for _ in range(args.runs)))
            rows.append((" ".join(argv[:1]), walls, cpus))
    print(f"| command ({args.runs} runs, new process each) | wall median s | wall max s | CPU median s |")
    print("|---|---|---|---|")
    for name, walls, cpus in rows:
        print(f"| {name} | {statistics.median(walls):.2f} | {max(walls):.2f} | {statistics.median(cpus):.2f} |")


if __name__ == "__main__":
    main()
