"""Extraction cost per 1,000 messages on MemoryBank's companion chats, English and Chinese,
through the whole pipeline (``Memory.add_messages`` then ``Memory.extract``) with the local model.

    python benchmarks/extraction.py [--memorybank ../shared/bench/memorybank/eval_data] [--messages 64]
    python benchmarks/extraction.py --messages 200 --against e2208e6 [--lang zh]

The first users' days are written in order until ``--messages`` messages per language; then every
queued window is extracted. CPU seconds are the CPU time of the process that extracts (the
model's threads included; the model is loaded and the fixed system prompt evaluated before the
clock starts: a process pays both once), wall seconds beside them. It uses the public API, the
settings' defaults and the extractor's ``complete``, so it measures an older checkout as well.

``--against REF`` compares this tree with git revision REF in pairs: each tree runs in a process
of its own (this script, importing that tree's graphmem), and the two extract each user-day in
turn, in alternating order. This VM's speed drifts by more than most single steps save (byte-
identical replies have cost 12 % more CPU in a later run), and a drift then weighs on both sides
of every pair. Quality is measured apart, on the labelled set: benchmarks/extraction_quality.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = Path(os.environ.get("GRAPHMEM_BENCH_TREE", ROOT))  # whose graphmem a worker of --against imports
sys.path.insert(0, str(TREE))

from graphmem import Memory  # noqa: E402
from graphmem.engine.extraction import make_extractor  # noqa: E402
from graphmem.extract.extractors import SYSTEM_PROMPT, Extractor, LlamaExtractor  # noqa: E402
from graphmem.extract.schema import WIRE_SCHEMA  # noqa: E402
from graphmem.settings import Settings  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared/bench/memorybank/eval_data"
FILES = {"en": "en/memory_bank_en.json", "zh": "cn/memory_bank_cn.json"}
COUNTS = ("windows", "sent", "calls", "prompt_tokens", "output_tokens", "cpu", "wall", "questions", "question_cpu")


def sessions(path: Path, limit: int) -> list[tuple[str, list[dict]]]:
    """(session id, messages) for each user-day, in order, until ``limit`` messages."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out, total = [], 0
    for name, user in data.items():
        for day, turns in user["history"].items():
            msgs = []
            for turn in turns:
                for who, text in ((name, turn.get("query")), ("assistant", turn.get("response"))):
                    if text and text.strip():
                        msgs.append({"speaker": who, "role": "assistant" if who == "assistant" else "user",
                                     "content": text.strip(), "created_at": f"{day}T12:{len(msgs):02d}:00Z"})
            if msgs:
                out.append((f"{name}-{day}", msgs))
                total += len(msgs)
            if total >= limit:
                return out
    return out


def warm(extractor: Extractor) -> Extractor:
    """The extractor with its model loaded and the fixed system prompt evaluated: neither is a
    per-message cost. A process evaluates the prompt once and keeps it in the KV cache (a server's
    prompt cache does the same), so it costs a few seconds per process, not per window. Unwarmed,
    a 40-message run charged it 25 times over in its per-1,000 figure."""
    if isinstance(extractor, LlamaExtractor):
        extractor._llm()
    extractor.complete(SYSTEM_PROMPT, "1 [Ann] Hello.", WIRE_SCHEMA, 1)
    return extractor


class Bench:
    """A store and a warmed extractor; extracts what it is given and counts what that cost."""

    def __init__(self, tmp: str) -> None:
        self.settings = Settings(extraction="manual")
        # the local model unless GRAPHMEM_LLM_BASE_URL names a server
        self.extractor = warm(make_extractor(self.settings))
        self.question_cpu = 0.0  # the CPU of the yes/no questions about stored memories (graphmem.extract.judge)
        ask = getattr(self.extractor, "yes_probability", None)
        if ask is not None:
            def timed(system: str, user: str) -> float | None:
                c0 = time.process_time()
                try:
                    return ask(system, user)
                finally:
                    self.question_cpu += time.process_time() - c0
            self.extractor.yes_probability = timed
        self.mem = Memory(Path(tmp) / "mb.db", settings=self.settings, extractor=self.extractor)

    def extract(self, lang: str, batch: list[tuple[str, list[dict]]]) -> dict[str, float]:
        for sid, msgs in batch:
            self.mem.add_messages(sid, msgs, namespace=lang)
        c0, w0, q0 = time.process_time(), time.perf_counter(), self.question_cpu
        entries = self.mem.extract(namespace=lang)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        sent = [e for e in entries if e.get("calls")]
        return {"windows": len(entries), "sent": len(sent), "calls": sum(e["calls"] for e in sent),
                "prompt_tokens": sum(e.get("prompt_tokens", 0) for e in sent),
                "output_tokens": sum(e.get("output_tokens", 0) for e in sent), "cpu": cpu, "wall": wall,
                "questions": sum(e.get("judged", 0) for e in entries), "question_cpu": self.question_cpu - q0}

    def memories(self, lang: str) -> int:
        return len(self.mem.list("memory", namespace=lang, status="active", limit=10_000))

    def describe(self) -> str:
        drafts = getattr(self.settings, "llm_draft_tokens", 0)
        if drafts is None:  # chosen by a timed pass at the first call
            llm = self.extractor._llm() if isinstance(self.extractor, LlamaExtractor) else None
            drafts = f"drafts {'on' if getattr(llm, 'drafts_pay', False) else 'off'} as timed here"
        else:
            drafts = f"{drafts} draft tokens"
        return f"{self.extractor.name}, {self.settings.llm_threads or 'llama.cpp default'} generation threads, {drafts}"


def serve() -> None:
    """A worker of --against: one JSON request a line on stdin, one JSON answer a line."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever else writes to stdout (llama.cpp's C code too) goes to stderr
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(tmp)
        answers.write(json.dumps({"describe": bench.describe(), "graphmem": sys.modules["graphmem"].__file__}) + "\n")
        answers.flush()
        for line in sys.stdin:
            req = json.loads(line)
            if req["op"] == "extract":
                out = bench.extract(req["lang"], [(sid, msgs) for sid, msgs in req["batch"]])
            else:
                out = {"memories": bench.memories(req["lang"])}
            answers.write(json.dumps(out) + "\n")
            answers.flush()
        bench.mem.close()


class Worker:
    def __init__(self, tree: Path) -> None:
        env = {**os.environ, "GRAPHMEM_BENCH_TREE": str(tree), "PYTHONPATH": str(tree)}
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve"], cwd=tree, env=env,
                                     text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8")
        self.hello = self.read()

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"the worker exited with {self.proc.wait()}; its log is above")
        return json.loads(line)

    def ask(self, **req) -> dict:
        self.proc.stdin.write(json.dumps(req, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def export(ref: str, into: Path) -> Path:
    """The tree of git revision ``ref`` under ``into`` (git archive: the checkout is left as it is)."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def row(name: str, lang: str, n: int, c: dict[str, float], memories: int) -> str:
    k = 1000 / n
    return (f"| {name} | {lang} | {n} | {c['windows']:.0f} | {c['sent']:.0f} | {c['calls'] * k:.0f} | "
            f"{c['cpu'] * k:,.0f} | {c['wall'] * k:,.0f} | {c['prompt_tokens'] * k:,.0f} | "
            f"{c['output_tokens'] * k:,.0f} | {memories * k:.0f} | {c.get('questions', 0) * k:.0f} | "
            f"{c.get('question_cpu', 0) * k:,.0f} |")


HEADER = ("| tree | language | messages | windows | sent to the model | calls per 1,000 | CPU s per 1,000 | "
          "wall s per 1,000 | prompt tokens per 1,000 | output tokens per 1,000 | memories per 1,000 | "
          "questions per 1,000 | their CPU s per 1,000 |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def interval(days: list[dict[str, float]], before: str, draws: int = 2000) -> tuple[float, float]:
    """A 90 % bootstrap interval of the CPU ratio over the user-days sampled: the days differ far
    more than the machine does (one run's days read 1.3x to 5.1x), so this is how far another
    sample of days might move the ratio. Seeded: the same run prints the same interval."""
    rng = random.Random(0)
    ratios = sorted(sum(d[before] for d in pick) / sum(d["this"] for d in pick)
                    for pick in (rng.choices(days, k=len(days)) for _ in range(draws)))
    return ratios[draws // 20], ratios[draws - 1 - draws // 20]


def straight(args: argparse.Namespace) -> None:
    print(HEADER)
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(tmp)
        for lang in args.lang:
            batch = sessions(args.memorybank / FILES[lang], args.messages)
            counts = bench.extract(lang, batch)
            print(row("this", lang, sum(len(m) for _, m in batch), counts, bench.memories(lang)))
        bench.mem.close()
    print(f"\n{bench.describe()}; one run")


def paired(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trees = {args.against: export(args.against, Path(tmp)), "this": ROOT}
        workers = {name: Worker(tree) for name, tree in trees.items()}
        for name, w in workers.items():
            print(f"{name}: {w.hello['graphmem']}; {w.hello['describe']}", file=sys.stderr)
        lines = []
        for lang in args.lang:
            batch = sessions(args.memorybank / FILES[lang], args.messages)
            totals = {name: dict.fromkeys(COUNTS, 0.0) for name in workers}
            days = []  # each user-day's CPU seconds, by tree
            for i, (sid, msgs) in enumerate(batch):
                days.append({})
                for name in list(workers)[:: 1 if i % 2 == 0 else -1]:  # who goes first alternates
                    got = workers[name].ask(op="extract", lang=lang, batch=[(sid, msgs)])
                    days[-1][name] = got["cpu"]
                    for key in COUNTS:
                        totals[name][key] += got.get(key, 0)  # an older tree asks no questions
                print(f"{lang} {sid}: " + ", ".join(f"{name} {totals[name]['cpu']:.0f} s" for name in workers),
                      file=sys.stderr)
            n = sum(len(m) for _, m in batch)
            for name, w in workers.items():
                lines.append(row(name, lang, n, totals[name], w.ask(op="memories", lang=lang)["memories"]))
            before, after = (totals[name]["cpu"] for name in workers)
            low, high = interval(days, args.against)
            lines.append(f"| {args.against} / this | {lang} | | | | | **{before / after:.2f}x** "
                         f"({low:.2f}-{high:.2f}) | | | | | | |")
        for w in workers.values():
            w.close()
    print(HEADER)
    print("\n".join(lines))
    print(f"\n{workers['this'].hello['describe']}; each user-day extracted by both trees in turn, "
          "in alternating order; in brackets a 90 % bootstrap interval over the user-days; one run")


def main() -> None:
    if sys.argv[1:] == ["--serve"]:
        return serve()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memorybank", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--messages", type=int, default=64, help="messages per language")
    ap.add_argument("--lang", choices=sorted(FILES), action="append", help="languages (default: both)")
    ap.add_argument("--against", metavar="REF", help="a git revision to compare with, in pairs")
    args = ap.parse_args()
    args.lang = args.lang or list(FILES)
    (paired if args.against else straight)(args)


if __name__ == "__main__":
    main()
