"""See a namespace: ``graph_data`` (the records and edges to draw) and ``render`` (one
self-contained HTML page: d3, vendored from npm as d3@7.9.0 into ``static/``, is inlined, so
nothing is fetched when the page is viewed). ``graphmem viz`` writes the page with its data;
``graphmem serve`` serves it at ``/ui``, where it fetches ``/v1/graph`` with an API key."""

from __future__ import annotations

import functools
import json
from importlib.resources import files
from typing import Any

from .graph import graph_data

__all__ = ["graph_data", "render"]

_STYLE = """
body { margin: 0; font: 13px system-ui, sans-serif; display: grid; grid-template-columns: 1fr 340px;
       grid-template-rows: auto 1fr; height: 100vh; }
header { grid-column: 1 / 3; display: flex; gap: 12px; align-items: center; padding: 6px 10px;
         border-bottom: 1px solid #ddd; flex-wrap: wrap; }
header h1 { font-size: 15px; margin: 0 8px 0 0; }
#graph { width: 100%; height: 100%; background: #fcfcfc; }
#panel { border-left: 1px solid #ddd; overflow: auto; padding: 8px 12px; }
#panel table { border-collapse: collapse; font-size: 12px; } #panel th { text-align: left; padding-right: 6px;
  vertical-align: top; color: #555; } #panel td { word-break: break-word; }
#note { background: #fff4d6; padding: 2px 8px; border-radius: 4px; }
.node text { font-size: 10px; fill: #333; pointer-events: none; paint-order: stroke; stroke: #fcfcfc;
  stroke-width: 3px; } .node { cursor: pointer; }
.edge.ended { stroke: #aaa; stroke-dasharray: 6 4; stroke-width: 1.5px; }
.edge-label { display: none; font-size: 8px; fill: #2f6fb0; text-anchor: middle; pointer-events: none; }
.zoomed-in .edge-label { display: inline; } .edge-label.ended { fill: #999; font-style: italic; }
.zoomed-in .edge-label.hidden { display: none; }
.node.hidden, .edge.hidden, [hidden] { display: none; }
.node.dim { opacity: 0.2; } .node.hit circle { stroke: #d00; stroke-width: 3px; }
.node.selected circle { stroke: #000; stroke-width: 2px; }
.node.status-superseded circle, .node.status-archived circle { opacity: 0.45; }
.node.status-superseded text { text-decoration: line-through; fill: #888; }
.edge { stroke: #ccc; stroke-width: 1px; } .edge-supersedes { stroke: #d33; stroke-width: 2px; stroke-dasharray: 5 3; }
.edge-merged { stroke: #e80; stroke-width: 2px; stroke-dasharray: 2 2; } .edge-derived { stroke: #999; stroke-dasharray: 1 3; }
.edge-relates { stroke: #2f6fb0; stroke-width: 1.5px; } .edge-produced { stroke: #3a9a5b; }
.edge-chain { stroke: #8a4fbf; stroke-width: 2px; }
.factor { display: flex; gap: 6px; align-items: center; } .factor span:first-child { width: 80px; }
.factor .bar { display: inline-block; height: 8px; background: #e08a1e; }
.legend span { margin-right: 8px; } .legend i { display: inline-block; width: 10px; height: 10px; border-radius: 5px;
  margin-right: 3px; vertical-align: middle; }
"""

_BODY = """
<header>
  <h1>graphmem: {title}</h1>
  <input id="search" type="search" placeholder="search nodes">
  <label>until <input id="time" type="range" step="any"> <span id="time-label"></span></label>
  <label id="messages-box" hidden><input id="show-messages" type="checkbox"> turns</label>
  <label id="ended-box" hidden title="relations a later fact replaced, drawn dashed with their dates">
    <input id="show-ended" type="checkbox" checked> ended relations</label>
  <span id="counts"></span> <span id="note" hidden></span>
  <span class="legend"><span><i style="background:#2f6fb0"></i>entity</span><span><i style="background:#e08a1e"></i>memory</span>
    <span><i style="background:#3a9a5b"></i>episode</span><span><i style="background:#8a4fbf"></i>procedure</span>
    <span><i style="background:#777"></i>session</span></span>
  <form id="connect" hidden><input id="key" type="password" placeholder="API key (if the server has keys)">
    <input id="namespace" placeholder="namespace (open server)"> <input id="entity" placeholder="around entity">
    <label><input id="want-messages" type="checkbox"> turns</label> <button>show</button></form>
</header>
<svg id="graph"></svg>
<aside id="panel"><p>Click a node for its fields, score factors and history.</p></aside>
"""


@functools.cache  # /ui renders the page on every request: d3 is read from the package once
def _static(name: str) -> str:
    return files("graphmem.viz").joinpath("static", name).read_text(encoding="utf-8")


def render(data: dict[str, Any] | None, title: str = "") -> str:
    """The page: with ``data`` (from ``graph_data``) embedded, or (None) a page that asks the
    server it is served from for ``/v1/graph``."""
    embedded = ""
    if data is not None:
        payload = json.dumps(data, ensure_ascii=False, default=str).replace("</", "<\\/")
        embedded = f'<script id="graph-data" type="application/json">{payload}</script>'
    name = title or (data or {}).get("namespace", "")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
            f'<title>graphmem {_escape(name)}</title>'
            f"<style>{_STYLE}</style></head><body>{_BODY.format(title=_escape(name))}{embedded}"
            f"<script>{_static('d3.min.js')}</script><script>{_static('view.js')}</script></body></html>")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
