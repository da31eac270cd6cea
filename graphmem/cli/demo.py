"""``graphmem demo``: a short bilingual conversation in; the local model extracts memories,
episodes and procedures; recall, context and a superseded preference out."""

from __future__ import annotations

import tempfile
import time
from datetime import timedelta
from importlib import resources
from pathlib import Path

from rich.markup import escape

from . import out, print_context, recall_table
from ..errors import ExtractionError
from ..models import utcnow
from ..models.jsonl import read_messages
from .commands import _progress, extraction_progress

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
        with open_memory(db, extraction="manual") as mem:
            out.rule("1. Ingest a bilingual conversation (fast path: stored, embedded, tagged)")
            rows = read_messages(_data("demo_conversation.jsonl").splitlines(), None)
            with _progress() as progress:
                task = progress.add_task("messages", total=len(rows))
                for sid, msg in rows:
                    mem.add_messages(sid, [msg], namespace=namespace)
                    progress.advance(task)
            out.print(f"{len(rows)} messages in 3 sessions, searchable at once.\n")

            out.rule("2. Recall straight from the raw messages (no LLM involved yet)")
            out.print(recall_table(mem.recall(QUESTIONS[1], k=3, namespace=namespace), QUESTIONS[1]))

            out.rule(f"3. Extract with the local model ({mem.extractor_name})")
            out.print("[dim]Every 4 messages form a window (queued windows of a session are sent together up to ~400 tokens and 8 user turns); the first call also loads the model.[/dim]")
            for entry in extraction_progress(mem):
                head = f"{entry['session']}[{entry['window'][0]}:{entry['window'][1]}] {entry['seconds']:.1f} s"
                if entry.get("skipped"):
                    out.print(f"[dim]{head}: nothing memorable, no model call[/dim]")
                    continue
                if entry.get("error"):
                    out.print(f"[yellow]{head}: failed ({entry['error'][:80]}), retryable[/yellow]")
                    continue
                out.print(f"[bold]{head}[/bold], {entry.get('output_tokens', 0)} tokens out", highlight=False)
                for text in entry.get("added", []):
                    out.print(f"  + {text}", highlight=False, markup=False)
                for m in entry.get("merged", []):
                    out.print(f"  = {m['into']}  ({m['why']})", highlight=False, markup=False)
                for m in entry.get("dropped", []):
                    out.print(f"  - {m['text']}  (dropped: {m['why']})", highlight=False, markup=False, style="dim")
            status = mem.extraction_status(namespace=namespace)
            cost = status["this_process"]
            out.print(f"\n{status['done']} windows extracted, {status['skipped']} skipped, {status['failed']} failed; "
                      f"{cost['model_calls']} model calls, {cost['prompt_tokens']} prompt and "
                      f"{cost['output_tokens']} output tokens, {cost['seconds']:.0f} s.\n")
            if status["failed"] and not status["done"]:
                raise ExtractionError(f"no window could be extracted: {status['last_error']}")

            out.rule("4. A preference changed: the new memory SUPERSEDES the old one")
            changed = [m for m in mem.list("memory", status="superseded", namespace=namespace)]
            if not changed:
                out.print("[yellow]The model did not restate a changed preference in this run.[/yellow]")
            turns = mem.list("message", namespace=namespace, limit=len(rows))
            for old in changed:
                hist = mem.history(old.id, namespace=namespace)
                for new in hist.superseded_by:
                    out.print(f"[dim]superseded:[/dim] {old.text}", highlight=False)
                    out.print(f"[bold]current:[/bold]    {new.text}  [dim]({hist.reasons.get(new.id, '')})[/dim]",
                              highlight=False)
                    for turn in reversed(turns):  # the log never restates it as current
                        if (mark := turn.superseded_by) is not None and mark.memory_id == new.id:
                            out.print("[dim]a turn that said it, as recall and context show it:[/dim] " + escape(
                                f"{turn.content} (superseded on {mark.at:%Y-%m-%d} by: {mark.text})"), highlight=False)
                out.print()

            out.rule("5. Recall across layers and languages")
            for q in QUESTIONS:
                out.print(recall_table(mem.recall(q, k=4, namespace=namespace), q))

            out.rule("6. Context for the agent's next turn (budget 300 tokens)")
            mem.set_soul("You are Alice's engineering assistant. Be brief; respect her allergies.", namespace=namespace)
            print_context(mem.context(QUESTIONS[0], budget=300, session_id="rewrite", namespace=namespace))

            out.rule("7. The lifecycle: a dry run of maintenance 200 days from now, and why a memory is where it is")
            (run,) = mem.maintain(namespace, dry_run=True, now=utcnow() + timedelta(days=200))
            out.print(f"would merge {run.merged}, expire {run.expired} (importance < 0.1, unused 120 days), cap "
                      f"{run.capped}, purge {run.purged}; {run.active_before} active memories -> {run.active_after}; "
                      f"audit record {run.id}", highlight=False)
            for old in changed[:1]:
                out.print(f"[dim]explain {old.id}:[/dim] {mem.explain(old.id, namespace=namespace).rule}", highlight=False)
        out.print(f"\n[green]demo finished in {time.perf_counter() - t0:.1f} s[/green]"
                  + ("" if tmp else f"; store kept at {db}"))
    finally:
        if tmp is not None:
            tmp.cleanup()
