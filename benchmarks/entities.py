"""Entity linking and typing on the labelled set (``tests/data/entity_eval/``): linking
precision, recall and F1 over every labelled mention (the entities each text's MENTIONS edges
reach, and the speaker its SAID edge names), type accuracy over the labelled entities, the
duplicate rate (stored entities that repeat one real entity, over all stored entities) and the
entities made of noise (no labelled entity: role words, thanks, spans of two names), with all
evidence and with each source of it switched off in turn.

    python benchmarks/entities.py                 # the table, English and Chinese and both
    python benchmarks/entities.py --only all      # one configuration

No model runs: turns go through ``add_messages`` and facts through ``remember``, each case in a
fresh embedded store, so the figures are the same on every run (CI replays them in
``tests/test_entity_eval.py``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphmem import Memory  # noqa: E402
from graphmem.models import EdgeType, Entity  # noqa: E402
from graphmem.text import normalise_name  # noqa: E402

EVAL = ROOT / "tests/data/entity_eval"
SHARED = ROOT.parent / "shared/bench"


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    typed: int = 0
    typed_right: int = 0
    stored: int = 0
    duplicates: int = 0
    noise: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what each miss was, for reading

    def add(self, other: Score) -> None:
        for name in ("tp", "fp", "fn", "typed", "typed_right", "stored", "duplicates"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.noise += other.noise
        self.errors += other.errors

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def type_accuracy(self) -> float:
        return self.typed_right / self.typed if self.typed else 1.0

    @property
    def duplicate_rate(self) -> float:
        return self.duplicates / self.stored if self.stored else 0.0


SETS = {"labelled": ("shared.jsonl", "hard.jsonl"), "heldout": ("heldout.jsonl",)}


def cases(langs: tuple[str, ...] = ("en", "zh"), which: str = "labelled") -> list[dict]:
    out = []
    for name in SETS[which]:
        for line in (EVAL / name).read_text(encoding="utf-8").splitlines():
            if line.strip() and (case := json.loads(line))["lang"] in langs:
                out.append(case)
    return out


_LOCOMO: dict | None = None
_MEMORYBANK: dict[str, dict] = {}


def turn_of(ref: str) -> dict:
    """A referenced turn's speaker, role and text, read from ../shared/bench."""
    global _LOCOMO
    source, _, rest = ref.partition(":")
    if source == "locomo":
        conv, dia = rest.split(":", 1)
        if _LOCOMO is None:
            _LOCOMO = json.loads((SHARED / "locomo/locomo10.json").read_text(encoding="utf-8"))
        c = _LOCOMO[int(conv)]["conversation"]
        turn = next(t for v in c.values() if isinstance(v, list) for t in v if t["dia_id"] == dia)
        return {"speaker": turn["speaker"], "role": "user", "text": turn["text"]}
    lang, user, day, index, side = rest.split(":")
    if lang not in _MEMORYBANK:
        path = SHARED / f"memorybank/eval_data/{lang}/memory_bank_{lang}.json"
        _MEMORYBANK[lang] = json.loads(path.read_text(encoding="utf-8"))
    pair = _MEMORYBANK[lang][user]["history"][day][int(index)]
    if side == "query":
        return {"speaker": user, "role": "user", "text": pair["query"]}
    return {"speaker": "", "role": "assistant", "text": pair["response"]}


def gold_of(case: dict) -> dict[str, str]:
    """Each normalised name or alias of a labelled entity -> that entity's name."""
    out = {}
    for e in case["entities"]:
        for n in (e["name"], *e.get("aliases", ())):
            out[normalise_name(n)] = e["name"]
    return out


def label(ent: Entity, gold: dict[str, str]) -> str:
    """The labelled entity a stored one stands for (by its name, else an alias), or a noise tag."""
    for n in (ent.name, *ent.aliases):
        if normalise_name(n) in gold:
            return gold[normalise_name(n)]
    return "noise:" + ent.name


def run_case(case: dict, workdir: Path, embedder=None) -> Score:
    score = Score()
    gold = gold_of(case)
    path = workdir / f"{case['id']}.db"
    with Memory(path, embedder=embedder) as mem:
        written: list[tuple[str, dict, str | None]] = []  # (record id, item, labelled speaker)
        for i, item in enumerate(case["items"]):
            if "remember" in item:
                rec = mem.remember(item["remember"])
                written.append((rec.id, item, None))
                continue
            turn = turn_of(item["ref"]) if "ref" in item else item
            msg = {"role": turn["role"], "content": turn["text"], "speaker": turn["speaker"]}
            [rec] = mem.add_messages("s", [msg])
            speaker = gold.get(normalise_name(turn["speaker"])) if turn["speaker"] else None
            written.append((rec.id, item, speaker))
        entities = {e.id: e for e in mem.list("entity", limit=10_000)}
        for rec_id, item, speaker in written:
            linked = {label(entities[e.target], gold) for e in mem.store.edges("default", [rec_id],
                                                                                   types=[EdgeType.MENTIONS])
                      if e.target in entities}
            want = set(item["mentions"])
            score.tp += len(linked & want)
            score.fp += len(linked - want)
            score.fn += len(want - linked)
            said = [label(entities[e.source], gold) for e in mem.store.edges("default", [rec_id], types=[EdgeType.SAID],
                                                                              direction="in") if e.source in entities]
            if speaker is not None:
                score.tp += said == [speaker]
                score.fn += said != [speaker]
            score.fp += len([s for s in said if s != speaker])
            for miss in sorted(want - linked):
                score.errors.append(f"{case['id']}: missed {miss!r} in {_text(item)!r}")
            for extra in sorted(linked - want):
                score.errors.append(f"{case['id']}: linked {extra!r} in {_text(item)!r}")
        by_gold: dict[str, list[Entity]] = {}
        for ent in entities.values():
            by_gold.setdefault(label(ent, gold), []).append(ent)
        score.stored = len(entities)
        for name, found in by_gold.items():
            if name.startswith("noise:"):
                score.noise.append(name[6:])
                continue
            score.duplicates += len(found) - 1
            if len(found) > 1:
                score.errors.append(f"{case['id']}: {len(found)} entities for {name!r}: "
                                    f"{', '.join(f'{e.name} ({e.type})' for e in found)}")
        for e in case["entities"]:
            found = by_gold.get(e["name"])
            if found:
                score.typed += 1
                best = max(found, key=lambda x: len(x.type_votes))
                score.typed_right += best.type == e["type"]
                if best.type != e["type"]:
                    score.errors.append(f"{case['id']}: {e['name']!r} typed {best.type} (votes {best.type_votes}), "
                                        f"labelled {e['type']}")
    return score


def _text(item: dict) -> str:
    return (item.get("remember") or item.get("text") or item.get("ref", ""))[:70]


@contextlib.contextmanager
def without(source: str) -> Iterator[None]:
    """One source of evidence switched off for a run of the benchmark."""
    from graphmem.lifecycle import builders, log_graph
    from graphmem.text import entities as tagging

    patches = {
        "all": [],
        "no NER": [mock.patch.object(tagging.EntityTagger, "tag_many", lambda self, texts: [[] for _ in texts])],
        "no dictionary match": [mock.patch.object(builders, "dictionary", lambda named: {}),
                                mock.patch.object(log_graph, "dictionary", lambda named: {})],
        "no name parts": [mock.patch.object(builders, "name_parts", lambda name: [])],
        "no noise filter": [mock.patch.object(m, "is_noise_name", lambda name: not normalise_name(name))
                            for m in (builders, log_graph, tagging)],
        "no speakers": [mock.patch.object(log_graph, "is_noise_name", lambda name: True)],
    }[source]
    with contextlib.ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        yield


SOURCES = ("all", "no NER", "no dictionary match", "no name parts", "no noise filter", "no speakers")


def evaluate(source: str = "all", embedder=None, which: str = "labelled") -> dict[str, Score]:
    """Scores by language ("en", "zh") and for both ("all"), with ``source`` switched off."""
    from graphmem.embed import make_embedder

    embedder = embedder or make_embedder("use")  # loaded once, not once a case
    out = {"en": Score(), "zh": Score(), "all": Score()}
    with without(source), tempfile.TemporaryDirectory() as tmp:
        for case in cases(which=which):
            score = run_case(case, Path(tmp), embedder)
            out[case["lang"]].add(score)
            out["all"].add(score)
    return out


def mentions(langs: tuple[str, ...] = ("en", "zh"), which: str = "labelled") -> int:
    """How many labelled mentions the set holds (text mentions and named speakers)."""
    n = 0
    for case in cases(langs, which):
        gold = gold_of(case)
        for item in case["items"]:
            turn = turn_of(item["ref"]) if "ref" in item else item
            n += len(item["mentions"]) + bool(turn.get("speaker") and normalise_name(turn["speaker"]) in gold)
    return n


# words no entity may be named by, written apart from the resolver's own list (an independent check)
ROLE_AND_INTERJECTION = frozenset("""
user assistant system bot chatbot ai agent human ai companion companion lol haha hahaha omg hmm um uh yay wow woohoo
congrats congratulations thanks thank you cheers hello hi hey bye okay ok sure yes no nope yeah awesome cool great
用户 助手 系统 机器人 ai伴侣 伴侣 谢谢 谢谢你 多谢 好的 好吧 嗯 嗯嗯 哈哈 哈哈哈 没事 加油 辛苦了 晚安 早安 你好 您好 再见 明白 明白了 对
""".split()) | {"ai companion", "thank you", "no problem", "sure thing"}


def corpus() -> None:
    """Every LoCoMo turn and every MemoryBank day (both languages) through the fast path, one
    store each: how many entities, which are named by a role word or an interjection (none may
    be), and the most mentioned ones, to read."""
    from collections import Counter

    from graphmem.embed import make_embedder

    embedder = make_embedder("use")
    locomo = json.loads((SHARED / "locomo/locomo10.json").read_text(encoding="utf-8"))
    sources = {"locomo": [[{"role": "user", "content": t["text"], "speaker": t["speaker"]}
                           for k, v in c["conversation"].items() if k.startswith("session_") and isinstance(v, list)
                           for t in v] for c in locomo]}
    for lang in ("en", "cn"):
        data = json.loads((SHARED / f"memorybank/eval_data/{lang}/memory_bank_{lang}.json").read_text(encoding="utf-8"))
        sources[f"memorybank-{lang}"] = [[m for day in u["history"].values() for pair in day for m in (
            {"role": "user", "content": pair["query"], "speaker": name},
            {"role": "assistant", "content": pair["response"], "speaker": ""})] for name, u in data.items()]
    print("| corpus | turns | entities | named by a role word or interjection | most mentioned |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, conversations in sources.items():
            with Memory(Path(tmp) / f"{name}.db", embedder=embedder) as mem:
                for i, turns in enumerate(conversations):
                    for j in range(0, len(turns), 200):
                        mem.add_messages(f"c{i}", turns[j : j + 200])
                entities = [e for e in mem.store.query("default", "entity", limit=1_000_000) if isinstance(e, Entity)]
                bad = sorted({e.name for e in entities if normalise_name(e.name) in ROLE_AND_INTERJECTION})
                counts = Counter(e.target for e in mem.store.edges("default", [e.id for e in entities],
                                                                     types=[EdgeType.MENTIONS], direction="in"))
                top = [e.name for e in sorted(entities, key=lambda e: -counts[e.id])[:12]]
                print(f"| {name} | {sum(map(len, conversations))} | {len(entities)} | {len(bad)} {bad[:10]} | "
                      f"{', '.join(top)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=SOURCES, help="one configuration")
    ap.add_argument("--errors", action="store_true", help="list every miss, extra link, duplicate and wrong type")
    ap.add_argument("--set", choices=SETS, default="labelled", help="labelled: LoCoMo, MemoryBank and the hard cases "
                    "(the rules were improved against its errors); heldout: cases written after the rules, run once")
    ap.add_argument("--corpus", action="store_true", help="instead: all of LoCoMo and MemoryBank through the fast "
                    "path, counting entities named by a role word or an interjection")
    args = ap.parse_args()
    if args.corpus:
        corpus()
        return
    print(f"{args.set} mentions: en {mentions(('en',), args.set)}, zh {mentions(('zh',), args.set)}")
    print("| evidence | language | linking P | R | F1 | type accuracy | duplicate rate | noise entities |")
    print("|---|---|---|---|---|---|---|---|")
    for source in [args.only] if args.only else SOURCES:
        scores = evaluate(source, which=args.set)
        for lang, s in scores.items():
            print(f"| {source} | {lang} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | "
                  f"{s.type_accuracy:.3f} | {s.duplicate_rate:.3f} | {len(s.noise)} |")
        if args.errors:
            print("\n".join(["", *scores["all"].errors, f"noise: {', '.join(scores['all'].noise)}", ""]))


if __name__ == "__main__":
    main()
