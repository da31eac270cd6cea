"""``graphmem demo``: a short bilingual conversation in, recall and context out."""

from __future__ import annotations

import json
import tempfile
import time
from importlib import resources
from pathlib import Path

from rich.panel import Panel

from . import out, print_context, recall_table
from .commands import _progress, read_jsonl

QUESTIONS = [
    "Which programming language should I use for the Atlas tooling?",
    "What should I avoid when ordering food for Alice?",
    "她出差去哪里？喜欢喝什么？",  # Chinese: where is she travelling, what does she like to drink?
    "How do I deploy Atlas?",
    "Who is Alice's manager?",
]


def _data(name: str) -> str:
    return resources.files("graphmem.data").joinpath(name).read_text(encoding="utf-8")


def run_demo(db: Path | None, namespace: str = "demo") -> None:
    from . import open_memory

    tmp = None
    if db is None:
        tmp = tempfile.TemporaryDirectory(prefix="graphmem-demo-")
        db = Path(tmp.name) / "demo.db"
    namespace = namespace if namespace != "default" else "demo"
    t0 = time.perf_counter()
    try:
        with open_memory(db) as mem:
            out.rule("1. Ingest a bilingual conversation (fast path: stored, embedded, tagged)")
            rows = read_jsonl(_data("demo_conversation.jsonl").splitlines(), None)
            ids: list[str] = []
            with _progress() as progress:
                task = progress.add_task("messages", total=len(rows))
                for sid, msg in rows:
                    ids += [m.id for m in mem.add_messages(sid, [msg], namespace=namespace)]
                    progress.advance(task)
            out.print(f"{len(ids)} messages in 3 sessions, searchable at once.\n")

            out.rule("2. Recall straight from the raw messages (no LLM involved)")
            out.print(recall_table(mem.recall(QUESTIONS[1], k=3, namespace=namespace), QUESTIONS[1]))

            out.rule("3. Memories with entities and relations, an episode and a procedure")
            facts = json.loads(_data("demo_memories.json"))
            written = mem.remember_many(
                [{**{k: v for k, v in f.items() if k != "turns"}, "source_message_ids": [ids[t] for t in f["turns"]]}
                 for f in facts],
                namespace=namespace,
            )
            ts_pref = next(m for m in written if m.object == "TypeScript")
            mem.add_episode("Alice (data engineer, Northwind, Berlin) onboarded: prefers TypeScript for Atlas, "
                            "peanut allergy, explained the Atlas deploy order.", session_id="onboarding",
                            message_ids=ids[:8], memory_ids=[m.id for m in written[:4]], namespace=namespace)
            mem.add_procedure("Deploy Atlas", ["run the tests", "run the database migrations", "deploy to staging",
                                               "deploy to production"], namespace=namespace)
            out.print(f"{len(written)} memories, 1 episode, 1 procedure written.\n")

            out.rule("4. A preference changes: the new one SUPERSEDES the old")
            new = mem.update(ts_pref.id, text="Alice prefers Rust over TypeScript for the Atlas tooling",
                             object="Rust", reason="Alice: 'I now prefer Rust over TypeScript' (rewrite session)",
                             namespace=namespace)
            hist = mem.history(new.id, namespace=namespace)
            for old in hist.supersedes:
                out.print(f"[dim]superseded:[/dim] {old.text}  [dim]({hist.reasons.get(new.id, '')})[/dim]", highlight=False)
            out.print(f"[bold]current:[/bold]    {new.text}\n", highlight=False)

            out.rule("5. Recall across layers and languages")
            for q in QUESTIONS:
                out.print(recall_table(mem.recall(q, k=4, namespace=namespace), q))

            out.rule("6. Context for the agent's next turn (budget 300 tokens)")
            mem.set_soul("You are Alice's engineering assistant. Be brief; respect her allergies.", namespace=namespace)
            print_context(mem.context(QUESTIONS[0], budget=300, session_id="rewrite", namespace=namespace))
        out.print(f"\n[green]demo finished in {time.perf_counter() - t0:.1f} s[/green]"
                  + ("" if tmp else f"; store kept at {db}"))
    finally:
        if tmp is not None:
            tmp.cleanup()
