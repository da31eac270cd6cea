"""Known-item recall on MemoryBank (English and Chinese): the second data set recall signals
are checked on, a statement-style companion log where neighbouring turns are usually unrelated.

    python benchmarks/memorybank_recall.py                      # both languages, defaults
    python benchmarks/memorybank_recall.py --set neighbour_mode=all --set session_prior=0

MemoryBank has no gold evidence, so each query is the middle quarter of a sampled user turn
(at least 60 characters in English, 20 in Chinese) and the gold item is that turn: a signal that
lets noise turns borrow relevance pushes the real turn down. Each user is a namespace, each day
a session (dated), turns are the user's queries and the companion's responses. Prints recall@1,
@5 and @10 per language.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import recall_options  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.settings import RecallFilter, Settings  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared/bench/memorybank/eval_data"


def load(lang: str) -> dict[str, dict[str, list[dict]]]:
    """user -> day -> turns ({id, speaker, role, content, created_at})."""
    data = json.loads((DATA / lang / f"memory_bank_{lang}.json").read_text(encoding="utf-8"))
    out: dict[str, dict[str, list[dict]]] = {}
    for ui, (name, user) in enumerate(data.items()):
        for day, turns in user["history"].items():
            at = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=timezone.utc)
            rows = []
            for ti, t in enumerate(turns):
                for j, (role, speaker) in enumerate((("query", name), ("response", "AI"))):
                    text = (t.get(role) or "").strip()
                    if text:
                        rows.append({"id": f"u{ui}-{day}-{ti}-{role}", "speaker": speaker,
                                     "role": "user" if role == "query" else "assistant", "content": text,
                                     "created_at": at + timedelta(minutes=2 * ti + j)})
            out.setdefault(f"u{ui}", {})[day] = rows
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=300, help="queries per language")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    args = ap.parse_args()
    settings = Settings(extraction="off", recall=recall_options(args.set))
    print(f"MemoryBank known-item recall, options {args.set or 'defaults'}\n")
    print("| language | queries | recall@1 | recall@5 | recall@10 |\n|---|---|---|---|---|")
    for lang, min_len in (("en", 60), ("cn", 20)):
        rng = random.Random(args.seed)
        users = load(lang)
        with tempfile.TemporaryDirectory(prefix="graphmem-mb-") as tmp:
            mem = Memory(Path(tmp) / "mb.db", settings=settings)
            pool = []
            for ns, days in users.items():
                for day, rows in days.items():
                    if rows:
                        mem.add_messages(day, rows, namespace=ns, wait=False)
                pool += [(ns, r) for rows in days.values() for r in rows
                         if r["role"] == "user" and len(r["content"]) >= min_len]
            mem.flush()
            hits = {1: 0, 5: 0, 10: 0}
            sample = rng.sample(pool, min(args.queries, len(pool)))
            for ns, row in sample:
                text = row["content"]
                query = text[int(len(text) * 0.375) : int(len(text) * 0.625)]
                last = max(r["created_at"] for rows in users[ns].values() for r in rows)
                items = mem.recall(query, k=10, namespace=ns, layers=["message"],
                                   filter=RecallFilter.READ_ONLY.model_copy(update={"asked_at": last}))
                ids = [s.item.id for s in items]
                for k in hits:
                    hits[k] += row["id"] in ids[:k]
            mem.close()
        n = len(sample)
        print(f"| {lang} | {n} | {hits[1] / n:.3f} | {hits[5] / n:.3f} | {hits[10] / n:.3f} |")


if __name__ == "__main__":
    main()
