"""``graphmem viz``: a namespace as one self-contained HTML graph view."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from . import app, handles_errors, open_memory, out, state


@app.command()
@handles_errors
def viz(
    entity: Optional[str] = typer.Option(None, "--entity", "-e", help="draw the graph around this entity"),
    output: Path = typer.Option(Path("graph.html"), "--output", "-o", help="the HTML file to write"),
    limit: int = typer.Option(400, "--limit", min=10, max=5000, help="records drawn at most (a larger namespace "
                                                                      "is sampled, and the page says so)"),
    messages: bool = typer.Option(False, "--messages", help="include the turns (shown on demand in the page)"),
) -> None:
    """Write the namespace's graph as one HTML file: entities, memories, episodes, procedures as
    chains, SUPERSEDES / MERGED_INTO / DERIVED_FROM edges, a time slider, search and a side panel
    with each node's fields, score factors and history. Nothing is fetched when it is viewed."""
    from ..viz import graph_data, render

    with open_memory() as mem:
        data = graph_data(mem, state.namespace, entity=entity, limit=limit, messages=messages)
    output.write_text(render(data), encoding="utf-8")
    out.print(f"wrote {output} ({len(data['nodes'])} nodes, {len(data['edges'])} edges"
              + (f"; {data['note']}" if data["note"] else "") + ")", highlight=False)
