"""The CLI's commands. Each one opens the store, calls the engine, formats the result."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Literal, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import ValidationError
from ..vocab import Layer, Role
from . import (
    _print_json, app, err, handles_errors, id_table, open_memory, out, print_context, read_input, recall_table, settings, state,
)

ADD_BATCH = 256


@app.command()
@handles_errors
def init() -> None:
    """Create the store (the embedded file, or the Neo4j schema: constraints and indexes); safe to repeat."""
    with open_memory() as mem:
        s = mem.settings
        where = f"Neo4j {s.neo4j_uri} database {s.neo4j_database!r}" if s.backend == "neo4j" and state.db is None \
            else str(state.db or s.path)
        out.print(f"store ready: {where} ({mem.embedder.name}, {mem.embedder.dim}-d)")
        if hasattr(mem.store, "vector_path"):  # Neo4j: the version read at connect picks the vector search
            out.print(f"Neo4j {mem.store.server_version_text}: vector search by {mem.store.vector_path}")


@app.command()
@handles_errors
def add(
    file: Optional[Path] = typer.Argument(None, help="the messages: JSONL ({role, content, speaker?, created_at?, session_id?}, "
                                          "or the OpenAI chat shape with name, tool_calls, tool_call_id) "
                                          "or plain text, one message per line; '-' or none reads stdin"),
    session: Optional[str] = typer.Option(None, "--session", "-s", help="the session of lines without session_id "
                                          "(default: the file's name without its extension; 'stdin' for stdin)"),
    fmt: Literal["auto", "jsonl", "text"] = typer.Option("auto", "--format",
                                                        help="auto: JSONL when the first line starts with '{'"),
    role: Role = typer.Option("user", "--role", help="plain text: the role of every line"),
    speaker: Optional[str] = typer.Option(None, "--speaker", help="plain text: who said every line"),
    extract: bool = typer.Option(False, "--extract", help="then extract memories with the local model and wait"),
) -> None:
    """Append conversation messages (fast path: searchable at once). Every line is checked
    first and all are written in one transaction: a bad line (named by its number) or a kill
    part way writes nothing."""
    from ..models.jsonl import read_messages, read_text_messages

    lines = read_input(file).splitlines()
    session = session or (file.stem if file is not None and str(file) != "-" else "stdin")
    first = next((line for line in lines if line.strip()), "")
    if fmt == "jsonl" or (fmt == "auto" and first.lstrip().startswith("{")):
        rows = read_messages(lines, session)
    else:
        rows = read_text_messages(lines, session, role, speaker)
    if not rows:
        raise ValidationError("no messages in the input")
    with open_memory() as mem:
        with _progress() as progress, mem.store.atomic():  # every line or, on any error or a kill, none
            task = progress.add_task("adding messages", total=len(rows))
            start = 0
            while start < len(rows):  # batches never straddle two sessions
                sid = rows[start][0]
                end = start
                while end < len(rows) and end - start < ADD_BATCH and rows[end][0] == sid:
                    end += 1
                mem.add_messages(sid, [r[1] for r in rows[start:end]], namespace=state.namespace)
                progress.advance(task, end - start)
                start = end
        sessions = sorted({r[0] for r in rows})
        where = f"session {sessions[0]!r}" if len(sessions) == 1 else f"{len(sessions)} sessions"
        out.print(f"added {len(rows)} messages to {where} in namespace {state.namespace!r}", highlight=False)
        if extract:
            extraction_progress(mem)
            report_extraction(mem.extraction_status())
        elif queued := mem.extraction_status(namespace=state.namespace)["queued"]:
            out.print(f"{queued} window(s) queued for extraction: run `graphmem extract` (or add --extract)")


def extraction_progress(mem) -> list[dict]:
    """Extract every pending window in this process, with a progress bar (and one for joining
    the default model first, when it is needed and not joined yet); the windows' reports."""
    from .model import prepare_default_model

    if mem.extraction_status()["queued"]:
        prepare_default_model(mem.settings)
    with _progress() as progress:
        task = progress.add_task("extracting windows", total=None)

        def step(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        return mem.extract(progress=step)


@app.command()
@handles_errors
def extract(retry_failed: bool = typer.Option(False, "--retry-failed", help="also run failed windows again")) -> None:
    """Extract memories, episodes and procedures from every queued window, with the local model."""
    with open_memory() as mem:
        extraction_progress(mem)
        retried = mem.retry_failed() if retry_failed else 0
        report_extraction(mem.extraction_status(), retried)


def report_extraction(status: dict, retried: int = 0) -> None:
    """What this process extracted; exit 1 when a window failed in it (the model would not
    load, the server kept failing, the reply was unusable), with the reason."""
    cost = status["this_process"]
    out.print(f"{cost['windows']} window(s) extracted, {cost['skipped']} skipped, {cost['failed']} failed"
              + (f", {retried} retried" if retried else "") + f"; {cost['model_calls']} model calls, {cost['seconds']} s")
    if cost["failed"]:
        err.print(f"[red]error:[/red] {cost['failed']} window(s) failed, kept for `graphmem extract --retry-failed`; "
                  f"last: {status['last_error']}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    if status["failed"]:
        out.print(f"[yellow]{status['failed']} window(s) failed earlier: `graphmem extract --retry-failed`[/yellow]")


@app.command()
@handles_errors
def status(as_json: bool = typer.Option(False, "--json")) -> None:
    """Extraction status: windows queued, done, skipped and failed."""
    with open_memory() as mem:
        data = mem.extraction_status(namespace=state.namespace)
    if as_json:
        _print_json(data)
        return
    table = Table("what", "value", title=f"extraction in namespace {state.namespace!r}")
    for key in ("mode", "queued", "queued_partial", "done", "skipped", "failed", "last_error"):
        if data[key] != "":
            table.add_row(key, str(data[key]))
    out.print(table)


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=out, transient=False)


@app.command()
@handles_errors
def remember(
    text: str = typer.Argument(..., help="the memory, one fact or preference"),
    subject: Optional[str] = typer.Option(None, help="subject of the fact"),
    predicate: Optional[str] = typer.Option(None, help="predicate of the fact"),
    object_: Optional[str] = typer.Option(None, "--object", help="object of the fact"),
    category: str = typer.Option("fact", help="fact, preference, event, plan, ..."),
    importance: float = typer.Option(0.5, min=0.0, max=1.0),
    confidence: Optional[float] = typer.Option(None, min=0.0, max=1.0, help="default: from --source"),
    source: str = typer.Option("user_stated", help="user_stated (1.0), inferred (0.7) or observed (0.5)"),
    entity: list[str] = typer.Option([], "--entity", "-e", help="entity the memory mentions (repeatable)"),
    pinned: bool = typer.Option(False, "--pinned", help="never expires, is never capped or purged"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write one memory explicitly."""
    with open_memory() as mem:
        rec = mem.remember(
            text, namespace=state.namespace, subject=subject, predicate=predicate, object=object_, category=category,
            importance=importance, confidence=confidence, source=source, pinned=pinned,
            entities=[{"name": e} for e in entity] if entity else None,
        )
    if as_json:
        _print_json(rec.model_dump(mode="json"))
    else:
        out.print(f"remembered {rec.id}: {rec.text}", highlight=False)


@app.command()
@handles_errors
def update(
    memory_id: str = typer.Argument(..., help="the memory to change"),
    text: Optional[str] = typer.Argument(None, help="its new text: a correction (a new version supersedes it)"),
    reason: str = typer.Option("correction", help="why, kept in its history"),
    importance: Optional[float] = typer.Option(None, min=0.0, max=1.0, help="changed in place"),
    confidence: Optional[float] = typer.Option(None, min=0.0, max=1.0, help="changed in place"),
    category: Optional[str] = typer.Option(None, help="changed in place"),
    subject: Optional[str] = typer.Option(None, help="the fact's subject (a correction)"),
    predicate: Optional[str] = typer.Option(None, help="the fact's predicate (a correction)"),
    object_: Optional[str] = typer.Option(None, "--object", help="the fact's object (a correction)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Change a memory: a new TEXT or triple is a correction (the old version leaves recall and
    stays in `graphmem history`; a new TEXT alone re-derives the triple, and what it no longer
    says is cleared); importance, confidence and category change in place."""
    fields = {k: v for k, v in (("text", text), ("importance", importance), ("confidence", confidence),
                                ("category", category), ("subject", subject), ("predicate", predicate),
                                ("object", object_)) if v is not None}
    with open_memory() as mem:
        rec = mem.update(memory_id, namespace=state.namespace, reason=reason, **fields)
    if as_json:
        _print_json(rec.model_dump(mode="json"))
    elif rec.id != memory_id:
        out.print(f"corrected {memory_id} -> {rec.id}: {rec.text}", highlight=False)
    else:
        out.print(f"updated {rec.id}: {rec.text}", highlight=False)


@app.command()
@handles_errors
def recall(
    query: str = typer.Argument(...),
    k: int = typer.Option(10, "--k", "-k", min=1, max=1000),
    layer: list[str] = typer.Option([], "--layer", "-l", help="memory, episode, procedure, message (repeatable)"),
    include_superseded: bool = typer.Option(False, "--include-superseded"),
    include_archived: bool = typer.Option(False, "--include-archived"),
    as_of: Optional[datetime] = typer.Option(None, "--as-of", help="what was true at this time (ISO date or time, UTC)"),
    factors: bool = typer.Option(False, "--factors", help="show the five factors of each score"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Recall the best items for a query, with each score's factor breakdown."""
    with open_memory() as mem:
        layers: tuple[Layer, ...] = tuple(layer) if layer else ("memory", "episode", "procedure", "message")
        items = mem.recall(query, k=k, namespace=state.namespace, layers=layers, include_superseded=include_superseded,
                           include_archived=include_archived, as_of=as_of)
    if as_json:
        _print_json([s.model_dump(mode="json") for s in items])
    elif not items:
        out.print(f"no matches for {query!r} in namespace {state.namespace!r}", highlight=False)
    else:
        out.print(recall_table(items, f"recall: {query}", factors=factors))


@app.command()
@handles_errors
def context(
    query: str = typer.Argument(...),
    budget: Optional[int] = typer.Option(None, "--budget", "-b", min=16, help="token budget"),
    session: Optional[str] = typer.Option(None, "--session", "-s", help="add this session's recent turns and summary"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Assemble the prompt block for a query within a token budget."""
    with open_memory() as mem:
        ctx = mem.context(query, budget=budget, session_id=session, namespace=state.namespace)
    if as_json:
        _print_json(ctx.model_dump(mode="json"))
    else:
        print_context(ctx)


@app.command()
@handles_errors
def show(record_id: str = typer.Argument(..., help="any record id, or an entity name")) -> None:
    """Print one record (an entity shows its neighbourhood)."""
    from ..errors import NotFoundError

    with open_memory() as mem:
        try:
            rec = mem.get(record_id, namespace=state.namespace)
        except NotFoundError:
            rec = None
        if rec is None or rec.kind == "entity":
            _print_json(mem.neighbourhood(record_id, namespace=state.namespace).model_dump(mode="json"))
        else:
            _print_json(rec.model_dump(mode="json"))


@app.command(name="list")
@handles_errors
def list_(
    kind: str = typer.Option("memory", "--kind", help="memory, message, episode, procedure, entity, session"),
    status: Optional[str] = typer.Option(None, help="active, superseded or archived"),
    entity: Optional[str] = typer.Option(None, help="only records mentioning this entity"),
    limit: int = typer.Option(20, min=1, max=10000),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List records, newest first."""
    with open_memory() as mem:
        rows = mem.list(kind, namespace=state.namespace, status=status, entity=entity, limit=limit)  # type: ignore[arg-type]
    if as_json:
        _print_json([r.model_dump(mode="json") for r in rows])
        return
    from ..models import item_text

    if not rows:
        out.print(f"no {kind} records in namespace {state.namespace!r}" + (" matching the filters" if status or entity else ""))
        return
    table = id_table("id", "created", "status", "text", ids=[r.id for r in rows])
    for r in rows:
        text = item_text(r) if r.kind in ("memory", "message", "episode", "procedure") else getattr(r, "name", r.id)
        table.add_row(r.id, f"{r.created_at:%m-%d %H:%M}", str(getattr(getattr(r, "status", ""), "value", "")), text)
    out.print(table)


@app.command()
@handles_errors
def forget(
    ids: Optional[list[str]] = typer.Argument(None, help="record ids to delete for good"),
    whole: Optional[str] = typer.Option(None, "--namespace", help="delete this whole namespace (needs --yes)"),
    yes: bool = typer.Option(False, "--yes", help="confirm deleting a whole namespace"),
    keep_derived: bool = typer.Option(False, "--keep-derived",
                                      help="keep the memories and episodes derived from forgotten turns"),
) -> None:
    """Delete records with their edges and index entries (a session with its turns, a turn with
    what was derived from it), or a whole namespace."""
    if whole is not None:
        if ids:
            raise ValidationError("give record ids or --namespace, not both")
        if not yes:
            raise ValidationError(f"deleting namespace {whole!r} removes everything in it for good; add --yes")
        with open_memory() as mem:
            n = mem.forget_namespace(whole)
        out.print(f"deleted namespace {whole!r}: {n} record(s)")
        return
    if not ids:
        raise ValidationError("give record ids to delete, or --namespace NS --yes")
    with open_memory() as mem:
        n = mem.forget(ids, namespace=state.namespace, derived=not keep_derived)
    out.print(f"deleted {n} record(s)")


@app.command()
@handles_errors
def history(memory_id: str, as_json: bool = typer.Option(False, "--json")) -> None:
    """A memory's versions: what it superseded and what superseded it."""
    with open_memory() as mem:
        h = mem.history(memory_id, namespace=state.namespace)
    if as_json:
        _print_json(h.model_dump(mode="json"))
        return
    out.print(f"history of {memory_id}", style="bold", highlight=False)
    for label, m in [*(("older", m) for m in h.supersedes), ("this", h.memory), *(("newer", m) for m in h.superseded_by)]:
        valid = f"{m.valid_at:%Y-%m-%d %H:%M}" if m.valid_at else "?"
        valid += f" -> {m.invalid_at:%Y-%m-%d %H:%M}" if m.invalid_at else " ->"
        reason = f"  ({h.reasons[m.id]})" if h.reasons.get(m.id) else ""
        out.print(f"{label:<5}  {m.id}  {m.status.value}  valid {valid}{reason}", highlight=False, soft_wrap=True)
        out.print(f"       {m.text}", highlight=False)


@app.command()
@handles_errors
def stats(as_json: bool = typer.Option(False, "--json")) -> None:
    """Counts of records and edges in the namespace."""
    with open_memory() as mem:
        data = mem.stats(namespace=state.namespace)
        data["namespaces"] = mem.namespaces()
    if as_json:
        _print_json(data)
        return
    table = Table("what", "value", title=f"namespace {state.namespace!r}")
    for key, value in data.items():
        table.add_row(key, str(value))
    out.print(table)


@app.command()
@handles_errors
def soul(text: Optional[str] = typer.Argument(None, help="identity block; empty clears it")) -> None:
    """Set the identity block (persona, rules) that heads every context."""
    with open_memory() as mem:
        mem.set_soul(text, namespace=state.namespace)
    out.print("soul set" if text else "soul cleared")


@app.command(name="export")
@handles_errors
def export_(
    file: Optional[Path] = typer.Argument(None, help="output JSONL (default: stdout)"),
    no_vectors: bool = typer.Option(False, "--no-vectors", help="leave embeddings out (re-computed on import)"),
) -> None:
    """Export a namespace as JSONL (lossless with vectors)."""
    try:
        fp = sys.stdout if file is None else file.open("w", encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"cannot write {file}: {exc.strerror or exc}") from None
    try:
        with open_memory() as mem:
            n = mem.export(fp, namespace=state.namespace, vectors=not no_vectors)
    finally:
        if file is not None:
            fp.close()
    if file is not None:
        out.print(f"exported {n} lines to {file}")


@app.command(name="import")
@handles_errors
def import_(
    file: Path = typer.Argument(..., help="JSONL written by export ('-' for stdin)"),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="import the good lines and list the bad ones"),
    into: Optional[str] = typer.Option(None, "--into", help="target namespace (default: -n if given, else the file's)"),
) -> None:
    """Import a JSONL export. Bad lines are reported by number; by default nothing is written then."""
    if into and state.namespace_given and into != state.namespace:
        raise ValidationError(f"-n {state.namespace!r} and --into {into!r} name different namespaces; give one")
    lines = read_input(file).splitlines()
    with open_memory() as mem:
        report = mem.import_(lines, namespace=into or (state.namespace if state.namespace_given else None),
                             skip_invalid=skip_invalid)
    out.print(f"imported {report['nodes']} records and {report['edges']} edges into {report['namespace']!r}"
              + (f" ({report['joined']} entities joined ones already there)" if report["joined"] else ""))
    for e in report["errors"]:
        out.print(f"[yellow]skipped line {e['line']}:[/yellow] {e['reason']}", highlight=False)


@app.command()
@handles_errors
def demo() -> None:
    """Ingest a short bilingual conversation, then show recall, context and a changed preference.
    Uses a temporary store unless --db is given."""
    from .demo import run_demo

    run_demo(state.db, state.namespace)


scripts_app = typer.Typer(help="Memory scripts: scripted scenarios with expectations.", no_args_is_help=True)
app.add_typer(scripts_app, name="scripts")


@scripts_app.command("run")
@handles_errors
def scripts_run(
    paths: list[Path] = typer.Argument(..., help="script files or folders of *.yaml"),
    recordings: Optional[Path] = typer.Option(None, help="recorded model replies (default: recordings.json beside the scripts)"),
    live: bool = typer.Option(False, "--live", help="ask the local model for windows not recorded"),
    record: bool = typer.Option(False, "--record", help="ask the local model for every window and save its replies"),
) -> None:
    """Run memory scripts and print a pass/fail table; exit 1 when any expectation fails."""
    from ..engine.extraction import make_extractor
    from ..scripts import RecordingExtractor, Recordings, run_script
    from ..settings import Settings

    files = sorted(f for p in paths for f in ([p] if p.is_file() else p.glob("*.yaml")))
    if not files:
        raise ValidationError("no scripts found")
    recs = Recordings(recordings or files[0].parent / "recordings.json")
    extractor = RecordingExtractor(recs, make_extractor(Settings()) if live or record else None, refresh=record)
    table = Table("script", "step", "check", "result", "detail", title="memory scripts")
    failed = 0
    for f in files:
        for r in run_script(f, extractor):
            failed += not r.passed
            table.add_row(r.script, str(r.step), r.kind, "[green]pass[/green]" if r.passed else "[red]FAIL[/red]", r.detail)
        if record or live:
            recs.save(only_used=record)  # after each script: a later failure keeps what was recorded
    out.print(table)
    total = len(table.rows)
    out.print(f"{total - failed} passed, {failed} failed")
    if failed:
        raise typer.Exit(1)


def is_file(arg: str) -> bool:
    """Whether an argument names a readable file (a name too long for the OS is none)."""
    try:
        return Path(arg).is_file()
    except (OSError, ValueError):
        return False


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "; ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    if hasattr(value, "to_native"):  # Neo4j temporal values
        value = value.to_native()
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    return str(value)


@app.command()
@handles_errors
def cypher(
    query: Optional[str] = typer.Argument(None, help="an exploration query name (see --list) or a .cypher file"),
    param: list[str] = typer.Option([], "--param", "-p", help="a parameter, key=value (JSON values parse: -p warn_days=30)"),
    list_queries: bool = typer.Option(False, "--list", help="list the exploration queries in cypher/explore"),
) -> None:
    """Run a Cypher exploration query on the Neo4j backend, read-only, and print a table.
    $namespace is the --namespace given; other parameters come from -p."""
    from ..errors import ConfigurationError
    from ..store.cypher import explore_files

    files = explore_files()
    if list_queries or not query:
        table = Table("name", "purpose", "params", title="exploration queries (graphmem cypher NAME)")
        for name, f in files.items():
            table.add_row(name, f.purpose, f.params)
        out.print(table)
        return
    if query in files:
        text = files[query].text
    elif is_file(query):
        text = read_input(Path(query))  # a user's file: no header needed
    else:
        raise ValidationError(f"{query!r} is neither an exploration query ({', '.join(files)}) nor a file")
    params: dict = {"namespace": state.namespace, "warn_days": None}
    for item in param:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValidationError(f"parameter {item!r} is not key=value")
        try:
            params[key] = json.loads(raw)
        except json.JSONDecodeError:
            params[key] = raw
    if settings().backend != "neo4j":  # before opening: no store file is made for nothing
        raise ConfigurationError("graphmem cypher needs the Neo4j backend: set GRAPHMEM_BACKEND=neo4j (see docs/guides/neo4j.md)")
    with open_memory() as mem:
        rows = mem.cypher(text, params, namespace=state.namespace)
    if not rows:
        out.print(f"{query}: 0 rows")
        return
    table = Table(*rows[0], title=query, caption=f"{len(rows)} rows")
    for row in rows:
        table.add_row(*(_cell(v) for v in row.values()))
    out.print(table)
