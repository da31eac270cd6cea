"""The relationship question set: recall@5 of the turn that answers a question reached through
1-3 relations ("Which city does Marek Nowak's sister's husband work in?"), per language and hop
count. Fast path (turns only): with the default recall and with signals off. With
``--extraction``: the same conversations extracted by the model (memories, episodes and the
relation edges between people), every layer ranked, the answering turn counted among the first
5 turns the ranked items carry (an equal budget of turns) and among the top 5 items' turns, the
fast path beside it in the same run.

    python benchmarks/relations.py
    python benchmarks/relations.py --set hop_decay=0.4
    python benchmarks/relations.py --extraction            # the recorded model replies
    python benchmarks/relations.py --extraction --record   # ask the local model what is not recorded
    python benchmarks/relations.py --heldout --extraction  # the held-out households

Six synthetic households and teams, English and Chinese (``tests/data/relations/households.json``),
and four held out (``heldout.json``: other people and words, relations stated in passing); each in
its own namespace of the embedded store. The model's replies CI replays are in
``tests/data/relations/recordings.json`` and ``heldout_recordings.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
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


def extracting(tmp: Path, recordings: Path, record: bool):
    """A store whose windows are extracted with the recorded replies (the local model for any
    window not recorded, with ``record``), and its extractor."""
    from graphmem.engine.extraction import make_extractor
    from graphmem.scripts import RecordingExtractor, Recordings

    settings = Settings(extraction="manual")
    recorder = RecordingExtractor(Recordings(recordings), make_extractor(settings) if record else None)
    return Memory(tmp / "rel-llm.db", settings=settings, extractor=recorder), recorder


def row(name: str, found: dict, keys: list) -> str:
    return f"| {name} | " + " | ".join(f"{sum(found[key]) / len(found[key]):.3f} ({len(found[key])})"
                                       for key in keys) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--extraction", action="store_true", help="also extract with the model's recorded replies")
    ap.add_argument("--record", action="store_true", help="with --extraction: ask the local model for windows "
                    "not recorded, and save the replies")
    ap.add_argument("--heldout", action="store_true", help="the held-out households (tests/data/relations/heldout.json)")
    ap.add_argument("--recordings", type=Path, default=None, help="the recorded replies (default: the set's own)")
    args = ap.parse_args()
    households = relations_set.load(relations_set.HELDOUT if args.heldout else relations_set.DATA)
    recordings = args.recordings or (relations_set.HELDOUT_RECORDINGS if args.heldout else relations_set.RECORDINGS)
    rows = {"defaults" if not args.set else " ".join(args.set): args.set} if args.set else OFF
    keys = sorted({(q.lang, q.hops) for h in households for q in h.questions})
    header = ("| configuration | " + " | ".join(f"{lang} {hops} hop{'s' * (hops > 1)}" for lang, hops in keys)
              + " |\n|---|" + "---|" * len(keys))
    with tempfile.TemporaryDirectory(prefix="graphmem-relations-") as tmp:
        mem = Memory(Path(tmp) / "rel.db", settings=Settings(extraction="off"))
        for h in households:
            relations_set.ingest(mem, h)
        mem.flush()
        print(f"Relationship set: {sum(len(h.questions) for h in households)} questions, "
              f"{len(households)} households; recall@{args.k} of the answering turn\n")
        print(header)
        for name, sets in rows.items():
            found = relations_set.evaluate(mem, households, k=args.k, options=recall_options(sets))
            print(row(f"fast path, {name}", found, keys))
        mem.close()
        if not args.extraction:
            return
        llm, recorder = extracting(Path(tmp), recordings, args.record)
        t0 = time.perf_counter()
        for h in households:
            relations_set.ingest(llm, h)
            llm.flush()
        took = time.perf_counter() - t0
        if args.record:  # every reply kept: the Neo4j stores ask a few prompts of their own (tests/test_relations.py)
            recorder.recordings.save(only_used=False)
        for name, sets in rows.items():
            options = recall_options(sets)
            for by in ("turns", "items"):
                found = relations_set.evaluate(llm, households, k=args.k, options=options, layers=None, by=by)
                print(row(f"extraction, {name}: at {args.k} {'turns' if by == 'turns' else 'items'}", found, keys))
        stats = {kind: sum(len(llm.list(kind, namespace=f"rel-{h.id}", limit=10_000)) for h in households)
                 for kind in ("memory", "episode")}
        edges, stated = relations_set.relation_edges(llm, households)
        right, elsewhere, facts = relations_set.facts_stored(llm, households)
        print(f"\nextraction: {stats['memory']} memories, {stats['episode']} episodes; {edges} of the {stated} "
              f"relations the turns state are relation edges; {right} of the {facts} facts people state are "
              f"memories of theirs, {elsewhere} memories give one to another person; {took:.0f} s")
        llm.close()


if __name__ == "__main__":
    main()
