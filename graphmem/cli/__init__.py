"""The ``graphmem`` command line (typer + rich). Commands call the engine and format; no logic.

Errors print one line and exit 1; ``-v`` shows the traceback."""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, TypeVar

import typer
from typer.core import TyperOption
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import GraphMemError, ValidationError

if TYPE_CHECKING:  # the models load with the first command that opens a store, not for --help
    from ..models import Context, ScoredItem


def _flag_type(self: TyperOption, ctx: Any) -> str | None:
    """A flag takes no value, so its help row shows no type (typer 0.29 prints ``<bool>``)."""
    return None if self.is_flag else _option_type(self, ctx)


_option_type = TyperOption.display_type_rich
TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign]

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
    namespace_given: bool = False  # -n on the command line: import goes there, not to the file's namespace
    verbose: bool = False


state = _State()


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import version

        out.print(f"graphmem {version('graphmem')}")
        raise typer.Exit()


@app.callback()
def _options(
    db: Optional[Path] = typer.Option(None, "--db", help="embedded store file (default: GRAPHMEM_PATH or ./graphmem.db; GRAPHMEM_BACKEND=neo4j uses Neo4j)"),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="tenant namespace [default: default]"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="log operations; show tracebacks"),
    version: bool = typer.Option(False, "--version", help="print graphmem's version and exit", is_eager=True,
                                 callback=_version),
) -> None:
    state.db, state.namespace, state.namespace_given, state.verbose = db, namespace or "default", namespace is not None, verbose
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
    """The store the options name. Extraction is manual in a command: nothing runs in the
    background or makes closing wait; ``add --extract`` and ``extract`` run windows in view."""
    from ..engine import Memory

    return Memory(path or state.db, settings=settings(**{"extraction": "manual", **unless_set(blas_threads=1), **overrides}))


def unless_set(**defaults: Any) -> dict[str, Any]:
    """Settings graphmem's own processes choose, less those the environment sets
    (``GRAPHMEM_<NAME>``): one BLAS thread, for instance, unless GRAPHMEM_BLAS_THREADS says."""
    return {key: value for key, value in defaults.items() if f"GRAPHMEM_{key.upper()}" not in os.environ}


def settings(**overrides: Any):
    """Settings from the environment; a bad value is one line naming it."""
    from pydantic import ValidationError as PydanticValidationError

    from ..errors import ConfigurationError
    from ..settings import Settings

    try:
        return Settings(**overrides)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        raise ConfigurationError(f"invalid setting {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def _print_json(data: Any) -> None:
    out.print_json(json.dumps(data, ensure_ascii=False, default=str))


def print_fields(record: Any, as_json: bool, exclude: set[str] | None = None) -> None:
    """A record's fields: JSON, or one ``name: value`` line each."""
    if as_json:
        _print_json(record.model_dump(mode="json"))
        return
    for key, value in record.model_dump(mode="json", exclude=exclude).items():
        out.print(f"[bold]{key}[/bold]: {value}", highlight=False)


_FACTORS = ("rel", "imp", "conf", "rec", "freq")


def recall_table(items: list[ScoredItem], title: str = "", factors: bool = False) -> Table:
    """Ranked items; the text column gets the width. ``factors`` adds the five factors."""
    caption = "via: v vector, k keyword, g graph, c conversation context" + ("" if factors else "; --factors for the breakdown")
    table = Table(title=title or None, show_lines=False, caption=caption)
    for col in ("#", "layer", "score", *(_FACTORS if factors else ()), "via"):
        table.add_column(col, justify="left" if col in ("layer", "via") else "right", no_wrap=True)
    table.add_column("text", overflow="fold", ratio=1)
    for i, s in enumerate(items, 1):
        b = s.breakdown
        shown = (b.relevance, b.importance, b.confidence, b.recency, b.frequency) if factors else ()
        table.add_row(str(i), s.layer, f"{s.score:.3f}", *(f"{v:.2f}" for v in shown),
                      "".join(m[0] for m in s.matched_by), _with_path(s.text, b.path, getattr(s.item, "status", None)))
    return table


def _with_path(text: str, path: str | None, status: Any = None) -> Text:
    """The item's text (never read as markup), marked when it is not current, with the graph
    path that found it underneath, dimmed."""
    cell = Text()
    if status is not None and status.value != "active":
        cell.append(f"[{status.value}] ", style="yellow")
    cell.append(text)
    if path:
        cell.append(f"\n{path}", style="dim")
    return cell


def id_table(*columns: str, ids: list[str]) -> Table:
    """A table whose first column holds ids at full width (they are for copying) and whose
    ``text`` column takes the rest of the width."""
    table = Table()
    table.add_column(columns[0], no_wrap=True, min_width=max(map(len, ids), default=2))
    for col in columns[1:]:
        if col == "text":
            table.add_column(col, overflow="fold", ratio=1)
        else:
            table.add_column(col, no_wrap=True)
    return table


def print_context(ctx: Context) -> None:
    if ctx.text:
        out.print(ctx.text, highlight=False, markup=False)  # the user's text is never markup
    else:
        out.print("[dim](empty: nothing stored matches yet)[/dim]")
    timing = ", ".join(f"{k} {v:.1f} ms" for k, v in ctx.timings_ms.items())
    out.print(f"[dim]{ctx.tokens}/{ctx.budget} tokens, {len(ctx.items)} items, {ctx.dropped} dropped; {timing}[/dim]")


from . import commands, entities, lifecycle, model, procedural, serve, sessions, viz  # noqa: E402,F401  (registers the commands)


def main() -> None:
    # One command is one short piece of work. OpenBLAS starts its worker threads when numpy
    # loads, and they spin: ~0.06 s of a cold command's CPU on 2 cores, more on more; the
    # thread count read at that load is the only way to skip them. GRAPHMEM_BLAS_THREADS
    # when set, else 1 as graphmem serve uses (matvec splits a large scan over the cores
    # itself). OMP_NUM_THREADS is left alone: llama.cpp's threads may read it.
    threads = os.environ.get("GRAPHMEM_BLAS_THREADS") or "1"
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, threads)
    app(prog_name="graphmem")


__all__ = ["app", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
