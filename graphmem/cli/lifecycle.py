"""The lifecycle's commands: ``maintain``, ``explain``, ``reembed``."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Optional

import typer
from rich.table import Table

from . import _print_json, app, handles_errors, open_memory, out, state
from .commands import _progress


@app.command()
@handles_errors
def maintain(
    dry_run: bool = typer.Option(False, "--dry-run", help="show what would change; change nothing"),
    history: bool = typer.Option(False, "--history", help="list past runs (the audit records) instead"),
    all_namespaces: bool = typer.Option(False, "--all", help="every namespace, not only --namespace"),
    cap: Optional[int] = typer.Option(None, "--cap", help="active memories allowed per namespace in this run"),
    now: Optional[datetime] = typer.Option(None, "--now", help="run as if it were this time (UTC)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Merge near-duplicates, expire unused memories to archive, apply the cap, purge what was
    archived long enough, finish a pending re-embedding; one audit record per run."""
    with open_memory() as mem:
        if history:
            runs = mem.maintenance_history(namespace=state.namespace)
            if as_json:
                _print_json([r.model_dump(mode="json") for r in runs])
                return
            table = Table(title=f"maintenance runs in {state.namespace!r}")
            table.add_column("run", no_wrap=True)
            table.add_column("at", no_wrap=True)
            for col in ("dry", "changes", "active"):
                table.add_column(col)
            for r in runs:
                changes = ", ".join(f"{n} {what}" for what, n in (("merged", r.merged), ("expired", r.expired),
                                                                  ("capped", r.capped), ("purged", r.purged)) if n)
                table.add_row(r.id, f"{r.created_at:%Y-%m-%d}", "yes" if r.dry_run else "", changes or "none",
                              f"{r.active_before}->{r.active_after}")
            out.print(table if runs else "no maintenance runs yet")
            return
        policy = {"max_active_memories": cap} if cap is not None else None
        target = None if all_namespaces else state.namespace
        if as_json:  # machine output: no progress bar on stdout
            runs = mem.maintain(target, dry_run=dry_run, now=now, policy=policy)
        else:
            with _progress() as progress:
                task = progress.add_task("maintenance", total=None)

                def step(what: str, done: int, total: int) -> None:
                    progress.update(task, description=what, completed=done, total=total)

                runs = mem.maintain(target, dry_run=dry_run, now=now, policy=policy, progress=step)
    if as_json:
        _print_json([r.model_dump(mode="json") for r in runs])
        return
    for r in runs:
        verb = "would change" if r.dry_run else "changed"
        table = Table("what", "how many", "examples", title=f"maintenance of {r.namespace!r} ({verb}; audit {r.id})")
        counts = Counter(a.action for a in r.actions)
        for action in ("merge", "expire", "cap", "purge"):
            examples = [a.id for a in r.actions if a.action == action][:3]
            table.add_row(action, str(counts.get(action, 0)), ", ".join(examples))
        if r.reembedded:
            table.add_row("reembed", str(r.reembedded), "")
        out.print(table)
        out.print(f"active memories {r.active_before} -> {r.active_after} in {r.seconds:.1f} s", highlight=False)


@app.command()
@handles_errors
def explain(record_id: str = typer.Argument(..., help="a memory (or any node) id"),
            as_json: bool = typer.Option(False, "--json")) -> None:
    """Why a memory is active, archived, superseded, merged or due to expire."""
    with open_memory() as mem:
        why = mem.explain(record_id, namespace=state.namespace)
    if as_json:
        _print_json(why.model_dump(mode="json"))
        return
    out.print(f"[bold]{why.id}[/bold] ({why.kind}, {why.status})")
    out.print(why.rule, highlight=False)
    for line in why.details:
        out.print(f"  - {line}", highlight=False)
    for key, value in why.dates.items():
        if value is not None:
            out.print(f"  {key}: {value:%Y-%m-%d %H:%M}", highlight=False)
    for e in why.edges:
        out.print(f"  edge {e.source} -{e.type.value}-> {e.target} {e.props.get('reason', '')}", highlight=False)


@app.command()
@handles_errors
def reembed(to: Optional[str] = typer.Option(None, "--to", help="use or e5 (default: GRAPHMEM_EMBEDDER)")) -> None:
    """Re-embed every node with another embedder; recall keeps working until the swap."""
    with open_memory() as mem, _progress() as progress:
        task = progress.add_task("re-embedding", total=None)
        done = mem.reembed(to, progress=lambda n, total: progress.update(task, completed=n, total=total))
        name = mem.embedder.name
    out.print(f"re-embedded {done} node(s); the store now uses {name}")
