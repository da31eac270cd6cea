"""The relationship question set: recall@5 of the turn that answers a question reached through
1-3 relations ("Which city does Marek Nowak's sister's husband work in?"), per language and hop
count, fast path (turns only, no extraction), with the default recall and with signals off.

    python benchmarks/relations.py
    python benchmarks/relations.py --set hop_decay=0.4

Six synthetic households and teams, English and Chinese (``tests/data/relations/``); each in its
own namespace of the embedded store.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import relations_set  # noqa: E402
from locomo import recall_options  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.settings import Settings  # noqa: E402

OFF = {"defaults": [], "no multi-hop step (hop_decay=0)": ["hop_decay=0"],
       "graph off (speaker_match=0, relevance.graph=0)": ["speaker_match=0", "relevance.graph=0"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()
    households = relations_set.load()
    rows = {"defaults" if not args.set else " ".join(args.set): args.set} if args.set else OFF
    with tempfile.TemporaryDirectory(prefix="graphmem-relations-") as tmp:
        mem = Memory(Path(tmp) / "rel.db", settings=Settings(extraction="off"))
        for h in households:
            relations_set.ingest(mem, h)
        mem.flush()
        keys = sorted({(q.lang, q.hops) for h in households for q in h.questions})
        print(f"Relationship set: {sum(len(h.questions) for h in households)} questions, "
              f"{len(households)} households; recall@{args.k} of the answering turn, fast path\n")
        print("| configuration | " + " | ".join(f"{lang} {hops} hop{'s' * (hops > 1)}" for lang, hops in keys) + " |")
        print("|---|" + "---|" * len(keys))
        for name, sets in rows.items():
            found = relations_set.evaluate(mem, households, k=args.k, options=recall_options(sets))
            print(f"| {name} | " + " | ".join(f"{sum(found[key]) / len(found[key]):.3f} ({len(found[key])})"
                                             for key in keys) + " |")
        mem.close()


if __name__ == "__main__":
    main()
