"""Several processes writing one store (both backends): appends to one session keep one order
and count, corrections racing on one memory leave exactly one current version, and new names
written at once make one entity each."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from graphmem import Memory
from graphmem.errors import ValidationError
from graphmem.settings import Settings
from graphmem.text import normalise_name

from ..conftest import make_memory, neo4j_store

WRITERS, APPENDS = 3, 8


def _open(backend: str, path: str) -> Memory:
    settings = Settings(enrichment="manual", extraction="off")
    return Memory(path, settings=settings) if backend == "embedded" else Memory(store=neo4j_store(backend), settings=settings)


def _append(backend: str, path: str, writer: int, start: mp.Event) -> None:
    mem = _open(backend, path)
    start.wait()
    for i in range(APPENDS):
        mem.add_messages("shared", [f"writer {writer} turn {i} a", f"writer {writer} turn {i} b"], wait=False)
    mem.close()


def _correct(backend: str, path: str, memory_id: str, value: str, out: mp.Queue, start: mp.Event) -> None:
    mem = _open(backend, path)
    start.wait()
    try:
        out.put(mem.update(memory_id, text=f"Alice prefers {value}", object=value).id)
    except ValidationError as exc:  # the other process corrected it first: correct the newest version
        out.put(str(exc))
    mem.close()


NAMES = [("Ingrid Solberg", "person"), ("Tromsø Kayak Club", "org"), ("周海燕", "person")]


def _name(backend: str, path: str, writer: int, start: mp.Event) -> None:
    mem = _open(backend, path)
    start.wait()
    entities = [{"name": n, "type": t} for n, t in NAMES]
    mem.remember(f"Ingrid Solberg and 周海燕 paddle with the Tromsø Kayak Club ({writer})", entities=entities)
    for n, t in NAMES:
        mem.add_entity(n, type=t)
    mem.add_procedure(f"launch a kayak {writer}", ["ask Ingrid Solberg for the key", "open the Tromsø Kayak Club shed"])
    mem.close()


def _run(targets: list[tuple]) -> None:
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=fn, args=(*args, start)) for fn, *args in targets]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0


@pytest.fixture
def shared(backend, tmp_path):
    mem = make_memory(backend, tmp_path)
    path = str(tmp_path / "graphmem.db")
    yield backend, path, mem
    mem.close()


@pytest.mark.parametrize("new_session", [False, True])  # the first append of a session races too
def test_processes_appending_to_one_session_keep_one_order(shared, new_session):
    backend, path, mem = shared
    mem.add_messages("other", ["the namespace exists"])
    if not new_session:
        mem.add_messages("shared", ["the first turn"])
    _run([(_append, backend, path, w) for w in range(WRITERS)])
    msgs = mem.list("message", session_id="shared", limit=1000)
    total = (0 if new_session else 1) + 2 * WRITERS * APPENDS
    assert sorted(m.seq for m in msgs) == list(range(total))
    assert mem.get("shared").message_count == total


def test_processes_correcting_one_memory_leave_one_current_version(shared):
    backend, path, mem = shared
    old = mem.remember("Alice prefers tea", subject="Alice", predicate="prefers", object="tea")
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    _run([(_correct, backend, path, old.id, "coffee", out), (_correct, backend, path, old.id, "cocoa", out)])
    said = [out.get(timeout=10) for _ in range(2)]
    current = [m for m in mem.list("memory", status="active") if m.subject == "Alice"]
    assert len(current) == 1, said
    assert sum("superseded; correct its newest version" in s for s in said) == 1


def test_processes_naming_the_same_new_people_at_once_make_one_entity_each(shared):
    backend, path, mem = shared
    mem.remember("The namespace exists")
    _run([(_name, backend, path, w) for w in range(5)])
    entities = mem.list("entity", limit=1000)
    for name, type_ in NAMES:
        same = [e for e in entities if normalise_name(e.name) == normalise_name(name)]
        assert [(e.type, e.merged_into) for e in same] == [(type_, None)], same
    written = [m for m in mem.list("memory", limit=100) if "Kayak Club" in m.text]
    assert len(written) == 5  # every writer's memory, each linked to the one entity
    assert {m.id for m in mem.neighbourhood("Tromsø Kayak Club").memories} >= {m.id for m in written}
