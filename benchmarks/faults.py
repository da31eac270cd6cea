"""Faults, measured the same way every time: crashes, concurrent processes, Neo4j restarts,
tenant isolation at scale, processes naming the same new people at once, forget beside a reader
of an older snapshot, an import killed part way. Prints one table: test, backend, trials, failures, acknowledged
writes lost, notes.

    python benchmarks/faults.py                       # the full runs, both backends
    python benchmarks/faults.py --only crash soak --backends embedded
    python benchmarks/faults.py --quick               # the sizes CI runs (tests/reliability/test_faults.py)

The Neo4j rows use the tests' servers (``scripts/neo4j-dev --test start``: 5.26 on port 7688 as
backend ``neo4j``, 2026.x on 7689 as ``neo4j-2026``): their data is wiped. The restart row stops and starts that server through the launcher while a writer runs.
Every trial reports what was acknowledged to the caller; "lost" counts acknowledged writes that
are not there afterwards. tests/reliability/test_faults.py runs the same functions, smaller.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing as mp
import os
import random
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphmem import Memory  # noqa: E402
from graphmem.errors import GraphMemError, NotFoundError, StoreError, ValidationError  # noqa: E402
from graphmem.settings import Settings  # noqa: E402


@dataclass
class Row:
    test: str
    backend: str
    trials: int = 0
    failures: int = 0
    lost: int = 0
    notes: list[str] = field(default_factory=list)
    half_applied: int = 0  # soak: reads that saw a memory with no current version while a correction committed

    def fail(self, note: str) -> None:
        self.failures += 1
        if len(self.notes) < 6:
            self.notes.append(note)


def table(rows: list[Row]) -> str:
    out = ["| test | backend | trials | failures | acknowledged writes lost | notes |", "|---|---|---|---|---|---|"]
    out += [f"| {r.test} | {r.backend} | {r.trials} | {r.failures} | {r.lost} | {'; '.join(r.notes)} |" for r in rows]
    return "\n".join(out)


NEO4J_URIS = {"neo4j": os.environ.get("GRAPHMEM_TEST_NEO4J_URI", "bolt://127.0.0.1:7688"),
              "neo4j-2026": os.environ.get("GRAPHMEM_TEST_NEO4J_2026_URI", "bolt://127.0.0.1:7689")}
NEO4J_URI = NEO4J_URIS["neo4j"]
NEO4J_PASSWORD = os.environ.get("GRAPHMEM_TEST_NEO4J_PASSWORD", "graphmem-dev")


# opening a store ------------------------------------------------------------------------------
def neo4j_memory(retry_seconds: float = 60.0, backend: str = "neo4j", **kw: Any) -> Memory:
    from graphmem.store.neo4j import Neo4jStore

    return Memory(store=Neo4jStore(NEO4J_URIS[backend], "neo4j", NEO4J_PASSWORD, retry_seconds=retry_seconds), **kw)


def open_memory(backend: str, path: str, **kw: Any) -> Memory:
    settings = Settings(enrichment="background", extraction="off", **kw)
    return Memory(path, settings=settings) if backend == "embedded" else neo4j_memory(backend=backend, settings=settings)


def wipe_neo4j(backend: str = "neo4j") -> None:
    """Delete every node of the tests' database (the embedder binding included)."""
    from neo4j import GraphDatabase

    with GraphDatabase.driver(NEO4J_URIS[backend], auth=("neo4j", NEO4J_PASSWORD)) as driver, driver.session() as s:
        s.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()


def messages_of(mem: Memory, session: str) -> list[Any]:
    """Every message of a session (pages of 10,000, the most one call returns)."""
    out: list[Any] = []
    while True:
        page = mem.list("message", session_id=session, limit=10_000, offset=len(out))
        out += page
        if len(page) < 10_000:
            return out


# crash safety (embedded) -----------------------------------------------------------------------
def _ingest_child(path: str, ack: str, wait: bool, first: int, count: int, batch: int) -> None:
    """Append ``count`` numbered messages in batches over four sessions; after each batch
    returns, its range goes to ``ack`` (flushed: the OS keeps it whatever happens to us)."""
    mem = open_memory("embedded", path)
    with open(ack, "a", encoding="utf-8") as out:
        out.write("ready\n")
        out.flush()
        for start in range(first, first + count, batch):
            texts = [f"crash token m{i} says the deploy of service {i % 97} went fine" for i in range(start, start + batch)]
            mem.add_messages(f"s{(start // batch) % 4}", texts, wait=wait)
            out.write(f"{start} {start + batch}\n")
            out.flush()
    mem.close()


def _acknowledged(ack: Path) -> set[int]:
    done: set[int] = set()
    for line in ack.read_text(encoding="utf-8").splitlines():
        if line != "ready":
            a, b = map(int, line.split())
            done.update(range(a, b))
    return done


def _wait_ready(ack: Path, proc: Any, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout and proc.is_alive():
        if ack.exists() and "ready" in ack.read_text(encoding="utf-8"):
            return
        time.sleep(0.05)


def check_embedded_file(path: Path, row: Row, expected: set[int], note: str) -> None:
    """``PRAGMA integrity_check``, every acknowledged message there, one order per session."""
    con = sqlite3.connect(path)
    try:
        ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()
    if ok != "ok":
        row.fail(f"{note}: integrity_check {ok}")
    mem = open_memory("embedded", str(path))
    try:
        stored: set[int] = set()
        for s in range(4):
            try:
                session = mem.get(f"s{s}")
            except NotFoundError:
                continue
            msgs = messages_of(mem, f"s{s}")
            if sorted(m.seq for m in msgs) != list(range(len(msgs))) or session.message_count != len(msgs):
                row.fail(f"{note}: session s{s} holds {len(msgs)} messages, count {session.message_count}, "
                         "seq not 0..n-1")
            stored.update(int(m.content.split()[2][1:]) for m in msgs)
        lost = expected - stored
        row.lost += len(lost)
        if lost:
            row.fail(f"{note}: {len(lost)} acknowledged messages missing")
    finally:
        mem.close()


def crash(trials: int = 20, messages: int = 10_000, batch: int = 50, seed: int = 1) -> Row:
    """A child ingests ``messages`` messages in batches (``wait=True`` in even trials,
    ``wait=False`` in odd ones); it is killed with SIGKILL at a random moment; after each kill the
    file is checked (integrity, every acknowledged message, one order per session, a count that
    matches) and the next trial appends to it. At the end, the pending embeddings of killed
    ``wait=False`` children are finished by opening the store and the extraction windows of all
    stored messages are queued."""
    row = Row("crash: SIGKILL during ingest", "embedded")
    rng = random.Random(seed)
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        path, ack = Path(tmp) / "graphmem.db", Path(tmp) / "ack.txt"
        expected: set[int] = set()
        first, mid = 0, 0
        for trial in range(trials):
            wait = trial % 2 == 0
            proc = ctx.Process(target=_ingest_child, args=(str(path), str(ack), wait, first, messages, batch))
            ack.unlink(missing_ok=True)
            proc.start()
            _wait_ready(ack, proc)
            # the whole run is ~2-10 s: kill anywhere in it (a few trials finish first)
            time.sleep(rng.uniform(0.0, 6.0 if wait else 3.0))
            os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            got = _acknowledged(ack) if ack.exists() else set()
            expected |= got
            mid += len(got) < messages
            row.trials += 1
            check_embedded_file(path, row, expected, f"trial {trial} ({'wait' if wait else 'no wait'}, "
                                                     f"{len(got)} acknowledged)")
            first += messages
        mem = open_memory("embedded", str(path))
        try:
            mem.flush(timeout=600)  # opening kicked the embedder; flush waits for it
            if mem.pending():
                row.fail(f"{mem.pending()} messages still without a vector after reopening")
            total = sum(s.message_count for s in mem.list("session", limit=100))
            queued = mem.extraction_status()["queued"] + mem.extraction_status()["queued_partial"]
            if total // mem.settings.extract_every > queued:
                row.fail(f"{total} messages stored but only {queued} extraction windows queued")
            row.notes.append(f"{mid} of {trials} children killed mid-ingest; {len(expected):,} messages "
                             f"acknowledged, {total:,} stored, every one embedded after reopening, {queued} "
                             "extraction windows queued")
        finally:
            mem.close()
    return row


# concurrent processes ---------------------------------------------------------------------------
SOAK_SESSIONS, SOAK_SUBJECTS, SOAK_BATCH = 2, 3, 3


def batch_tag(message: Any) -> str:
    return message.content.split()[0]  # "w3b17 part 0 of a batch ..."


def batch_sizes(messages: list[Any]) -> Counter[str]:
    """How many messages of each writer's batch a read holds."""
    return Counter(batch_tag(m) for m in messages)


def active_versions(mem: Memory, subject: str) -> list[Any]:
    return [m for m in mem.list("memory", status="active", entity=subject, limit=10) if m.subject == subject]


def _soak_writer(backend: str, path: str, writer: int, seconds: float, out: Any, start: Any) -> None:
    mem = open_memory(backend, path)
    rng = random.Random(writer)
    acked, corrected, errors = [], 0, []
    start.wait()
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < seconds:
        n += 1
        tag = f"w{writer}b{n}"
        try:
            if n % 4:
                mem.add_messages(f"shared{n % SOAK_SESSIONS}",
                                 [f"{tag} part {i} of a batch about the release train" for i in range(SOAK_BATCH)],
                                 wait=rng.random() < 0.5)
                acked.append(tag)
            else:
                subject = f"Person{n % SOAK_SUBJECTS}"
                mine = active_versions(mem, subject)
                if mine:
                    try:
                        mem.update(mine[0].id, text=f"{subject} prefers drink {tag}", object=f"drink {tag}")
                        corrected += 1
                    except ValidationError as exc:  # another writer corrected it first
                        if "newest version" not in str(exc):
                            raise
        except GraphMemError as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
        except Exception as exc:  # anything else reaching the caller is a failure of the suite
            errors.append(f"unhandled {type(exc).__name__}: {exc}"[:200])
    mem.close()
    out.put({"writer": writer, "acked": acked, "corrected": corrected, "errors": errors})


def _soak_reader(backend: str, path: str, reader: int, seconds: float, out: Any, start: Any) -> None:
    mem = open_memory(backend, path)
    reads, problems, skew = 0, [], 0
    start.wait()
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        reads += 1
        try:
            session = f"shared{reads % SOAK_SESSIONS}"
            msgs = mem.list("message", session_id=session, limit=10_000)  # one read: the newest 10,000
            seqs = [m.seq for m in msgs]
            if len(set(seqs)) != len(seqs):
                problems.append(f"{session}: a seq seen twice")
            batches = batch_sizes(msgs)
            cut = batch_tag(msgs[-1]) if len(msgs) == 10_000 else None  # the oldest batch may be cut
            torn = [t for t, c in batches.items() if t.startswith("w") and c != SOAK_BATCH and t != cut]
            if torn:
                problems.append(f"{session}: half-written batch {torn[0]}")
            for s in range(SOAK_SUBJECTS):
                current = len(active_versions(mem, f"Person{s}"))
                if current == 0:
                    skew += 1  # the old version retired, the new one not visible yet: a correction half applied
                elif current != 1:
                    problems.append(f"Person{s}: {current} current versions seen")
            mem.recall("release train", k=5)
        except Exception as exc:
            problems.append(f"{type(exc).__name__}: {exc}"[:200])
    mem.close()
    out.put({"reader": reader, "reads": reads, "problems": problems, "skew": skew})


def soak(backend: str, path: str = "", seconds: float = 60.0, writers: int = 4, readers: int = 4) -> Row:
    """``writers`` processes append batches to shared sessions (with and without ``wait``) and
    correct shared memories while ``readers`` processes read them, for ``seconds``. Failures:
    an error reaching a caller ("database is locked" included), a torn batch or a doubled seq
    seen by a reader, more or less than one current version of a memory, an acknowledged batch
    missing afterwards, an order or count that is not 0..n-1."""
    row = Row(f"soak: {writers} writers + {readers} readers, {seconds:.0f} s", backend)
    with tempfile.TemporaryDirectory() as tmp:
        path = path or str(Path(tmp) / "graphmem.db")
        if backend != "embedded":
            wipe_neo4j(backend)
        with open_memory(backend, path) as mem:
            mem.add_messages("shared0", ["the log starts here"])
            for s in range(SOAK_SUBJECTS):
                mem.remember(f"Person{s} prefers drink tea", subject=f"Person{s}", predicate="prefers",
                             object="drink tea")
        ctx = mp.get_context("spawn")
        out, start = ctx.Queue(), ctx.Event()
        procs = [ctx.Process(target=_soak_writer, args=(backend, path, w, seconds, out, start)) for w in range(writers)]
        procs += [ctx.Process(target=_soak_reader, args=(backend, path, r, seconds, out, start)) for r in range(readers)]
        for p in procs:
            p.start()
        time.sleep(1.0)
        start.set()
        reports = [out.get(timeout=seconds + 600) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        acked: set[str] = set()
        for rep in reports:
            for problem in rep.get("errors", []) + rep.get("problems", []):
                row.fail(problem)
            acked.update(rep.get("acked", []))
            row.trials += len(rep.get("acked", [])) + rep.get("corrected", 0) + rep.get("reads", 0)
        with open_memory(backend, path) as mem:
            mem.flush(timeout=600)
            seen: Counter[str] = Counter()
            for s in range(SOAK_SESSIONS):
                msgs = messages_of(mem, f"shared{s}")
                if sorted(m.seq for m in msgs) != list(range(len(msgs))) or mem.get(f"shared{s}").message_count != len(msgs):
                    row.fail(f"shared{s}: order or count broken ({len(msgs)} messages)")
                seen += batch_sizes(msgs)
            lost = [t for t in acked if seen.get(t) != SOAK_BATCH]
            row.lost = len(lost) * SOAK_BATCH
            if lost:
                row.fail(f"{len(lost)} acknowledged batches missing or partial")
            for s in range(SOAK_SUBJECTS):
                current = len(active_versions(mem, f"Person{s}"))
                if current != 1:
                    row.fail(f"Person{s}: {current} current versions at the end")
            corrected = sum(r.get("corrected", 0) for r in reports)
            reads = sum(r.get("reads", 0) for r in reports)
            row.half_applied = sum(r.get("skew", 0) for r in reports)
            if row.half_applied:
                row.fail(f"{row.half_applied} reads saw a memory with no current version")
            row.notes.append(f"{len(acked)} batches acknowledged, {corrected} corrections, {reads} reader rounds; "
                             f"{row.half_applied} reads saw a correction half applied (no current version)")
    return row


# Neo4j restarts ----------------------------------------------------------------------------------
def restart(launcher: Callable[[str], Any], seconds_down: float = 3.0, writes: int = 40) -> Row:
    """A writer appends batches in a loop while the server is stopped and started through the
    launcher: writes block and are retried within ``neo4j_retry_seconds``; none acknowledged is
    lost. Then, with the server down and a 3 s bound, a write fails with a StoreError in time."""
    row = Row("neo4j: stop and start in a writer loop", "neo4j")
    wipe_neo4j()
    acked: list[int] = []
    errors: list[str] = []
    mem = neo4j_memory(retry_seconds=120, settings=Settings(enrichment="manual", extraction="off"))
    mem.add_messages("loop", ["the loop starts"])

    def writer() -> None:
        for i in range(writes):
            try:
                mem.add_messages("loop", [f"restart token r{i} part {j}" for j in range(5)])
                acked.append(i)
            except Exception as exc:  # noqa: BLE001 - reported as a failure of the trial
                errors.append(f"write {i}: {type(exc).__name__}: {exc}"[:200])
            time.sleep(0.25)

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(2.0)
    t_down = time.monotonic()
    launcher("stop")
    time.sleep(seconds_down)
    launcher("start")
    down = time.monotonic() - t_down
    t.join(timeout=600)
    for e in errors:
        row.fail(e)
    row.trials = writes
    msgs = messages_of(mem, "loop")
    stored = {int(m.content.split()[2][1:]) for m in msgs if m.content.startswith("restart")}
    row.lost = 5 * len(set(acked) - stored)
    if row.lost:
        row.fail(f"{len(set(acked) - stored)} acknowledged batches missing")
    if sorted(m.seq for m in msgs) != list(range(len(msgs))):
        row.fail("order broken across the restart")
    mem.close()
    row.notes.append(f"server down {down:.0f} s; {len(acked)} of {writes} writes acknowledged")
    # after the bound: a clear StoreError, in time
    bounded = neo4j_memory(retry_seconds=3, settings=Settings(enrichment="manual", extraction="off"))
    launcher("stop")
    try:
        t0 = time.monotonic()
        bounded.add_messages("loop", ["written while the server is down"])
        row.fail("a write succeeded with the server down")
    except StoreError as exc:
        took = time.monotonic() - t0
        row.trials += 1
        if took > 15:  # the bound, plus the driver's last back-off and the connection timeout
            row.fail(f"StoreError only after {took:.0f} s (bound 3 s)")
        row.notes.append(f"server down, 3 s bound: StoreError after {took:.1f} s ({str(exc)[:60]})")
    except Exception as exc:  # noqa: BLE001
        row.fail(f"server down: {type(exc).__name__} instead of StoreError")
    finally:
        launcher("start")
        bounded.close()
    return row


# tenant isolation at scale -----------------------------------------------------------------------
NAMESPACES = ["acme", "Acme", "ACME", "acme.", "acme-", "acme_", "acme:1", "acme@x", "acme.1", "acm", "acmee", "a",
              "A", "0", "tenant", "tenant.", "tenant-b", "tenant_b", "tenant:b", "tenant@b"]


def seed_tenants(m: Memory) -> dict[str, set[str]]:
    """One session, one turn and one memory per look-alike namespace, all about the same thing."""
    owned: dict[str, set[str]] = {}
    for i, ns in enumerate(NAMESPACES):
        msgs = m.add_messages("chat", [{"speaker": "Alice", "content": f"Alice of tenant {i} drinks green tea daily"}],
                              namespace=ns)
        mem = m.remember(f"Alice of tenant {i} prefers green tea", subject="Alice", predicate="prefers",
                         object="green tea", namespace=ns, source_message_ids=[msgs[0].id])
        owned[ns] = {msgs[0].id, mem.id, "chat"}
    return owned


def isolation_calls(m: Memory, owned: dict[str, set[str]], calls: int, seed: int = 7) -> Row:
    """``calls`` randomised reads over every read method, each as one tenant: a result, id or
    count of another tenant is a failure."""
    row = Row(f"isolation: {len(owned)} look-alike namespaces", "")
    rng = random.Random(seed)
    every = sorted(set().union(*owned.values()) - {"chat"})
    for _ in range(calls):
        ns = rng.choice(sorted(owned))
        mine = owned[ns]
        call = rng.choice(["recall", "context", "list", "get", "history", "neighbourhood", "export", "stats",
                           "entities"])
        row.trials += 1
        if call == "recall":
            ids = {h.item.id for h in m.recall(rng.choice(["Alice green tea", "tenant", "drinks daily"]), k=20,
                                               namespace=ns)}
        elif call == "context":
            ids = {s.item.id for s in m.context("What does Alice drink?", namespace=ns, session_id="chat").items}
        elif call == "list":
            ids = {r.id for r in m.list(rng.choice(["memory", "message", "session", "entity"]), namespace=ns,
                                        limit=100) if r.kind != "entity"}
        elif call == "get":
            other = rng.choice(every)
            try:
                ids = {m.get(other, namespace=ns).id}
            except NotFoundError:
                ids = set()
        elif call == "history":
            h = m.history(next(i for i in mine if i.startswith("mem_")), namespace=ns)
            ids = {h.memory.id, *(x.id for x in h.supersedes), *(x.id for x in h.superseded_by)}
        elif call == "neighbourhood":
            hood = m.neighbourhood("Alice", namespace=ns)
            ids = {r.id for r in hood.memories}
            if any(e.namespace != ns for e in hood.entities):
                row.fail(f"neighbourhood in {ns!r} returned another namespace's entity")
        elif call == "export":
            buf = io.StringIO()
            m.export(buf, namespace=ns, vectors=False)
            rows = [json.loads(line) for line in buf.getvalue().splitlines()[1:]]
            ids = {r["node"]["id"] for r in rows if "node" in r and r["node"]["kind"] in ("memory", "message")}
        elif call == "stats":
            counts = m.stats(namespace=ns)
            if counts.get("memory", 0) != 1 or counts.get("message", 0) != 1:
                row.fail(f"stats of {ns!r}: {counts}")
            ids = set()
        else:
            ents = m.list("entity", namespace=ns, limit=100)
            if any(e.namespace != ns for e in ents):
                row.fail(f"entities of {ns!r} include another namespace's")
            ids = set()
        if not ids <= mine:
            row.fail(f"{call} as {ns!r} returned {sorted(ids - mine)[:2]}")
    return row


def isolation(backend: str, calls: int = 10_000) -> Row:
    with tempfile.TemporaryDirectory() as tmp:
        if backend != "embedded":
            wipe_neo4j(backend)
        with open_memory(backend, str(Path(tmp) / "graphmem.db")) as m:
            row = isolation_calls(m, seed_tenants(m), calls)
    row.backend = backend
    return row


# one entity per name, whatever the number of processes ------------------------------------------
def _name_child(backend: str, path: str, names: list[str], writer: int, start: Any, out: Any) -> None:
    with open_memory(backend, path) as m:
        start.wait()
        try:
            for name in names:
                m.remember(f"{name} joined the rowing club (writer {writer})",
                           entities=[{"name": name, "type": "person"}])
                m.add_entity(name, type="person")
        except GraphMemError as exc:
            out.put(f"writer {writer}: {type(exc).__name__}: {exc}")


def names(backend: str, trials: int = 10, processes: int = 5, per_trial: int = 4) -> Row:
    """``processes`` processes write the same new person names at the same moment, through
    ``remember`` and ``add_entity``: each name must end as one entity, every call must succeed."""
    row = Row(f"names: {processes} processes naming the same new people at once", backend)
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(trials):
            path = str(Path(tmp) / f"names{trial}.db")
            if backend != "embedded":
                wipe_neo4j(backend)
            with open_memory(backend, path) as m:
                m.remember("the namespace exists")
            firsts, lasts = ["Astrid", "Bengt", "Cecilia", "Dag", "Ebba"], ["Lindqvist", "Holm", "Sandberg", "Ek", "Berg"]
            wanted = [f"{first} {last}{trial}" for first, last in zip(firsts, lasts)][:per_trial]
            start, out = ctx.Event(), ctx.Queue()
            procs = [ctx.Process(target=_name_child, args=(backend, path, wanted, w, start, out))
                     for w in range(processes)]
            for proc in procs:
                proc.start()
            start.set()
            for proc in procs:
                proc.join(300)
            row.trials += 1
            while not out.empty():
                row.fail(out.get())
            with open_memory(backend, path) as m:
                counts = Counter(e.name for e in m.list("entity", limit=1000) if e.name in wanted)
            if any(counts[n] != 1 for n in wanted):
                row.fail(f"trial {trial}: entities per name {dict(counts)}")
    row.notes.append(f"{trials * per_trial} names, each written by {processes} processes at once")
    return row


# forget beside a reader of an older snapshot ------------------------------------------------------
def hold_snapshot(path: str, held: Any, release: Any) -> None:
    """A process's read transaction on the store file, held from ``held`` until ``release``."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM nodes").fetchone()
    held.set()
    release.wait(300)
    conn.execute("COMMIT")
    conn.close()


def forget_beside_reader(trials: int = 10, hold: float = 5.0) -> Row:
    """Forget while another process holds a read snapshot from before it for ``hold`` seconds:
    forget must return before the reader ends, say ``unscrubbed``, and the text must leave every
    file of the store once the reader ends (polled for 30 s)."""
    row = Row(f"forget beside a reader holding an older snapshot for {hold:.0f} s", "embedded")
    ctx = mp.get_context("spawn")
    took, gone_after = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(trials):
            path = Path(tmp) / f"forget{trial}.db"
            secret = f"vault code {trial} okapi{31415926 + trial}"
            with Memory(path, settings=Settings(extraction="off")) as m:
                m.remember_many([{"text": f"filler {i} about the garden"} for i in range(50)])
                rec = m.remember(secret)
                held, release = ctx.Event(), ctx.Event()
                reader = ctx.Process(target=hold_snapshot, args=(str(path), held, release))
                reader.start()
                held.wait(120)
                t0 = time.perf_counter()
                threading.Timer(hold, release.set).start()
                m.forget(rec.id)
                took.append(time.perf_counter() - t0)
                row.trials += 1
                if not reader.is_alive() or not m.stats()["unscrubbed"]:
                    row.fail(f"trial {trial}: forget returned after the reader ended, or did not say so")
                reader.join(60)
                t1 = time.perf_counter()
                while m.stats()["unscrubbed"] and time.perf_counter() - t1 < 30:
                    time.sleep(0.1)
                gone_after.append(time.perf_counter() - t1)
                held_by = [f.name for f in Path(tmp).iterdir() if f.name.startswith(path.name)
                           and f"okapi{31415926 + trial}".encode() in f.read_bytes()]
                if held_by:
                    row.fail(f"trial {trial}: the text is still in {held_by}")
    took.sort()
    gone_after.sort()
    row.notes.append(f"forget returned in {took[len(took) // 2]:.1f} s (median), the text gone "
                     f"{gone_after[len(gone_after) // 2]:.1f} s after the reader ended")
    return row


# an import killed part way ------------------------------------------------------------------------
_IMPORT_CHILD = """
import pathlib, sys, time
import graphmem.lifecycle.transfer as transfer
sys.path.insert(0, sys.argv[5])
from benchmarks.faults import open_memory
backend, path, source, marker = sys.argv[1:5]
mem = open_memory(backend, path)
transfer._PUT_BATCH = 200
put, calls = mem.store.put, []
def put_then_wait(*args, **kwargs):
    put(*args, **kwargs)
    calls.append(1)
    if len(calls) == 3:  # three batches written inside the import's transaction: the parent kills us now
        pathlib.Path(marker).write_text("3")
        time.sleep(600)
mem.store.put = put_then_wait
mem.import_(open(source, encoding="utf-8"))
"""


def dump_lines(mem: Memory, n: int, prefix: str = "mem_bulk_") -> list[str]:
    """An export of ``n`` memories in namespace "bulk"."""
    head = {"format": "graphmem-export/1", "namespace": "bulk", "embedder": mem.embedder.name, "dim": mem.embedder.dim}
    rows = [{"node": {"kind": "memory", "id": f"{prefix}{i}", "text": f"Bulk fact number {i}"}} for i in range(n)]
    return [json.dumps(r) for r in [head, *rows]]


def import_killed(backend: str, trials: int = 5, lines: int = 1_000) -> Row:
    """An import of ``lines`` memories SIGKILLed after three of its batches of 200 are written:
    the store must hold what it held before, and take the next import."""
    import subprocess

    row = Row(f"import: SIGKILL after 3 of its {lines // 200} batches", backend)
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(trials):
            path, source, marker = (Path(tmp) / f"{name}{trial}" for name in ("graphmem.db", "dump.jsonl", "written"))
            if backend != "embedded":
                wipe_neo4j(backend)
            with open_memory(backend, str(path)) as m:
                m.import_(dump_lines(m, 2))
                source.write_text("\n".join(dump_lines(m, lines, "mem_late_")) + "\n")
            child = subprocess.Popen([sys.executable, "-c", _IMPORT_CHILD, backend, str(path), str(source), str(marker),
                                      str(ROOT)], env={**os.environ, "GRAPHMEM_EXTRACTION": "off"})
            deadline = time.monotonic() + 300
            while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            row.trials += 1
            if not marker.exists():
                row.fail(f"trial {trial}: the import exited with {child.poll()} before its third batch")
                child.kill()
                continue
            child.send_signal(signal.SIGKILL)
            child.wait(30)
            with open_memory(backend, str(path)) as m:
                held = m.stats(namespace="bulk").get("memory", 0)
                if held != 2:
                    row.fail(f"trial {trial}: {held} memories after the kill, not the 2 from before")
                m.import_(dump_lines(m, 2, "mem_after_"))
                if m.stats(namespace="bulk").get("memory", 0) != 4:
                    row.fail(f"trial {trial}: the next import did not take")
    row.notes.append(f"{trials} imports of {lines} memories killed with 600 of them written in their transaction")
    return row


# the command ------------------------------------------------------------------------------------
def neo4j_launcher(command: str) -> None:
    import subprocess

    done = subprocess.run([str(ROOT / "scripts" / "neo4j-dev"), "--test", command], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "NEO4J_PASSWORD": "graphmem-dev"})
    if done.returncode != 0:
        raise RuntimeError(f"scripts/neo4j-dev --test {command}: {done.stdout}{done.stderr}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = ["crash", "soak", "restart", "isolation", "names", "forget", "import"]
    ap.add_argument("--only", nargs="*", choices=kinds, default=kinds)
    ap.add_argument("--backends", nargs="*", default=["embedded", "neo4j"])
    ap.add_argument("--quick", action="store_true", help="the sizes CI runs")
    ap.add_argument("--soak-seconds", type=float, default=60.0)
    args = ap.parse_args()
    if "neo4j" in args.backends:
        neo4j_launcher("start")
    rows: list[Row] = []
    t0 = time.perf_counter()
    if "crash" in args.only and "embedded" in args.backends:
        rows.append(crash(4, 2_000) if args.quick else crash())
    for backend in args.backends:
        if "soak" in args.only:
            rows.append(soak(backend, seconds=8 if args.quick else args.soak_seconds))
        if "isolation" in args.only:
            rows.append(isolation(backend, 1_000 if args.quick else 10_000))
        if "names" in args.only:
            rows.append(names(backend, 2 if args.quick else 10))
        if "import" in args.only:
            rows.append(import_killed(backend, 1 if args.quick else 5))
    if "forget" in args.only and "embedded" in args.backends:
        rows.append(forget_beside_reader(2 if args.quick else 10))
    if "restart" in args.only and "neo4j" in args.backends:
        rows.append(restart(neo4j_launcher, writes=20 if args.quick else 60))
    print(table(rows))
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
