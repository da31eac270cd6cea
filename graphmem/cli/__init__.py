"""The ``graphmem`` command line (typer + rich). Commands call the engine and format; no logic.

Errors print one line and exit 1; ``-v`` shows the traceback."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import GraphMemError, ValidationError
from ..models import Context, ScoredItem

app = typer.Typer(
    name="graphmem",
    help="Knowledge-graph memory for AI agents: write conversations, recall what matters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


class _State:
    db: Optional[Path] = None
    namespace: str = "default"
    verbose: bool = False


state = _State()


@app.callback()
def _options(
    db: Optional[Path] = typer.Option(None, "--db", help="embedded store file (default: GRAPHMEM_PATH or ./graphmem.db; GRAPHMEM_BACKEND=neo4j uses Neo4j)"),
    namespace: str = typer.Option("default", "--namespace", "-n", help="tenant namespace"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="log operations; show tracebacks"),
) -> None:
    state.db, state.namespace, state.verbose = db, namespace, verbose
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


def handles_errors(fn: F) -> F:
    """graphmem errors become one line on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GraphMemError as exc:
            if state.verbose:
                err.print_exception()
            err.print(f"[red]error:[/red] {exc}", highlight=False, markup=True, soft_wrap=True)
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def read_input(file: Path | None) -> str:
    """A file's text, or standard input's for none or '-': UTF-8 with or without a byte-order
    mark. A file that is missing, a folder or not UTF-8 is a clear error, not a traceback."""
    where = "standard input" if file is None or str(file) == "-" else str(file)
    try:
        data = sys.stdin.buffer.read() if file is None or str(file) == "-" else file.read_bytes()
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"{where} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise ValidationError(f"cannot read {where}: {exc.strerror or exc}") from None


def open_memory(path: Path | None = None, **overrides: Any):
    from ..engine import Memory
    from ..settings import Settings

    settings = Settings(**overrides)
    return Memory(path or state.db, settings=settings)


def _print_json(data: Any) -> None:
    out.print_json(json.dumps(data, ensure_ascii=False, default=str))


def recall_table(items: list[ScoredItem], title: str = "") -> Table:
    table = Table(title=title or None, show_lines=False, caption="via: v vector, k keyword, g graph, c conversation context")
    for col in ("#", "layer", "score", "rel", "imp", "conf", "rec", "freq", "via"):
        table.add_column(col, justify="left" if col in ("layer", "via") else "right", no_wrap=True)
    table.add_column("text", overflow="fold")
    for i, s in enumerate(items, 1):
        b = s.breakdown
        table.add_row(
            str(i), s.layer, f"{s.score:.3f}", f"{b.relevance:.2f}", f"{b.importance:.2f}", f"{b.confidence:.2f}",
            f"{b.recency:.2f}", f"{b.frequency:.2f}", "".join(m[0] for m in s.matched_by),
            _with_path(s.text, b.path),
        )
    return table


def _with_path(text: str, path: str | None) -> Text:
    """The item's text (never read as markup) with the graph path that found it underneath, dimmed."""
    cell = Text(text)
    if path:
        cell.append(f"\n{path}", style="dim")
    return cell


def print_context(ctx: Context) -> None:
    out.print(ctx.text or "[dim](empty)[/dim]", highlight=False, markup=False)
    timing = ", ".join(f"{k} {v:.1f} ms" for k, v in ctx.timings_ms.items())
    out.print(f"[dim]{ctx.tokens}/{ctx.budget} tokens, {len(ctx.items)} items, {ctx.dropped} dropped; {timing}[/dim]")


from . import commands, lifecycle  # noqa: E402,F401  (registers the commands)


def main() -> None:
    app(prog_name="graphmem")


__all__ = ["app", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
