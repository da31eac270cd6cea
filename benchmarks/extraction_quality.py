"""Extraction quality and cost on the labelled set in tests/data/extraction_eval/ (60 windows,
40 conflict cases, English and Chinese), through the whole pipeline: ``Memory.add_messages``,
extraction, the fold rules, then what is stored is scored against the labels.

    python benchmarks/extraction_quality.py            # replay the recorded replies of the model
    python benchmarks/extraction_quality.py --live     # ask the local model (about 20 min on 2 cores)
    python benchmarks/extraction_quality.py --live --record   # ... and keep its replies for CI
    python benchmarks/extraction_quality.py --fill --record   # ask only what has no recorded reply

The matching rule and the metrics are documented in tests/data/extraction_eval/README.md; no
second model judges anything. CPU seconds are the process CPU time of each model call, measured
when the reply was produced (``--live``) and stored with the recording, so a replayed run reports
what the model cost when it answered. Prints one table for the windows, one for the conflicts.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphmem import Memory  # noqa: E402
from graphmem.extract.extractors import Completion, Extractor, copies_an_example  # noqa: E402
from graphmem.extract.people import relation_of  # noqa: E402
from graphmem.models import EdgeType  # noqa: E402
from graphmem.scripts import RecordingExtractor, Recordings  # noqa: E402
from graphmem.settings import Settings  # noqa: E402

EVAL = ROOT / "tests" / "data" / "extraction_eval"
RECORDED = EVAL / "recorded.json"
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
_HAN = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
# The scorer's own reading of a memory that states its value as past or left ("used to live in
# Madrid", "魏兰辞了昆明银行的工作"). It is fixed and separate from the product's change cues
# (graphmem/extract/checks.py), so a cue added to the product cannot move the yardstick.
_SAYS_PAST = re.compile(
    r"\b(used to|no longer|not \w+ any ?more|any ?more|formerly|previously|former|ex-|left|leaves|quit|quits|sold|"
    r"moved (out|away|from)|gave up|gives up|stops|stopped|instead of|behind (me|us|him|her|them)|gone|ended|broke up|split up|divorced|switched|replaced|retired|"
    r"passed away|died|cancell?ed|closed)\b|"
    r"以前|之前|曾经|原来|不再|已经\S{0,2}不(?!错|少|早|小|用)|不\S{1,6}了|离开|辞了|辞职|离职|卖了|卖掉|戒了|搬走|搬出|"
    r"停止|分手|离婚|换成|改成|去世|取消|结束了|关门|倒闭",
    re.IGNORECASE)


# matching ---------------------------------------------------------------------------------
def groups(keys: list) -> list[list[str]]:
    """``[a, [b, c]]`` -> ``[[a], [b, c]]``: every group must match, any alternative of one."""
    return [[str(k)] if not isinstance(k, list) else [str(x) for x in k] for k in keys or []]


def has(text: str, key: str) -> bool:
    """A Latin key as a whole word (``go`` is not ``good``), a key with Han characters as a substring."""
    key = key.casefold()
    if _HAN.search(key):
        return key in text
    return re.search(rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])", text) is not None  # Han characters are no boundary


def matches(text: str, keys: list) -> bool:
    gs = groups(keys)
    return bool(gs) and all(any(has(text, k) for k in g) for g in gs)


def haystack(m) -> str:
    return " ".join(x for x in (m.text, m.subject, m.object) if x).casefold()


def language_kept(text: str, lang: str) -> bool:
    han, latin = len(_HAN.findall(text)), len(_LATIN.findall(text))
    return han * 2 >= latin and han > 0 if lang == "zh" else latin >= han


def who(name: str | None, people: dict[str, list[str]]) -> str | None:
    """The person of the window a subject names, 'assistant', or None (unnamed: 'the user')."""
    if not name:
        return None
    low = name.casefold()
    if has(low, "assistant") or has(low, "ai") or "助手" in low:
        return "assistant"
    for part in (re.split(r"'s\s+|的", low)[-1], low):  # "Ben's wife" is the wife
        for person, aliases in people.items():
            if any(has(part, a.casefold()) for a in [person, *aliases]):
                return person
    return None


# running ----------------------------------------------------------------------------------
class TimedExtractor:
    """The live model, with the process CPU seconds of each call kept beside its recording."""

    def __init__(self, live: Extractor, recordings: Recordings) -> None:
        self.live, self.recordings, self.name = live, recordings, live.name

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion:
        from graphmem.scripts.recording import prompt_key

        if hasattr(self.live, "_llm"):
            self.live._llm()  # loaded before the clock starts: the load is not a per-window cost
        c0, w0 = time.process_time(), time.perf_counter()
        out = self.live.complete(system, user, schema, max_tokens, stop=stop)
        self.recordings.cpu[prompt_key(system, user)] = (time.process_time() - c0, time.perf_counter() - w0)
        return out

    def yes_probability(self, system: str, user: str) -> float | None:
        from graphmem.scripts.recording import prompt_key

        c0, w0 = time.process_time(), time.perf_counter()
        out = self.live.yes_probability(system, user)
        self.recordings.cpu[prompt_key(system, user)] = (time.process_time() - c0, time.perf_counter() - w0)
        return out


class CostedRecordings(Recordings):
    """Recordings that also keep each call's CPU and wall seconds."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.cpu: dict[str, tuple[float, float]] = {}

    def save(self, only_used: bool = True) -> None:
        for key, (cpu, wall) in self.cpu.items():
            if key in self.data:
                self.data[key].update(cpu_seconds=round(cpu, 2), wall_seconds=round(wall, 2))
        super().save(only_used)


@dataclass
class Cost:
    windows: int = 0
    messages: int = 0
    calls: int = 0
    first_try_valid: int = 0
    sent: int = 0
    cpu: float = 0.0
    prompt_tokens: int = 0
    output_tokens: int = 0
    dropped: int = 0  # extracted, then dropped by the grounding check

    def add(self, entries: list[dict], messages: int, recordings: CostedRecordings, used_before: set[str]) -> None:
        self.windows += 1
        self.messages += messages
        for e in entries:
            self.dropped += len(e.get("dropped", []))
            if e.get("error") or e.get("calls"):  # sent (one with no usable reply even after the retry too)
                self.sent += 1
            if e.get("calls"):
                self.calls += e["calls"]
                self.first_try_valid += e["calls"] == 1 and not e.get("error")
                self.prompt_tokens += e.get("prompt_tokens", 0)
                self.output_tokens += e.get("output_tokens", 0)
        for key in recordings.used - used_before:
            rec = recordings.data.get(key, {})
            self.cpu += recordings.cpu.get(key, (rec.get("cpu_seconds", 0.0), 0))[0]


class OncePerRun(RecordingExtractor):
    """With a live model: every prompt is asked once per run (the conflict cases of one person
    share their first window's prompt), then answered from what it said. With ``autosave`` the
    recordings are written after every reply the model gives, so a long run that is stopped keeps
    what it paid for."""

    def __init__(self, *args: Any, autosave: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.autosave = autosave

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion:
        from graphmem.scripts.recording import prompt_key

        key = prompt_key(system, user)
        if self.refresh and key in self.recordings.cpu:
            return self.recordings.replay(key)
        asked = key in self.recordings.cpu
        out = super().complete(system, user, schema, max_tokens, stop)
        if self.autosave and key in self.recordings.cpu and not asked:
            self.recordings.save(only_used=False)
        return out

    def yes_probability(self, system: str, user: str) -> float | None:
        from graphmem.scripts.recording import prompt_key

        key = prompt_key(system, user)
        if self.refresh and key in self.recordings.cpu:
            self.recordings.used.add(key)
            reply = self.recordings.data[key]["reply"]
            return float(reply) if reply else None
        asked = key in self.recordings.cpu
        out = super().yes_probability(system, user)
        if self.autosave and key in self.recordings.cpu and not asked:
            self.recordings.save(only_used=False)
        return out


def open_memory(path: Path, recordings: CostedRecordings, live: bool, fill: bool = False,
                record: bool = False) -> Memory:
    """``live``: every prompt goes to the model (once per run); ``fill``: only the prompts
    without a recorded reply do; neither: replay only. ``record``: save after every reply."""
    settings = Settings(extraction="manual")
    inner = None
    if live or fill:
        from graphmem.engine.extraction import make_extractor

        inner = TimedExtractor(make_extractor(settings), recordings)
    return Memory(path, settings=settings, extractor=OncePerRun(recordings, inner, refresh=live,
                                                                     autosave=record))


def messages(turns: list, start: datetime, session: str) -> list[dict]:
    return [{"id": f"{session}-{i}", "speaker": s, "role": "assistant" if s == "assistant" else "user",
             "content": t, "created_at": start + timedelta(minutes=i)} for i, (s, t) in enumerate(turns)]


def ingest(mem: Memory, recordings: CostedRecordings, ns: str, session: str, turns: list, start: datetime,
           cost: Cost | None) -> list[dict]:
    used = set(recordings.used)
    mem.add_messages(session, messages(turns, start, session), namespace=ns)
    entries = mem.extract(namespace=ns)
    if cost is not None:
        cost.add(entries, len(turns), recordings, used)
    return entries


# the windows ------------------------------------------------------------------------------
@dataclass
class WindowScore:
    facts: int = 0
    found: int = 0
    memories: int = 0
    supported: int = 0
    attribution: int = 0
    non_facts: int = 0
    leaks: int = 0
    contradicted: int = 0
    lang_kept: int = 0
    false_drops: int = 0  # memories a check dropped that state a required fact (its keys, none of its wrong ones)
    relations: int = 0
    relations_found: int = 0
    unnamed: int = 0
    procedures_expected: int = 0
    procedures_found: int = 0
    procedures_invented: int = 0
    misses: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __iadd__(self, o: WindowScore) -> WindowScore:
        for k, v in vars(o).items():
            setattr(self, k, getattr(self, k) + v)
        return self


def states(f: dict, hay: str) -> bool:
    return matches(hay, f["keys"]) and not matches(hay, f.get("wrong") or [])


def related(expected: list, edges: list[tuple[str, str, str]], people: dict[str, list[str]]) -> bool:
    """An edge ``from -relation-> to`` whose ends name the two people (a name or an alias) and
    whose predicate is one of the relation's words or names the same relation (boss: manager)."""
    owner, words, target = expected
    wanted = {w.casefold() for w in words} | {relation_of(w) for w in words} - {None}

    def names(person: str, name: str) -> bool:
        return any(name.casefold() == a.casefold() for a in [person, *people.get(person, [])])

    return any(names(owner, a) and names(target, b) and (p.casefold() in wanted or relation_of(p) in wanted
                                                         or any(x in wanted for x in p.casefold().split("_")))
               for a, p, b in edges)


def score_window(w: dict, memories: list, procedures: list, dropped: list[dict] = (),
                 edges: list[tuple[str, str, str]] = ()) -> WindowScore:
    s = WindowScore()
    people = w.get("people") or {}
    required = [f for f in w["facts"] if not f.get("optional")]
    s.facts = len(required)
    for d in dropped:
        if any(states(f, d["text"].casefold()) for f in required):
            s.false_drops += 1
            s.errors.append(f"{w['id']}: dropped ({d['why']}): {d['text']}")
    for r in w.get("relations") or []:
        s.relations += 1
        s.relations_found += related(r, list(edges), people)
    for f in required:
        hit = any(matches(haystack(m), f["keys"]) and not matches(haystack(m), f.get("wrong") or []) for m in memories)
        s.found += hit
        if not hit:
            s.misses.append(f"{w['id']}: {f['text']}")
    window_text = " ".join(f"{who}: {t}" for who, t in w["turns"])
    for m in memories:
        s.memories += 1
        hay = haystack(m)
        if copies_an_example(m.text, window_text):
            s.leaks += 1
            s.errors.append(f"{w['id']}: copies an example: {m.text}")
            continue
        s.lang_kept += language_kept(m.text, w["lang"])
        # a memory that states two facts ("豆豆是只三岁的柯基" names the dog of "蒋欣's dog is 豆豆")
        # is scored against the one about the person its subject names
        stated = [f for f in w["facts"] if matches(hay, f["keys"])]
        fact = next((f for f in stated if f["about"] == who(m.subject, people)), stated[0] if stated else None)
        if fact is not None:
            wrong = any(matches(hay, [g]) for g in groups(fact.get("wrong") or []))
            subject = who(m.subject, people)
            own = [fact["about"], *people.get(fact["about"], [])]
            misattributed = subject not in (None, fact["about"]) and not any(has(m.text.casefold(), a.casefold()) for a in own)
            if misattributed:
                s.attribution += 1
                s.errors.append(f"{w['id']}: attributed to {m.subject}: {m.text}")
            elif wrong:
                s.contradicted += 1
                s.errors.append(f"{w['id']}: wrong: {m.text}")
            else:
                s.supported += 1
                s.unnamed += subject is None
            continue
        bad = next((n for n in w.get("not") or [] if matches(hay, n["keys"])), None)
        why = bad["why"] if bad else "unsupported"
        if why == "assistant":
            s.attribution += 1
        elif why == "example":
            s.leaks += 1
        elif why != "unsupported":
            s.non_facts += 1
        s.errors.append(f"{w['id']}: {why}: {m.text}")
    if w.get("procedure"):
        s.procedures_expected = 1
        s.procedures_found = int(any(matches(p.task.casefold(), w["procedure"]) for p in procedures))
    else:
        s.procedures_invented = len(procedures)
    return s


def run_windows(mem: Memory, recordings: CostedRecordings, windows: list[dict]) -> dict[str, tuple[WindowScore, Cost]]:
    out: dict[str, tuple[WindowScore, Cost]] = defaultdict(lambda: (WindowScore(), Cost()))
    for i, w in enumerate(windows):
        ns = f"w-{w['id']}"
        score, cost = out[w["lang"]]
        entries = ingest(mem, recordings, ns, w["id"], w["turns"], T0 + timedelta(days=i), cost)
        memories = mem.list("memory", namespace=ns, status="active", limit=1000)
        procedures = mem.list("procedure", namespace=ns, limit=100)
        dropped = [d for e in entries for d in e.get("dropped", [])]
        score += score_window(w, memories, procedures, dropped, relation_edges(mem, ns))
    return dict(out)


def relation_edges(mem: Memory, ns: str) -> list[tuple[str, str, str]]:
    """(source name, predicate, target name) of every relation edge of a namespace."""
    names = {e.id: e.name for e in mem.list("entity", namespace=ns, limit=1000)}
    return [(names.get(e.source, ""), e.key, names.get(e.target, ""))
            for e in mem.store.edges(ns, list(names), types=[EdgeType.RELATES_TO], direction="out")]


# the conflicts ----------------------------------------------------------------------------
@dataclass
class ConflictScore:
    cases: int = 0
    changes: int = 0
    base_missed: int = 0
    replaced: int = 0
    retired: int = 0
    retired_right: int = 0
    kept_violations: int = 0
    notes: list[str] = field(default_factory=list)


def old_only(m, case: dict) -> bool:
    """The memory still states the old value as current: it names it, not the new one, and
    does not say it is past ("used to", "left", "以前")."""
    hay = haystack(m)
    return (matches(hay, case["old"]) and not (case.get("new") and matches(hay, case["new"]))
            and not _SAYS_PAST.search(m.text))


def run_conflicts(mem: Memory, recordings: CostedRecordings, data: dict) -> dict[str, tuple[ConflictScore, Cost]]:
    out: dict[str, tuple[ConflictScore, Cost]] = defaultdict(lambda: (ConflictScore(), Cost()))
    for case in data["cases"]:
        person = data["people"][case["person"]]
        batch = case.get("heldout")
        score, cost = out[person["lang"] + ("" if not batch else " held out" if batch is True else f" held out {batch}")]
        ns = f"c-{case['id']}"
        ingest(mem, recordings, ns, "base", person["base"], T0, None)
        base = mem.list("memory", namespace=ns, limit=1000)
        retired_before = {m.id for m in base if m.status.value == "superseded"}
        stored_old = any(old_only(m, case) for m in base if m.status.value == "active")
        stored_keep = [k for k in case.get("keep") or [] if any(matches(haystack(m), [k]) for m in base
                                                                  if m.status.value == "active")]
        ingest(mem, recordings, ns, "then", case["then"], T0 + timedelta(days=30), cost)
        after = mem.list("memory", namespace=ns, limit=1000)
        active = [m for m in after if m.status.value == "active"]
        retired = [m for m in after if m.status.value == "superseded" and m.id not in retired_before]
        score.cases += 1
        score.retired += len(retired)
        for r in retired:
            right = case["kind"] == "change" and matches(haystack(r), case["old"])
            score.retired_right += right
            if not right:
                score.notes.append(f"{case['id']} ({case['kind']}): retired {r.text!r}")
        for k in stored_keep:
            if not any(matches(haystack(m), [k]) for m in active):
                score.kept_violations += 1
                score.notes.append(f"{case['id']}: lost {k}")
        if case["kind"] != "change":
            continue
        if not stored_old:
            score.base_missed += 1
            score.notes.append(f"{case['id']}: base never stored {case['old']}")
            continue
        score.changes += 1
        gone = not any(old_only(m, case) for m in active)
        new_active = any(matches(haystack(m), case["new"]) for m in active)
        score.replaced += gone and new_active
        if not (gone and new_active):
            still = [m.text for m in active if old_only(m, case)]
            score.notes.append(f"{case['id']}: old still active {still}" if still else f"{case['id']}: new value not stored")
    return dict(out)


# report ------------------------------------------------------------------------------------
def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def windows_table(results: dict[str, tuple[WindowScore, Cost]]) -> list[str]:
    rows = ["| language | windows | facts | recall | memories | precision | attribution errors | non-facts | "
            "example leaks | wrong (tense, diet) | language kept | unnamed subject | procedures found | "
            "procedures invented | first reply usable | calls | CPU s/window | CPU s per 1,000 msgs | "
            "prompt tok/call | output tok/call | dropped by a check | false drops | relations found |",
            "|" + "---|" * 23]
    for lang, (s, c) in sorted(results.items()):
        rows.append(
            f"| {lang} | {c.windows} | {s.facts} | {ratio(s.found, s.facts)} | {s.memories} | "
            f"{ratio(s.supported, s.memories)} | {s.attribution} | {s.non_facts} | {s.leaks} | {s.contradicted} | "
            f"{ratio(s.lang_kept, s.memories)} | {s.unnamed} | {s.procedures_found}/{s.procedures_expected} | "
            f"{s.procedures_invented} | {ratio(c.first_try_valid, c.sent)} | {c.calls} | {c.cpu / c.windows:.1f} | "
            f"{1000 * c.cpu / c.messages:.0f} | {ratio(c.prompt_tokens, c.calls)} | {ratio(c.output_tokens, c.calls)} | "
            f"{c.dropped} | {s.false_drops} ({ratio(s.false_drops, s.facts)}) | "
            f"{s.relations_found}/{s.relations} |")
    return rows


def conflicts_table(results: dict[str, tuple[ConflictScore, Cost]]) -> list[str]:
    rows = ["| language | cases | change cases scored | base missed the old fact | supersession precision | "
            "supersession recall | retired | kept facts lost | calls | CPU s/case |", "|" + "---|" * 10]
    for lang, (s, c) in sorted(results.items()):
        rows.append(f"| {lang} | {s.cases} | {s.changes} | {s.base_missed} | {ratio(s.retired_right, s.retired)} | "
                    f"{ratio(s.replaced, s.changes)} | {s.retired} | {s.kept_violations} | {c.calls} | "
                    f"{c.cpu / max(c.windows, 1):.1f} |")
    return rows


def load() -> tuple[list[dict], dict]:
    windows = yaml.safe_load((EVAL / "windows.yaml").read_text(encoding="utf-8"))
    conflicts = yaml.safe_load((EVAL / "conflicts.yaml").read_text(encoding="utf-8"))
    return windows, conflicts


def evaluate(*, live: bool = False, fill: bool = False, record: bool = False,
             parts: tuple[str, ...] = ("windows", "conflicts"), limit: int | None = None,
             recorded: Path = RECORDED) -> dict[str, Any]:
    windows, conflicts = load()
    if limit:
        windows = windows[:limit // 2] + [w for w in windows if w["lang"] == "zh"][:limit // 2]
        conflicts = {**conflicts, "cases": conflicts["cases"][:limit // 2] + conflicts["cases"][20:20 + limit // 2]}
    recordings = CostedRecordings(recorded)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, open_memory(Path(tmp) / "eval.db", recordings, live, fill,
                                                                  record) as mem:
        if "windows" in parts:
            out["windows"] = run_windows(mem, recordings, windows)
        if "conflicts" in parts:
            out["conflicts"] = run_conflicts(mem, recordings, conflicts)
    if record:
        recordings.save(only_used=False)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--live", action="store_true", help="ask the local model instead of replaying its recorded replies")
    ap.add_argument("--fill", action="store_true", help="replay, and ask the local model only what has no recorded reply")
    ap.add_argument("--record", action="store_true", help="with --live or --fill: save the replies to --recordings")
    ap.add_argument("--recordings", type=Path, default=RECORDED,
                    help="the recorded replies to replay, fill or write (a trial's live replies go to their own file)")
    ap.add_argument("--only", choices=("windows", "conflicts"), help="run one half")
    ap.add_argument("--limit", type=int, help="windows and cases per half, split between the languages")
    ap.add_argument("--details", action="store_true", help="list every miss and every error")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = evaluate(live=args.live, fill=args.fill, record=args.record, parts=(args.only,) if args.only else ("windows", "conflicts"),
                   limit=args.limit, recorded=args.recordings)
    if "windows" in out:
        print("\n".join(windows_table(out["windows"])))
    if "conflicts" in out:
        print()
        print("\n".join(conflicts_table(out["conflicts"])))
    if args.details:
        for lang, (s, _) in sorted(out.get("windows", {}).items()):
            print(f"\n{lang} misses:", *s.misses, sep="\n  ")
            print(f"{lang} errors:", *s.errors, sep="\n  ")
        for lang, (s, _) in sorted(out.get("conflicts", {}).items()):
            print(f"\n{lang} conflicts:", *s.notes, sep="\n  ")
    if args.json:
        args.json.write_text(json.dumps({part: {lang: {**vars(s), **{f"cost_{k}": v for k, v in vars(c).items()}}
                                                for lang, (s, c) in res.items()} for part, res in out.items()},
                                        ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\n{'live model' if args.live else 'recorded replies'}; {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
