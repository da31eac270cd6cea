"""Several processes extracting one store (every backend): each session's windows are claimed
with a lease in the store, so three processes share the work and a window is folded exactly
once, also when one of them is SIGKILLed in the middle of a window (another takes its session
over); and the lease itself: exclusive, renewable, given back, run out, taken from the dead."""

from __future__ import annotations

import json
import multiprocessing as mp
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphmem import Memory
from graphmem.engine.extraction import lease_key
from graphmem.extract.extractors import Completion
from graphmem.settings import Settings

from ..conftest import make_memory, neo4j_store

SESSIONS, WINDOWS, EVERY = 3, 4, 4
NAMES = ["Alice", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kalani", "Lior"]
THINGS = ["a red kayak", "a cello", "a bonsai", "a telescope", "a sourdough starter", "a vintage camera",
          "a chess clock", "a beehive", "a loom", "a harp", "a canoe", "a typewriter"]
TURN = re.compile(r"window (\d+)")


def turn(session: int, seq: int) -> str:
    window = session * WINDOWS + seq // EVERY
    return f"I, {NAMES[window]}, own {THINGS[window]} (window {window}, turn {seq})."


class WindowExtractor:
    """Answers every window with one memory naming it (from the window number its turns carry),
    after ``delay`` seconds; with ``hang``, the first call writes ``marker`` and never returns
    (its process is killed there). Every call is logged to ``calls`` (one line per window asked)."""

    name = "test:windows"

    def __init__(self, calls: Path, marker: Path | None = None, delay: float = 0.2) -> None:
        self.calls, self.marker, self.delay = calls, marker, delay
        self.broken = False  # every reply unusable: the window fails

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion:
        window = int(TURN.findall(user)[0])
        with self.calls.open("a") as f:
            f.write(f"{window}\n")
        if self.marker is not None:
            self.marker.write_text(str(window))
            time.sleep(600)
        if self.broken:
            return Completion("{broken", 10, 10)
        time.sleep(self.delay)
        memory = {"t": f"{NAMES[window]} owns {THINGS[window]}", "k": "fact", "s": NAMES[window], "p": "owns",
                  "o": THINGS[window], "i": 4, "c": "u"}
        return Completion(json.dumps({"r": "", "m": [memory], "e": [], "ep": f"window {window}", "pr": []}), 10, 10)


def _open(backend: str, path: str, extractor: Any = None) -> Memory:
    # a dead process of this machine loses its lease at once (``_dead_here``), so the test needs
    # no short lease to see the takeover, and a long one keeps a renewal held up on a loaded
    # machine (Neo4j deadlock retries) from handing a live process's window to another
    settings = Settings(enrichment="manual", extraction="manual", extract_every=EVERY, extract_budget_tokens=0,
                        extraction_lease_seconds=10)
    if backend == "embedded":
        return Memory(path, settings=settings, extractor=extractor)
    return Memory(store=neo4j_store(backend), settings=settings, extractor=extractor)


def _extract(backend: str, path: str, calls: str, marker: str | None, start: Any) -> None:
    mem = _open(backend, path, WindowExtractor(Path(calls), Path(marker) if marker else None))
    start.wait()
    mem.extract()
    mem.close()


def test_three_processes_fold_each_window_once_and_survive_a_kill_mid_window(backend, tmp_path):
    mem = make_memory(backend, tmp_path, settings=Settings(enrichment="manual", extraction="off"))
    for s in range(SESSIONS):
        mem.add_messages(f"s{s}", [turn(s, i) for i in range(WINDOWS * EVERY)])
    mem.close()
    path, calls, marker = str(tmp_path / "graphmem.db"), tmp_path / "calls.txt", tmp_path / "victim"
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    victim = ctx.Process(target=_extract, args=(backend, path, str(calls), str(marker), start))
    workers = [ctx.Process(target=_extract, args=(backend, path, str(calls), None, start)) for _ in range(2)]
    for p in (victim, *workers):
        p.start()
    start.set()
    deadline = time.monotonic() + 300
    while not marker.exists() and time.monotonic() < deadline and victim.exitcode is None:
        time.sleep(0.05)
    assert marker.exists(), "the victim never reached a window"
    victim.kill()  # SIGKILL in the middle of its window: its lease stays in the store
    victim.join()
    for p in workers:
        p.join(timeout=300)
        assert p.exitcode == 0
    asked = [int(line) for line in calls.read_text().split()]
    assert sorted(set(asked)) == list(range(SESSIONS * WINDOWS))
    assert len(asked) == SESSIONS * WINDOWS + 1  # every window asked once; the victim's asked again by another

    after = _open(backend, path)
    try:
        texts = [m.text for m in after.list("memory", limit=1000)]
        for w in range(SESSIONS * WINDOWS):  # folded exactly once each
            assert texts.count(f"{NAMES[w]} owns {THINGS[w]}") == 1, (w, texts)
        for s in range(SESSIONS):
            session = after.store.get("default", [f"s{s}"])[0]
            assert (session.extracted_upto, session.windows_done) == (WINDOWS * EVERY, WINDOWS)
            assert after.store.get_meta("default", lease_key(f"s{s}")) is None  # every lease given back
        assert after.extraction_status()["queued_partial"] == 0
    finally:
        after.close()


def test_two_threads_of_one_process_share_the_work(tmp_path):
    """The background thread and a caller's ``extract()`` are two holders: two threads extracting
    through one ``Memory`` ask each window once."""
    calls = tmp_path / "calls.txt"
    mem = _open("embedded", str(tmp_path / "graphmem.db"), WindowExtractor(calls))
    try:
        for s in range(SESSIONS):
            mem.add_messages(f"s{s}", [turn(s, i) for i in range(WINDOWS * EVERY)])
        threads = [threading.Thread(target=mem.extract) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert sorted(int(line) for line in calls.read_text().split()) == list(range(SESSIONS * WINDOWS))
        assert len(mem.list("memory", limit=1000)) == SESSIONS * WINDOWS
    finally:
        mem.close()


def test_a_window_another_process_folded_after_the_listing_is_not_asked_again(tmp_path):
    """A worker lists the pending windows, another process folds them and gives the lease back,
    then the first claims the free lease: it reads the session again and asks nothing (it asked
    its stale window a second time, 14 asks for 13 in a loaded CI run of the test above)."""
    path, calls = str(tmp_path / "graphmem.db"), tmp_path / "calls.txt"
    first, second = (_open("embedded", path, WindowExtractor(calls, delay=0)) for _ in range(2))
    try:
        first.add_messages("s0", [turn(0, i) for i in range(WINDOWS * EVERY)])
        worker = first._extraction
        stale = worker.pending(True)
        assert len(stale) == WINDOWS
        second.extract()  # folds every window and gives the lease back
        worker.pending = lambda final, namespace=None: stale  # what it listed before the other folded
        assert worker.next_job(True) is None  # nothing left to ask
        assert sorted(int(line) for line in calls.read_text().split()) == list(range(WINDOWS))
        assert first.store.get_meta("default", lease_key("s0")) is None  # the lease claimed for nothing is given back
    finally:
        first.close()
        second.close()


def test_a_failed_window_another_process_retried_after_the_listing_is_not_asked_again(tmp_path):
    """The same for ``retry_failed``: a session listed with a failed window that another
    process retries before the lease is claimed has nothing left to ask."""
    path, calls = str(tmp_path / "graphmem.db"), tmp_path / "calls.txt"
    failing = WindowExtractor(calls, delay=0)
    failing.broken = True
    first, second = _open("embedded", path, failing), _open("embedded", path, WindowExtractor(calls, delay=0))
    try:
        first.add_messages("s0", [turn(0, i) for i in range(EVERY)])
        first.extract()
        assert first.get("s0").failed_windows == [(0, EVERY)]
        listed = first.store.query("default", "session", limit=100)  # before the other retries it
        assert second.retry_failed() == 1 and second.get("s0").failed_windows == []
        asked = calls.read_text().split()
        query = first.store.query
        first.store.query = lambda ns, kind, **kw: listed if kind == "session" else query(ns, kind, **kw)
        failing.broken = False
        assert first.retry_failed() == 0 and calls.read_text().split() == asked  # nothing asked again
        assert len(first.list("memory", limit=100)) == 1
    finally:
        first.close()
        second.close()


def test_a_lease_is_exclusive_renewable_given_back_and_runs_out(store):
    key = lease_key("s1")
    assert store.claim("a", key, "host:1:a", 30)
    assert not store.claim("a", key, "host:2:b", 30)  # held
    assert store.claim("a", key, "host:1:a", 30)  # renewed by its owner
    assert store.claim("b", key, "host:2:b", 30)  # another namespace, another lease
    assert not store.claim("a", key, "host:3:c", 30, take_from="host:9:z")  # not the holder named
    assert store.claim("a", key, "host:2:b", 30, take_from="host:1:a")  # its holder is known to be dead
    store.release("a", key, "host:1:a")  # no longer its lease: nothing given back
    assert not store.claim("a", key, "host:1:a", 30)
    store.release("a", key, "host:2:b")
    assert store.get_meta("a", key) is None
    assert store.claim("a", key, "host:1:a", 0.5)
    time.sleep(1.0)
    assert store.claim("a", key, "host:2:b", 30)  # the first one's ran out
