"""Ingest through the fast path: messages/s and CPU ms per message of `add_messages`, short and
long turns, English and Chinese, waiting for embedding and tagging (`wait=True`) or not
(`wait=False`: durable and keyword-searchable at once, embedded and tagged by the background
worker, whose time is reported apart).

    python benchmarks/ingest.py                    # 2,000 short and 200 long turns a language
    python benchmarks/ingest.py --prefill 100000   # into a store that already holds 100k turns

Turns come from the public benchmark data in ../shared/bench: LoCoMo's (English) and
MemoryBank's Chinese dialogues; a short turn is one as said, a long turn joins said turns until
it has about 300 words (English) or 600 characters (Chinese), the length of an assistant's
answer. Batches of 200 turns; one session per batch. Prints a markdown table of one run.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from graphmem import Memory
from graphmem.settings import Settings

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", type=int, default=2000, help="short turns a language and mode")
    ap.add_argument("--long", type=int, default=200, help="long turns a language and mode")
    ap.add_argument("--langs", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    ap.add_argument("--prefill", type=int, default=0, help="turns written (wait=False) before measuring")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "ingest.db", settings=Settings(extraction="off"))
        mem.add_messages("warm", ["Alice moved to Lisbon.", "爱丽丝搬到了里斯本。"])  # models loaded before timing
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
