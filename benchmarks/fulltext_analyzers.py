"""Which full-text analyzer for the Neo4j backend: measured on English and Chinese.

    python benchmarks/fulltext_analyzers.py      # needs a Neo4j (scripts/neo4j-dev start)

Three candidates, each a Neo4j full-text index over the same documents:
- ``standard-no-stop-words`` over the raw text (Lucene's StandardTokenizer: English words,
  Chinese split into single characters);
- ``cjk`` over the raw text (Chinese as overlapping character bigrams, English lower-cased,
  English stop words removed, no stemming);
- ``whitespace`` over graphmem's own analysis (``graphmem.text.index_terms``: Snowball stems,
  jieba words), which is what the embedded store indexes.

Tasks (data read from ../shared/bench, never copied here):
- LoCoMo (English): evidence recall@10 of the questions of categories 1-4, each searched in
  its own conversation; documents are turns as "speaker: text".
- MemoryBank (Chinese and English, the same companion chats in both languages): known-item
  search. For 300 sampled user turns per language, the query is a fragment of the turn (its
  middle quarter of characters, words cut wherever they fall), searched among the turns of all
  15 users of that language; hit@10 and MRR of the turn itself.
Prints a markdown table; data and indexes live under labels of their own and are dropped after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
from pathlib import Path

from neo4j import GraphDatabase

from graphmem.text import index_terms, query_terms

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
ANALYZERS = {
    "standard-no-stop-words (raw text)": ("FtStd", "standard-no-stop-words", "raw"),
    "cjk (raw text)": ("FtCjk", "cjk", "raw"),
    "whitespace (graphmem terms)": ("FtTerms", "whitespace", "terms"),
}
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')


def lucene_raw(text: str) -> str:
    """Raw user text as a Lucene query of OR'ed terms, every special character escaped."""
    return " ".join(_LUCENE_SPECIAL.sub(r"\\\1", w) for w in text.split() if w.upper() not in ("AND", "OR", "NOT"))


def lucene_terms(text: str) -> str:
    return " ".join('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in query_terms(text)[:64])


def norm_dia(d: str) -> list[str]:
    out = []
    for part in re.split(r"[;,\s]+", d):
        m = re.match(r"D:?(\d+):0*(\d+)$", part.strip())
        if m:
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def locomo_docs() -> tuple[list[dict], list[dict]]:
    data = json.loads((BENCH / "locomo" / "locomo10.json").read_text())
    docs, questions = [], []
    for ci, conv in enumerate(data):
        c = conv["conversation"]
        for key, turns in c.items():
            if not re.fullmatch(r"session_\d+", key):
                continue
            for t in turns:
                docs.append({"ns": f"loc{ci}", "id": f"loc{ci}-{t['dia_id']}", "text": f"{t['speaker']}: {t['text']}"})
        for qa in conv["qa"]:
            ev = [e for d in qa.get("evidence", []) for e in norm_dia(d)]
            if qa.get("category") in (1, 2, 3, 4) and ev:
                questions.append({"ns": f"loc{ci}", "q": qa["question"], "gold": {f"loc{ci}-{e}" for e in ev}})
    return docs, questions


def memorybank_docs(lang: str, rng: random.Random, n_queries: int) -> tuple[list[dict], list[dict]]:
    data = json.loads((BENCH / "memorybank" / "eval_data" / lang / f"memory_bank_{lang}.json").read_text())
    docs, user_turns = [], []
    for ui, user in enumerate(data.values()):
        for day, turns in user["history"].items():
            for ti, t in enumerate(turns):
                for role in ("query", "response"):
                    text = (t.get(role) or "").strip()
                    if text:
                        doc = {"ns": f"mb{lang}", "id": f"mb{lang}{ui}-{day}-{ti}-{role}", "text": text}
                        docs.append(doc)
                        if role == "query" and len(text) >= (20 if lang == "cn" else 60):
                            user_turns.append(doc)
    questions = []
    for doc in rng.sample(user_turns, min(n_queries, len(user_turns))):
        text = doc["text"]
        a, b = int(len(text) * 0.375), int(len(text) * 0.625)
        questions.append({"ns": doc["ns"], "q": text[a:b], "gold": {doc["id"]}})
    return docs, questions


def load(driver, docs: list[dict]) -> None:
    with driver.session() as s:
        for label, analyzer, prop in ANALYZERS.values():
            s.run(f"CREATE FULLTEXT INDEX {label.lower()}_idx IF NOT EXISTS FOR (n:{label}) ON EACH [n.{prop}, n.ns] "
                  "OPTIONS {indexConfig: {`fulltext.analyzer`: $a, `fulltext.eventually_consistent`: false}}",
                  a=analyzer).consume()
        rows = [{"id": d["id"], "ns": d["ns"], "raw": d["text"], "terms": index_terms(d["text"])} for d in docs]
        for i in range(0, len(rows), 5000):
            for label, _, _ in ANALYZERS.values():
                s.run(f"UNWIND $rows AS r CREATE (n:{label}) SET n = r", rows=rows[i : i + 5000]).consume()
        s.run("CALL db.awaitIndexes(600)").consume()


def drop(driver) -> None:
    with driver.session() as s:
        for label, _, _ in ANALYZERS.values():
            s.run(f"DROP INDEX {label.lower()}_idx IF EXISTS").consume()
            s.run(f"MATCH (n:{label}) CALL (n) {{ DELETE n }} IN TRANSACTIONS OF 10000 ROWS").consume()


def search(driver, label: str, prop: str, ns: str, text: str, k: int) -> list[str]:
    body = lucene_terms(text) if prop == "terms" else lucene_raw(text)
    if not body.strip():
        return []
    q = f'+ns:"{ns}" +{prop}:({body})'
    recs = driver.execute_query(
        "CALL db.index.fulltext.queryNodes($idx, $q, {limit: $k}) YIELD node RETURN node.id AS id",
        idx=f"{label.lower()}_idx", q=q, k=k,
    ).records
    return [r["id"] for r in recs]


def evaluate(driver, questions: list[dict], k: int = 10) -> dict[str, tuple[float, float]]:
    out = {}
    for name, (label, _, prop) in ANALYZERS.items():
        recall, rr = [], []
        for q in questions:
            hits = search(driver, label, prop, q["ns"], q["q"], k)
            recall.append(len(q["gold"] & set(hits)) / len(q["gold"]))
            rank = next((i for i, h in enumerate(hits, 1) if h in q["gold"]), None)
            rr.append(1 / rank if rank else 0.0)
        out[name] = (sum(recall) / len(recall), sum(rr) / len(rr))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=300, help="known-item queries per MemoryBank language")
    args = ap.parse_args()
    uri = os.environ.get("GRAPHMEM_NEO4J_URI", "bolt://127.0.0.1:7687")
    auth = ("neo4j", os.environ.get("GRAPHMEM_NEO4J_PASSWORD", "graphmem-dev"))
    rng = random.Random(5)
    tasks = {
        "LoCoMo en, evidence recall@10": locomo_docs(),
        "MemoryBank zh, fragment hit@10": memorybank_docs("cn", rng, args.queries),
        "MemoryBank en, fragment hit@10": memorybank_docs("en", rng, args.queries),
    }
    results: dict[str, dict[str, tuple[float, float]]] = {}
    with GraphDatabase.driver(uri, auth=auth, notifications_min_severity="OFF") as driver:
        try:
            drop(driver)
            load(driver, [d for docs, _ in tasks.values() for d in docs])
            for task, (_, questions) in tasks.items():
                results[task] = evaluate(driver, questions)
                print(f"done: {task} ({len(questions)} queries)", flush=True)
        finally:
            drop(driver)
    print("| analyzer | " + " | ".join(f"{t} (MRR)" for t in results) + " |")
    print("|---|" + "---|" * len(results))
    for name in ANALYZERS:
        print(f"| {name} | " + " | ".join(f"{results[t][name][0]:.3f} ({results[t][name][1]:.3f})" for t in results) + " |")


if __name__ == "__main__":
    main()
