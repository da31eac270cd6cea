"""OpenTelemetry: with an SDK configured by the application, recall, context, writes, store calls
and extraction windows are spans with graphmem's attributes; without one (the default),
nothing records and no SDK is even imported. Each case runs in its own process: a tracer
provider is global and set once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONFIGURED = """
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

from graphmem import Memory, NotFoundError
from graphmem.settings import Settings
from graphmem.scripts.sample import ingest
from tests.replay import ReplayExtractor

mem = Memory(sys.argv[1], settings=Settings(extraction="manual"), extractor=ReplayExtractor())
ingest(mem)
mem.extract()
mem.recall("Which language does Maya prefer?", namespace="default")
mem.context("plan Maya's dinner", namespace="default")
try:
    mem.get("mem_missing", namespace="default")
except NotFoundError:
    pass
mem.close()
spans = [{"name": s.name, "id": s.context.span_id, "parent": s.parent.span_id if s.parent else None,
          "attributes": dict(s.attributes), "status": s.status.status_code.name} for s in exporter.get_finished_spans()]
print(json.dumps(spans))
"""

DEFAULT = """
import sys
from opentelemetry import trace
from graphmem import Memory
from graphmem.settings import Settings

mem = Memory(sys.argv[1], settings=Settings(extraction="off"))
mem.remember("Ana likes tea", namespace="t")
mem.recall("tea", namespace="t")
mem.close()
print(type(trace.get_tracer_provider()).__name__, any(m.startswith("opentelemetry.sdk") for m in sys.modules))
"""


def run(script: str, tmp_path) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), str(tmp_path / "t.db")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_spans_for_calls_store_and_extraction_windows(tmp_path):
    spans = json.loads(run(CONFIGURED, tmp_path))
    by_name: dict[str, list[dict]] = {}
    for s in spans:
        by_name.setdefault(s["name"], []).append(s)
    assert {"graphmem.add_messages", "graphmem.extract", "graphmem.recall", "graphmem.context", "graphmem.get",
            "graphmem.extraction.window", "graphmem.store.vector_search", "graphmem.store.keyword_search",
            "graphmem.store.put"} <= set(by_name)
    recall = by_name["graphmem.recall"][0]
    assert recall["attributes"]["graphmem.namespace"] == "default"
    children = {s["name"] for s in spans if s["parent"] == recall["id"]}
    assert {"graphmem.store.vector_search", "graphmem.store.keyword_search"} <= children  # store calls nest
    windows = by_name["graphmem.extraction.window"]
    done = [w for w in windows if not w["attributes"]["graphmem.extraction.skipped"]]
    assert len(done) == 4 and all(w["attributes"]["graphmem.extraction.calls"] == 1 for w in done)
    assert sum(w["attributes"]["graphmem.extraction.added"] for w in done) > 0
    assert any(w["attributes"]["graphmem.extraction.superseded"] for w in done)  # Python -> Julia
    assert all(w["attributes"]["graphmem.session"] and w["attributes"]["graphmem.window.end"] > 0 for w in windows)
    assert by_name["graphmem.get"][0]["status"] == "ERROR"  # a NotFoundError marks its span


def test_no_sdk_means_no_spans_and_nothing_sent(tmp_path):
    provider, sdk_loaded = run(DEFAULT, tmp_path).split()
    assert provider == "ProxyTracerProvider" and sdk_loaded == "False"


def test_every_store_call_of_both_backends_is_spanned():
    """Both store classes carry the span decorator (a helper placed between it and the Neo4j
    class once took it: the Neo4j store's calls made no spans)."""
    import inspect

    from graphmem.store import EmbeddedStore
    from graphmem.store.neo4j import Neo4jStore

    for cls in (EmbeddedStore, Neo4jStore):
        for name in ("put", "get", "vector_search", "search_layer", "walk", "turns_beside", "kinds_held"):
            assert hasattr(inspect.getattr_static(cls, name), "__wrapped__"), (cls.__name__, name)
