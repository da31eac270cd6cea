"""The notebooks run top to bottom in a real Jupyter kernel (nbclient): the quick start and the
scoring notebook on the embedded store, the Cypher one against the tests' Neo4j. The kernel
starts in an empty folder, as a user's would outside this checkout: they need the installed
package only. They are kept in git without outputs; the executed copies go to test-artifacts/."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from .conftest import BACKENDS, NEO4J_TEST_PASSWORD, NEO4J_TEST_URI, wipe_neo4j

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def execute(name: str, monkeypatch, tmp_path, **env: str) -> str:
    for k, v in {"GRAPHMEM_EXTRACTION": "manual", **env}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    nbformat.write(nb, ROOT / "test-artifacts" / name)
    return "\n".join(o.get("text", "") + json.dumps(o.get("data", {}).get("text/plain", ""))
                     for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_notebooks_are_kept_without_outputs():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code"), path
        assert not any("tests" in c.source.split() or "from tests" in c.source for c in nb.cells), path  # the package only
    assert len(list(NOTEBOOKS.glob("*.ipynb"))) == 3


def test_quickstart(monkeypatch, tmp_path):
    out = execute("01-quickstart.ipynb", monkeypatch, tmp_path)
    assert "superseded Maya prefers Python over R" in out and "top item:" in out
    assert "superseded: Maya prefers Python over R for all her analysis work -> Maya prefers Julia" in out


def test_scoring_and_lifecycle(monkeypatch, tmp_path):
    out = execute("03-scoring-and-lifecycle.ipynb", monkeypatch, tmp_path)
    assert "recency after 30 days: 0.50" in out and "without relevance" in out
    assert "merged 1, expired 1" in out


@pytest.mark.skipif("neo4j" not in BACKENDS, reason="GRAPHMEM_TEST_BACKENDS excludes neo4j")
def test_cypher_exploration(neo4j_server, monkeypatch, tmp_path):
    wipe_neo4j()  # other tests bind the database to their 8-d test embedder
    out = execute("02-cypher-exploration.ipynb", monkeypatch, tmp_path, GRAPHMEM_NEO4J_URI=NEO4J_TEST_URI,
                  GRAPHMEM_NEO4J_PASSWORD=NEO4J_TEST_PASSWORD)
    ran = sorted(p.name for p in (ROOT / "cypher" / "explore").glob("*.cypher"))
    assert all(f"== {name} (" in out for name in ran)  # every exploration query, with its result
    assert "the window replaces Python: Python -> Julia" in out and "around Maya" in out and "removed" in out
    assert os.environ["GRAPHMEM_NEO4J_URI"] == NEO4J_TEST_URI
