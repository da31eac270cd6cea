"""LoCoMo evidence recall: graphmem against BM25 and dense retrieval over raw turns, one run.

    python benchmarks/locomo.py --mode turns            # fast path only, all 10 conversations
    python benchmarks/locomo.py --mode llm --conversations 1 --sessions 3   # with extraction (slow on CPU)
    python benchmarks/locomo.py --set session_prior=0 --set relevance.graph=0   # a signal off

Conversations 0-4 (the tuning half) and 5-9 (the held-out half) are also reported apart.

Each conversation goes into its own namespace through graphmem's public API (message ids are
LoCoMo's dia_ids, so provenance maps straight to evidence). For each question (categories 1-4;
5 reported apart) the top k items are retrieved and evidence recall@k is the fraction of the
question's evidence turns covered by the items' source turns. An item may carry several turns
(a memory or an episode), so the table also gives the turns and tokens the k items carry, and
recall at an equal budget of k turns. Answers per token: for ``context()`` packed at 200, 400
and 800 tokens, the share of questions whose gold answer's content words all appear in the
context, and the mean share of them found, against a BM25 context of the same size (its best
turns, as context lines, until the budget is spent). Writes markdown tables to stdout, JSON and
a PNG chart to --out.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_data  # noqa: E402
from locomo_data import CATEGORIES, Conversation  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.models import Episode, MemoryRecord, Message  # noqa: E402
from graphmem.settings import RecallFilter, RecallOptions, Settings  # noqa: E402
from graphmem.retrieve import RecallResult, assemble  # noqa: E402
from graphmem.text import STOPWORDS, ApproxTokenCounter, keywords, segment, stem  # noqa: E402

KS = (5, 10, 20)
BUDGETS = (200, 400, 800)
COUNTER = ApproxTokenCounter()


def terms(text: str) -> list[str]:
    return [stem(t) for t in segment(text) if t not in STOPWORDS]


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75) over one conversation's turns."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(terms(d)) for d in docs]
        self.lens = np.array([sum(d.values()) for d in self.docs], dtype=float)
        self.avg = float(self.lens.mean()) if len(self.docs) else 1.0
        df = Counter(t for d in self.docs for t in d)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.k1, self.b = k1, b

    def rank(self, query: str, k: int) -> list[int]:
        q = set(terms(query))
        scores = np.zeros(len(self.docs))
        for i, d in enumerate(self.docs):
            s = 0.0
            for t in q & d.keys():
                tf = d[t]
                s += self.idf[t] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg))
            scores[i] = s
        return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def item_turns(item) -> list[str]:
    if isinstance(item, Message):
        return [item.id]
    if isinstance(item, MemoryRecord):
        return list(item.source_message_ids)
    if isinstance(item, Episode):
        return list(item.message_ids)
    return []


def score(ranked_turn_lists: list[list[str]], evidence: set[str], k: int, turn_text: dict[str, str]) -> dict:
    """Recall of the top k items, all-found, turns/tokens carried, and recall at a budget of k turns."""
    top = ranked_turn_lists[:k]
    covered = {t for turns in top for t in turns}
    budget: list[str] = []
    for turns in ranked_turn_lists:
        for t in turns:
            if len(budget) < k and t not in budget:
                budget.append(t)
    return {
        "recall": len(evidence & covered) / len(evidence),
        "all": float(evidence <= covered),
        "turns": float(sum(len(t) for t in top)),
        "tokens": float(sum(COUNTER.count(turn_text.get(x, "")) for t in top for x in t)),
        "recall_budget": len(evidence & set(budget)) / len(evidence),
    }


def coverage(answer: set[str], text: str) -> dict:
    """Whether all of the answer's content words appear in ``text``, and the share that do."""
    found = len(answer & set(keywords(text))) / len(answer)
    return {"all": float(found == 1.0), "share": found}


def bm25_context(turns: list, order: list[int], budget: int) -> str:
    """A BM25 context: the best turns as context lines ("speaker: text"), until ``budget``."""
    lines, left = [], budget
    for j in order:
        line = f"{turns[j].speaker}: {turns[j].text}"
        cost = COUNTER.count(line)
        if cost > left:
            break
        lines.append(line)
        left -= cost
    return "\n".join(lines)


def recall_options(assignments: list[str]) -> RecallOptions:
    """RecallOptions with ``field=value`` overrides (JSON values; ``relevance.graph=0.5``)."""
    data = RecallOptions().model_dump()
    for item in assignments:
        key, _, value = item.partition("=")
        *path, last = key.split(".")
        node = data
        for part in path:
            node = node[part]
        try:
            node[last] = json.loads(value)
        except json.JSONDecodeError:
            node[last] = value
    return RecallOptions.model_validate(data)


def ingest(mem: Memory, conv: Conversation, ns: str, sessions: int | None) -> None:
    by_session: dict[str, list] = defaultdict(list)
    for t in conv.turns:
        by_session[t.session].append(t)
    for i, (session, turns) in enumerate(by_session.items()):
        if sessions is not None and i >= sessions:
            break
        mem.add_messages(session, [{"id": t.id, "speaker": t.speaker, "content": t.text, "created_at": t.at}
                                   for t in turns], namespace=ns)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=locomo_data.DEFAULT_PATH)
    ap.add_argument("--mode", choices=["turns", "llm"], default="turns")
    ap.add_argument("--conversations", type=int, default=None, help="only N conversations")
    ap.add_argument("--start", type=int, default=0, help="skip the first conversations (for a tuning/test split)")
    ap.add_argument("--sessions", type=int, default=None, help="only the first N sessions of each (llm mode)")
    ap.add_argument("--db", type=Path, default=None,
                    help="keep the store here; an existing one is scored as it is (no ingest, no extraction)")
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                    help="override a RecallOptions field (JSON value; nested with dots: relevance.graph=0.5)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = ap.parse_args()
    convs = locomo_data.load(args.data)[args.start :]
    convs = convs[: args.conversations] if args.conversations else convs
    settings = Settings(extraction="manual" if args.mode == "llm" else "off", recall=recall_options(args.set))
    results: dict[str, dict[int, list[dict]]] = {s: {k: [] for k in KS} for s in ("graphmem", "bm25", "dense")}
    packed: dict[str, dict[int, list[dict]]] = {s: {b: [] for b in BUDGETS} for s in ("graphmem", "bm25")}
    packed_halves: list[str] = []
    cats: list[int] = []
    halves: list[str] = []
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="graphmem-locomo-") as tmp:
        reuse = args.db is not None and args.db.exists()
        mem = Memory(args.db or Path(tmp) / "locomo.db", settings=settings.model_copy(
            update={"extraction": "off"}) if reuse else settings)
        t_ingest = time.perf_counter()
        for i, conv in enumerate(convs if not reuse else []):
            ingest(mem, conv, f"conv-{i}", args.sessions)
            mem.flush()
        t_ingest = time.perf_counter() - t_ingest
        for i, conv in enumerate(convs):
            ns = f"conv-{i}"
            kept = {m.id for m in mem.list("message", namespace=ns, limit=10_000)}
            turns = [t for t in conv.turns if t.id in kept]
            turn_text = {t.id: t.text for t in turns}
            asked_at = max(t.at for t in turns) + timedelta(days=1)
            bm25 = BM25([t.text for t in turns])
            vecs = mem.embedder.embed([t.text for t in turns])
            for q in conv.questions:
                evidence = q.evidence & set(turn_text)
                if not evidence:
                    continue  # no evidence (4 questions), or outside the sessions ingested
                cats.append(q.category)
                halves.append("0-4" if args.start + i < 5 else "5-9")
                t0 = time.perf_counter()
                # no feedback between questions; asked the day after the conversation's last session
                items = mem.recall(q.text, k=max(KS) * 2, namespace=ns, filter=RecallFilter.READ_ONLY.model_copy(
                    update={"asked_at": asked_at}))
                times.append((time.perf_counter() - t0) * 1000)
                ranked = {
                    "graphmem": [item_turns(s.item) for s in items],
                    "bm25": [[turns[j].id] for j in bm25.rank(q.text, max(KS) * 2)],
                    "dense": [[turns[j].id] for j in np.argsort(-(vecs @ mem.embedder.embed([q.text], query=True)[0]))[: max(KS) * 2]],
                }
                for system, lists in ranked.items():
                    for k in KS:
                        results[system][k].append(score(lists, evidence, k, turn_text))
                answer = set(keywords(q.answer))
                if q.category == 5 or not answer:
                    continue
                # context() as assembled for a read-only recall (context() itself counts the read
                # as a use, which would move the recency of later questions' items)
                recalled = mem.recall(q.text, k=30, namespace=ns, filter=RecallFilter.READ_ONLY.model_copy(
                    update={"asked_at": asked_at}))
                order = bm25.rank(q.text, 60)
                packed_halves.append(halves[-1])
                for b in BUDGETS:
                    ctx = assemble(RecallResult(items=recalled, timings_ms={}, query_entities=[]), budget=b,
                                   counter=mem.counter)
                    packed["graphmem"][b].append(coverage(answer, ctx.text))
                    packed["bm25"][b].append(coverage(answer, bm25_context(turns, order, b)))
        mem.close()

    def mean(system: str, k: int, key: str, categories: set[int], half: str | None = None) -> float:
        vals = [r[key] for r, c, h in zip(results[system][k], cats, halves) if c in categories and half in (None, h)]
        return sum(vals) / len(vals) if vals else float("nan")

    main_cats = {1, 2, 3, 4}
    report: dict = {"mode": args.mode, "recall_options": args.set, "conversations": len(convs), "questions": {CATEGORIES[c]: cats.count(c) for c in sorted(set(cats))},
                    "ingest_seconds": round(t_ingest, 1), "recall_ms_p50": statistics.median(times),
                    "recall_ms_p95": float(np.percentile(times, 95)), "systems": {}}
    print(f"LoCoMo, {len(convs)} conversations, mode {args.mode}: {sum(1 for c in cats if c in main_cats)} questions "
          f"in categories 1-4 ({cats.count(5)} adversarial apart); ingest {t_ingest:.0f} s; graphmem recall "
          f"p50 {report['recall_ms_p50']:.1f} ms, p95 {report['recall_ms_p95']:.1f} ms per question\n")
    print("| system | recall@5 | recall@10 | recall@20 | all found@10 | turns/10 items | tokens/10 items | "
          "recall@10 at 10 turns | multi-hop@10 | temporal@10 | open-domain@10 | single-hop@10 | adversarial@10 |")
    print("|---|" + "---|" * 12)
    for system in results:
        row = {f"recall@{k}": mean(system, k, "recall", main_cats) for k in KS}
        row.update({
            "all@10": mean(system, 10, "all", main_cats), "turns@10": mean(system, 10, "turns", main_cats),
            "tokens@10": mean(system, 10, "tokens", main_cats), "budget@10": mean(system, 10, "recall_budget", main_cats),
            **{f"{CATEGORIES[c]}@10": mean(system, 10, "recall", {c}) for c in (1, 2, 3, 4, 5)},
        })
        report["systems"][system] = row
        print(f"| {system} | " + " | ".join(f"{v:.3f}" if "turns" not in k and "tokens" not in k else f"{v:.1f}"
                                         for k, v in row.items()) + " |")
    if len(set(halves)) > 1:
        print("\n| half | system | recall@10 | recall@10 at 10 turns | multi-hop@10 | temporal@10 | open-domain@10 | "
              "single-hop@10 |")
        print("|---|---|" + "---|" * 6)
        for half in ("0-4", "5-9"):
            for system in results:
                row = [mean(system, 10, "recall", main_cats, half), mean(system, 10, "recall_budget", main_cats, half),
                       *(mean(system, 10, "recall", {c}, half) for c in (1, 2, 3, 4))]
                report["systems"][system][f"half {half}"] = row
                print(f"| {half} | {system} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    print(f"\nAnswers per token: gold answer words in a context of B tokens ({len(packed_halves)} questions "
          "with an answer in categories 1-4; all = every answer word there, share = mean share found)\n")
    print("| system | half | " + " | ".join(f"all@{b} | share@{b}" for b in BUDGETS) + " |")
    print("|---|---|" + "---|---|" * len(BUDGETS))
    report["answers"] = {}
    for system in packed:
        for half in ("all", *sorted(set(packed_halves))):
            row = {}
            for b in BUDGETS:
                vals = [v for v, h in zip(packed[system][b], packed_halves) if half in ("all", h)]
                row[f"all@{b}"] = sum(v["all"] for v in vals) / len(vals) if vals else float("nan")
                row[f"share@{b}"] = sum(v["share"] for v in vals) / len(vals) if vals else float("nan")
            report["answers"][f"{system} {half}"] = row
            print(f"| {system} | {half} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |")
    args.out.mkdir(parents=True, exist_ok=True)
    out_json = args.out / f"locomo-{args.mode}.json"
    out_json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        labels = [CATEGORIES[c] for c in (1, 2, 3, 4)] + ["overall"]
        fig, ax = plt.subplots(figsize=(9, 4))
        width = 0.27
        for i, system in enumerate(results):
            vals = [report["systems"][system][f"{CATEGORIES[c]}@10"] for c in (1, 2, 3, 4)] + [report["systems"][system]["recall@10"]]
            ax.bar(np.arange(len(labels)) + (i - 1) * width, vals, width, label=system)
        ax.set_xticks(np.arange(len(labels)), labels)
        ax.set_ylim(0, 1)
        ax.set_ylabel("evidence recall@10")
        ax.set_title(f"LoCoMo evidence recall@10 ({args.mode} mode, categories 1-4)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.out / f"locomo-{args.mode}.png", dpi=120)
        print(f"\nwrote {out_json} and {args.out / f'locomo-{args.mode}.png'}")
    except ImportError:
        print(f"\nwrote {out_json} (pip install matplotlib for the chart)")


if __name__ == "__main__":
    main()
