"""``graphmem traces`` and ``graphmem procedure``: agent runs step by step with their tool calls,
tool statistics, and a procedure's chain of steps with its outcome counts."""

from __future__ import annotations

from typing import Optional

import typer

from . import _print_json, app, handles_errors, id_table, open_memory, out, state

traces_app = typer.Typer(help="Agent runs (reasoning traces): list, show, tool statistics.", no_args_is_help=True)
app.add_typer(traces_app, name="traces")
procedure_app = typer.Typer(help="Procedures: show one as its chain of steps.", no_args_is_help=True)
app.add_typer(procedure_app, name="procedure")


def _how(success: bool | None) -> str:
    return "running" if success is None else "succeeded" if success else "failed"


@traces_app.command("list")
@handles_errors
def list_traces(
    session: Optional[str] = typer.Option(None, "--session", help="only this session's runs"),
    limit: int = typer.Option(20, "--limit", "-l"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Traces, newest first: task, steps, outcome."""
    with open_memory() as mem:
        found = mem.list_traces(session_id=session, limit=limit, namespace=state.namespace)
    if as_json:
        _print_json([t.model_dump(mode="json") for t in found])
        return
    if not found:
        out.print("no traces")
        return
    table = id_table("id", "started", "steps", "result", "text", ids=[t.id for t in found])
    for t in found:
        table.add_row(t.id, f"{t.created_at:%Y-%m-%d %H:%M}", str(t.step_count), _how(t.success),
                      t.task + (f" -> {t.outcome}" if t.outcome else ""))
    out.print(table)


@traces_app.command("show")
@handles_errors
def show_trace(trace_id: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
    """One trace step by step: thought, action, observation and each tool call."""
    with open_memory() as mem:
        view = mem.get_trace(trace_id, namespace=state.namespace)
    if as_json:
        _print_json(view.model_dump(mode="json"))
        return
    t = view.trace
    out.print(f"[bold]{t.task}[/bold] ({_how(t.success)}){': ' + t.outcome if t.outcome else ''}", highlight=False)
    if t.procedure_id:
        out.print(f"procedure: {t.procedure_id}", highlight=False)
    for s in view.steps:
        out.print(f"{s.step.order}.", highlight=False)
        for label, text in (("thought", s.step.thought), ("action", s.step.action), ("observation", s.step.observation)):
            if text:
                out.print(f"   {label}: {text}", highlight=False, markup=False)
        for c in s.tool_calls:
            took = f" {c.duration_ms:g} ms" if c.duration_ms is not None else ""
            out.print(f"   tool {c.tool} {c.status}{took}: {c.arguments}" + (f" -> {c.result}" if c.result else ""),
                      highlight=False, markup=False)


@traces_app.command("tools")
@handles_errors
def tools(as_json: bool = typer.Option(False, "--json")) -> None:
    """Per tool: calls, success rate, mean and p95 duration."""
    with open_memory() as mem:
        stats = mem.tool_stats(namespace=state.namespace)
    if as_json:
        _print_json([s.model_dump(mode="json") for s in stats])
        return
    if not stats:
        out.print("no tool calls")
        return
    table = id_table("tool", "calls", "success rate", "failures", "errors", "mean ms", "p95 ms", ids=[s.tool for s in stats])
    for s in stats:
        table.add_row(s.tool, str(s.calls), f"{s.success_rate:.0%}", str(s.failures), str(s.errors),
                      f"{s.mean_ms:.0f}" if s.mean_ms is not None else "", f"{s.p95_ms:.0f}" if s.p95_ms is not None else "")
    out.print(table)


@procedure_app.command("show")
@handles_errors
def show_procedure(procedure_id: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
    """A procedure's numbered steps with how often each failed, and its counts."""
    with open_memory() as mem:
        proc = mem.get(procedure_id, namespace=state.namespace)
        steps = mem.procedure_steps(procedure_id, namespace=state.namespace)
    if as_json:
        _print_json({"procedure": proc.model_dump(mode="json"), "steps": [s.model_dump(mode="json") for s in steps]})
        return
    out.print(f"[bold]{proc.task}[/bold] ({proc.status.value}; seen {proc.seen_count}, {proc.success_count} "
              f"succeeded, {proc.failure_count} failed)", highlight=False)
    for s in steps:
        failed = f"  [dim](failed {s.failure_count}x)[/dim]" if s.failure_count else ""
        out.print(f"{s.order}. {s.text}{failed}", highlight=False)
