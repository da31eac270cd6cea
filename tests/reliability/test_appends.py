"""Appends from many threads and work left by a stopped process (both backends)."""

from __future__ import annotations

import threading
import time

from graphmem import Memory
from graphmem.settings import Settings

from ..conftest import make_memory, neo4j_store


def test_threads_appending_to_one_session_get_one_order(backend, tmp_path):
    mem = make_memory(backend, tmp_path)
    try:
        def writer(t: int) -> None:
            for i in range(10):
                mem.add_messages("shared", [f"thread {t} turn {i} a", f"thread {t} turn {i} b"], wait=i % 2 == 0)

        threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        mem.flush()
        msgs = mem.list("message", session_id="shared", limit=1000)
        assert sorted(m.seq for m in msgs) == list(range(80))  # no turn shares a place, none is lost
        assert mem.get("shared").message_count == 80
        by_seq = {m.seq: m.content for m in msgs}
        assert all(by_seq[s].endswith(" a") and by_seq[s + 1].endswith(" b") for s in range(0, 80, 2))  # batches whole
    finally:
        mem.close()


def test_turns_left_unembedded_by_a_stopped_process_are_embedded_on_open(backend, tmp_path):
    first = make_memory(backend, tmp_path, settings=Settings(enrichment="manual"))
    first.add_messages("s", ["Alice flew to Lisbon on Monday.", "She stayed at the harbour."], wait=False)
    assert first.pending() == 2
    first.close()  # stopped before the background embedder ran
    again = Memory(tmp_path / "graphmem.db") if backend == "embedded" else Memory(store=neo4j_store(backend))
    try:
        deadline = time.monotonic() + 120
        while again.pending() and time.monotonic() < deadline:  # no flush, no new write: it resumes by itself
            time.sleep(0.2)
        assert again.pending() == 0
        assert again.recall("Lisbon", k=1, layers=["message"])[0].breakdown.semantic > 0
    finally:
        again.close()


def test_a_turn_forgotten_while_being_embedded_is_not_written_back(backend, tmp_path, monkeypatch):
    writer = make_memory(backend, tmp_path, settings=Settings(enrichment="manual"))
    other = Memory(tmp_path / "graphmem.db") if backend == "embedded" else Memory(store=neo4j_store(backend))
    try:
        msg = writer.add_messages("s", ["My locker code is 4471."], wait=False)[0]
        link = writer._enricher.linker.link

        def forgotten_meanwhile(*args, **kwargs):  # another process forgets it between re-read and write
            if other.store.get("default", [msg.id]):
                other.forget(msg.id)
            return link(*args, **kwargs)

        monkeypatch.setattr(writer._enricher.linker, "link", forgotten_meanwhile)
        writer.flush()
        assert writer.store.get("default", [msg.id]) == [] and writer.pending() == 0
    finally:
        other.close()
        writer.close()
