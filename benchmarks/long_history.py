"""Long histories: each LoCoMo conversation buried among other chats, and what each default
recall signal does there.

    python benchmarks/long_history.py                      # all 10 conversations, 40 filler sessions each
    python benchmarks/long_history.py --conversations 2 --fillers 60

A namespace per LoCoMo conversation holds its sessions and ``--fillers`` other sessions: half
are sessions of the other LoCoMo conversations, half MemoryBank days (the user's turns and the
assistant's replies), their times spread over the conversation's own span so that its sessions
sit among them. The conversation's questions (categories 1-4) are asked the day after its last
session, read-only. Evidence recall at a budget of 10 turns (the items' turns, in rank order,
until 10) is reported for graphmem with its defaults, for graphmem with each default signal
switched off, and for BM25 over the same turns. A signal that helps must not lower recall here
against the same run with it off (issue 45); the table prints the difference, on minus off.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_data  # noqa: E402
from locomo import BM25, item_turns, recall_options, score  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.settings import RecallFilter, Settings  # noqa: E402

MEMORYBANK = Path(__file__).resolve().parents[2] / "shared/bench/memorybank/eval_data/en/memory_bank_en.json"
# each default signal, and the setting that switches it off
SIGNALS = {
    "session prior": "session_prior=0",
    "adjacent turns": "neighbour_turns=0",
    "speaker match": "speaker_match=0",
    "graph evidence": "relevance.graph=0",
    "multi-hop walk": "hop_decay=0",
    "feedback": "feedback=0",
    "time boost": "time_boost=0",
    "superseded turns damped": "superseded_turns=1",
}
BUDGET = 10


def memorybank_days(path: Path) -> list[list[dict]]:
    """Every MemoryBank day as turns (the user's, then the assistant's reply)."""
    days = []
    for name, user in json.loads(path.read_text(encoding="utf-8")).items():
        for turns in user["history"].values():
            day = []
            for turn in turns:
                for who, text in ((name, turn.get("query")), ("assistant", turn.get("response"))):
                    if text and text.strip():
                        day.append({"speaker": who, "role": "assistant" if who == "assistant" else "user",
                                    "content": text.strip()})
            if day:
                days.append(day)
    return days


def sessions_of(conv: locomo_data.Conversation) -> list[list[locomo_data.Turn]]:
    by_session: dict[str, list] = defaultdict(list)
    for t in conv.turns:
        by_session[t.session].append(t)
    return list(by_session.values())


def bury(mem: Memory, ns: str, i: int, convs: list, days: list[list[dict]], fillers: int) -> list[dict]:
    """Conversation ``i``'s sessions with ``fillers`` others spread over its span; returns every
    turn written ({id, text})."""
    own = sessions_of(convs[i])
    others = [s for j, c in enumerate(convs) if j != i for s in sessions_of(c)]
    start, end = own[0][0].at, own[-1][-1].at
    picked: list[tuple[str, list[dict]]] = []
    for f in range(fillers):
        if f % 2 == 0:
            sess = others[(i * 7 + f * 3) % len(others)]
            picked.append((f"filler-{f}", [{"speaker": t.speaker, "content": t.text} for t in sess]))
        else:
            picked.append((f"filler-{f}", days[(i * 11 + f * 5) % len(days)]))
    step = (end - start) / (fillers + 1)
    plan = [(sess[0].at, sess[0].session, [{"id": t.id, "speaker": t.speaker, "content": t.text, "created_at": t.at}
                                           for t in sess]) for sess in own]
    for f, (sid, turns) in enumerate(picked):
        at = start + step * (f + 1)
        plan.append((at, sid, [{**t, "id": f"{sid}-{k}", "created_at": at + timedelta(minutes=k)}
                               for k, t in enumerate(turns)]))
    written = []
    for _, sid, turns in sorted(plan, key=lambda p: p[0]):
        mem.add_messages(sid, turns, namespace=ns)
        written += [{"id": t["id"], "text": t["content"]} for t in turns]
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=locomo_data.DEFAULT_PATH)
    ap.add_argument("--memorybank", type=Path, default=MEMORYBANK)
    ap.add_argument("--conversations", type=int, default=None)
    ap.add_argument("--fillers", type=int, default=40, help="other sessions per conversation")
    args = ap.parse_args()
    convs = locomo_data.load(args.data)
    days = memorybank_days(args.memorybank)
    runs = {"defaults": recall_options([]), **{name: recall_options([off]) for name, off in SIGNALS.items()}}
    hits: dict[str, list[float]] = {name: [] for name in [*runs, "bm25"]}
    halves: list[str] = []
    sizes: list[int] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="graphmem-long-") as tmp:
        mem = Memory(Path(tmp) / "long.db", settings=Settings(extraction="off"))
        for i in range(args.conversations or len(convs)):
            ns = f"long-{i}"
            written = bury(mem, ns, i, convs, days, args.fillers)
            mem.flush()
            sizes.append(len(written))
            bm25 = BM25([t["text"] for t in written])
            asked_at = max(t.at for t in convs[i].turns) + timedelta(days=1)
            read = RecallFilter.READ_ONLY.model_copy(update={"asked_at": asked_at})
            for q in convs[i].questions:
                if q.category == 5 or not q.evidence:
                    continue
                halves.append("0-4" if i < 5 else "5-9")
                for name, options in runs.items():
                    items = mem.recall(q.text, k=2 * BUDGET, namespace=ns, filter=read, options=options)
                    hits[name].append(score([item_turns(s.item) for s in items], q.evidence, BUDGET, {})["recall_budget"])
                hits["bm25"].append(score([[written[j]["id"]] for j in bm25.rank(q.text, 2 * BUDGET)], q.evidence,
                                          BUDGET, {})["recall_budget"])
            print(f"conversation {i}: {len(written)} turns, {len(hits['bm25'])} questions so far, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
        mem.close()

    def mean(name: str, half: str | None = None) -> float:
        vals = [v for v, h in zip(hits[name], halves) if half in (None, h)]
        return sum(vals) / len(vals) if vals else float("nan")

    print(f"Long histories: {len(sizes)} LoCoMo conversations, each among {args.fillers} other sessions "
          f"({min(sizes)}-{max(sizes)} turns a namespace), {len(halves)} questions; evidence recall at "
          f"{BUDGET} turns\n")
    print("| run | all | 0-4 | 5-9 | on minus off (all) |")
    print("|---|---|---|---|---|")
    base = mean("defaults")
    for name in [*runs, "bm25"]:
        label = name if name in ("defaults", "bm25") else f"{name} off (`{SIGNALS[name]}`)"
        delta = "" if name in ("defaults", "bm25") else f"{base - mean(name):+.3f}"
        print(f"| {label} | {mean(name):.3f} | {mean(name, '0-4'):.3f} | {mean(name, '5-9'):.3f} | {delta} |")
    print(f"\n{time.perf_counter() - t0:.0f} s; started {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")


if __name__ == "__main__":
    main()
