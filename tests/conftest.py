from __future__ import annotations

import fcntl
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

from graphmem import Memory
from graphmem.store import EmbeddedStore

ROOT = Path(__file__).resolve().parents[1]
# The contract suite runs on every backend: the embedded store, Neo4j 5.26 LTS (neo4j) and Neo4j
# 2026.x (neo4j-2026, which filters vector searches inside the index). GRAPHMEM_TEST_BACKENDS=embedded
# skips Neo4j on a machine without Java (CI never sets it).
BACKENDS = os.environ.get("GRAPHMEM_TEST_BACKENDS", "embedded,neo4j,neo4j-2026").split(",")
DIM = 8
# Tests wipe the database they use, so by default they get their own servers on ports 7688 and
# 7689 (scripts/neo4j-dev --test: data in .neo4j-test/ and .neo4j-test-2026/), never a
# developer's 7687.
NEO4J_TEST_URI = os.environ.get("GRAPHMEM_TEST_NEO4J_URI", "bolt://127.0.0.1:7688")
NEO4J_TEST_PASSWORD = os.environ.get("GRAPHMEM_TEST_NEO4J_PASSWORD", "graphmem-dev")
NEO4J_URIS = {"neo4j": NEO4J_TEST_URI,
              "neo4j-2026": os.environ.get("GRAPHMEM_TEST_NEO4J_2026_URI", "bolt://127.0.0.1:7689")}
NEO4J_LINES = {"neo4j": "5", "neo4j-2026": "2026"}  # scripts/neo4j-dev's NEO4J_LINE
NEO4J_BACKENDS = [b for b in BACKENDS if b in NEO4J_URIS]
# the surfaces (REST, MCP) run on the embedded store and the LTS; the store contract covers 2026.x
SURFACE_BACKENDS = [b for b in BACKENDS if b != "neo4j-2026"]
_wiped: set[tuple[str, str]] = set()
# .ci/run sets it: there a missing optional system tool (Chromium, npm) fails its tests instead of
# skipping them, so CI cannot pass with a test silently left out.
REQUIRE_ALL = os.environ.get("GRAPHMEM_TEST_REQUIRE_ALL") == "1"


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    """A run stopped with SIGTERM (a CI job's timeout, ``kill``) ends as Ctrl-C does: the
    session's fixtures are torn down, so a Neo4j server the run started is stopped instead of
    left answering on its port for the next run to find."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupted)


def system_tool(found: str | None, what: str) -> str:
    """``found`` (a path), else a skip naming what is missing and how to get it, or a failure
    under ``GRAPHMEM_TEST_REQUIRE_ALL=1``."""
    if found:
        return found
    if REQUIRE_ALL:
        pytest.fail(f"{what} is missing and GRAPHMEM_TEST_REQUIRE_ALL=1 requires it")
    pytest.skip(f"{what} is missing (set GRAPHMEM_TEST_REQUIRE_ALL=1 to fail instead)")


def _reachable(uri: str) -> bool:
    u = urlparse(uri)
    try:
        with socket.create_connection((u.hostname, u.port or 7687), timeout=1):
            return True
    except OSError:
        return False


def neo4j_dev(command: str, backend: str = "neo4j") -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "scripts" / "neo4j-dev"), "--test", command],
                          env={**os.environ, "NEO4J_PASSWORD": NEO4J_TEST_PASSWORD, "NEO4J_LINE": NEO4J_LINES[backend]},
                          capture_output=True, text=True, timeout=600)


def claim(uri: str):
    """This session's claim on the Neo4j at ``uri`` (an open lock file: closing it lets go), or a
    failure naming the session that holds it. Tests wipe the database they use, so two sessions
    on one server delete each other's data: a local run beside ``.ci/run`` failed CI's tests."""
    u = urlparse(uri)
    lock = open(Path(tempfile.gettempdir()) / f"graphmem-test-neo4j-{u.hostname}-{u.port or 7687}.lock", "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held = False
    except BlockingIOError:
        held = True
    if held:
        lock.seek(0)
        holder = lock.read().strip() or "?"
        lock.close()
        pytest.fail(f"another test session (pid {holder}) is using the Neo4j at {uri}; tests wipe its database, so "
                    "wait for that run to end, or point GRAPHMEM_TEST_NEO4J_URI / _2026_URI at another server")
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))
    lock.flush()
    return lock


def _server(backend: str):
    """A real Neo4j of ``backend``'s line for the session, claimed for it alone (``claim``): the
    one at its URI if it answers, else one started here with scripts/neo4j-dev (and stopped at
    the end). Never skipped."""
    uri, started = NEO4J_URIS[backend], False
    _claim_all()
    try:
        if not _reachable(uri):
            if "GRAPHMEM_TEST_NEO4J_URI" in os.environ:
                pytest.fail(f"no Neo4j answers at {uri}")
            done = neo4j_dev("start", backend)
            if done.returncode != 0:
                pytest.fail(f"scripts/neo4j-dev start (NEO4J_LINE={NEO4J_LINES[backend]}) failed:\n{done.stdout}\n{done.stderr}")
            started = True
        yield uri
        if started:
            neo4j_dev("stop", backend)
    finally:
        lock = _claims.pop(uri, None)
        if lock is not None:
            lock.close()


_claims: dict[str, object] = {}  # uri -> this session's lock on it
_refused: list[str] = []


def _claim_all() -> None:
    """Every Neo4j this session tests, claimed at once on the first one's use: a session that finds
    one held takes none (two sessions that each took one would fail each other's other half)."""
    if _refused:
        pytest.fail(_refused[0])
    if _claims:
        return
    try:
        for uri in dict.fromkeys(NEO4J_URIS[b] for b in NEO4J_BACKENDS):
            _claims[uri] = claim(uri)
    except pytest.fail.Exception as exc:
        for lock in _claims.values():
            lock.close()
        _claims.clear()
        _refused.append(str(exc))
        raise


@pytest.fixture(scope="session")
def neo4j_server():
    """Neo4j 5.26 LTS (port 7688)."""
    yield from _server("neo4j")


@pytest.fixture(scope="session")
def neo4j_2026_server():
    """Neo4j 2026.x (port 7689)."""
    yield from _server("neo4j-2026")


def serve_backend(request, backend: str) -> str:
    """``backend``, with its Neo4j server started for the session where it is one."""
    if backend in NEO4J_URIS:
        request.getfixturevalue("neo4j_server" if backend == "neo4j" else "neo4j_2026_server")
    return backend


def neo4j_store(backend: str = "neo4j", **kw):
    from graphmem.store.neo4j import Neo4jStore

    return Neo4jStore(NEO4J_URIS[backend], "neo4j", NEO4J_TEST_PASSWORD, **kw)


def wipe_neo4j(backend: str = "neo4j") -> None:
    """Delete every node and relationship of ``backend``'s test database."""
    from neo4j import GraphDatabase

    uri = NEO4J_URIS[backend]
    with GraphDatabase.driver(uri, auth=("neo4j", NEO4J_TEST_PASSWORD)) as driver, driver.session() as s:
        # relationships first: a hub's thousands would otherwise land in one node batch
        s.run("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS").consume()
        s.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()


def make_store(backend: str, tmp_path, dim: int = DIM, **kw):
    """A store for one test: the same tmp_path reopens the same data; a new one starts empty."""
    if backend in ("embedded", "embedded-ann"):  # embedded-ann: every vector search through the HNSW graph
        store = EmbeddedStore(tmp_path / "store.db", ann_threshold=1 if backend == "embedded-ann" else 0)
    elif backend in NEO4J_URIS:
        if (backend, str(tmp_path)) not in _wiped:
            wipe_neo4j(backend)
            _wiped.add((backend, str(tmp_path)))
        store = neo4j_store(backend, **kw)
    else:
        raise ValueError(backend)
    store.init(embedder="test-embedder", dim=dim)
    return store


def make_memory(backend: str, tmp_path, **kw) -> Memory:
    """A Memory on a fresh store of ``backend`` (Neo4j: the wiped test database)."""
    if backend == "embedded":
        return Memory(tmp_path / "graphmem.db", **kw)
    wipe_neo4j(backend)
    return Memory(store=neo4j_store(backend), **kw)


def reopen_memory(backend: str, tmp_path, **kw) -> Memory:
    """A second Memory on the store ``make_memory`` made for this test (nothing wiped)."""
    if backend == "embedded":
        return Memory(tmp_path / "graphmem.db", **kw)
    return Memory(store=neo4j_store(backend), **kw)


@pytest.fixture(autouse=True)
def _no_background_extraction(monkeypatch):
    """Tests of the fast path run without the model; extraction tests opt in explicitly."""
    monkeypatch.setenv("GRAPHMEM_EXTRACTION", "off")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return serve_backend(request, request.param)


@pytest.fixture
def store(backend, tmp_path):
    s = make_store(backend, tmp_path)
    yield s
    s.close()


@pytest.fixture
def gmem(backend, tmp_path):
    """A Memory on a fresh store of each backend."""
    m = make_memory(backend, tmp_path)
    yield m
    m.close()


@pytest.fixture
def mem(tmp_path):
    m = Memory(tmp_path / "graphmem.db")
    yield m
    m.close()


def without_ids(text: str) -> str:
    """``text`` less graphmem's record ids (a prefix and 24 hex digits) and the long fractions of
    its timings, scores and timestamps: a probe for a secret number must not trip over an id or a
    float that happens to hold its digits (a context's timing once read 0.094997002743185)."""
    return re.sub(r"\.\d{5,}", "", re.sub(r"\b[a-z]+_[0-9a-f]{24}\b", "", text))


def unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)
