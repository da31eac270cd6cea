from __future__ import annotations

import numpy as np
import pytest

from graphmem import Memory
from graphmem.store import EmbeddedStore

BACKENDS = ["embedded"]  # the Neo4j backend adds "neo4j" here
DIM = 8


def make_store(backend: str, tmp_path, dim: int = DIM):
    if backend == "embedded":
        store = EmbeddedStore(tmp_path / "store.db")
    else:  # pragma: no cover - until a second backend lands
        raise ValueError(backend)
    store.init(embedder="test-embedder", dim=dim)
    return store


@pytest.fixture(autouse=True)
def _no_background_extraction(monkeypatch):
    """Tests of the fast path run without the model; extraction tests opt in explicitly."""
    monkeypatch.setenv("GRAPHMEM_EXTRACTION", "off")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def store(backend, tmp_path):
    s = make_store(backend, tmp_path)
    yield s
    s.close()


@pytest.fixture
def mem(tmp_path):
    m = Memory(tmp_path / "graphmem.db")
    yield m
    m.close()


def unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)
