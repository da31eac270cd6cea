"""The embedded store's HNSW vector graph (``store/embedded_ann.py``): the same answers as the
exact scan, kept in step with writes, saved beside the file and never trusted blindly."""

from __future__ import annotations

import numpy as np
import pytest

from graphmem.models import MemoryRecord, Status
from graphmem.store import EmbeddedStore
from graphmem.store.embedded_ann import SYNC_BELOW

DIM = 24


def open_store(tmp_path, threshold: int) -> EmbeddedStore:
    s = EmbeddedStore(tmp_path / "s.db", ann_threshold=threshold)
    s.init(embedder="test-embedder", dim=DIM)
    return s


def vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def fill(s: EmbeddedStore, n: int, seed: int = 0, ns: str = "a") -> list[MemoryRecord]:
    recs = [MemoryRecord(namespace=ns, text=f"memory {seed}-{i}") for i in range(n)]
    for start in range(0, n, 1000):
        s.put(ns, recs[start : start + 1000], vectors(n, seed)[start : start + 1000])
    return recs


def exact_ids(s: EmbeddedStore, q: np.ndarray, k: int, statuses=("active",), ns: str = "a") -> list[str]:
    index = s._vindex[(ns, "memory")]
    return [i for i, _ in type(index).search(_exact_view(index), q, k, [0 if x == "active" else 1 for x in statuses])]


def _exact_view(index):
    """The same rows without the graph: what the exact scan answers."""
    view = type(index)(index.dim)
    view.ids, view.pos, view.mat, view.codes, view.size = index.ids, index.pos, index.mat, index.codes, index.size
    return view


def state(s: EmbeddedStore, ns: str = "a"):
    return s._vindex[(ns, "memory")].ann


def test_graph_answers_like_the_exact_scan(tmp_path):
    s = open_store(tmp_path, threshold=1)
    fill(s, 1500)
    queries = vectors(40, seed=9)
    overlap = []
    for q in queries:
        got = s.vector_search("a", "memory", q, 10, [Status.active])
        assert state(s).ann is not None and len(state(s).ann) == 1500
        want = exact_ids(s, q, 10)
        overlap.append(len({i for i, _ in got} & set(want)) / 10)
        sims = [sim for _, sim in got]
        assert sims == sorted(sims, reverse=True)
        assert all(abs(sim - float(s.vectors("a", [i])[i] @ q)) < 1e-5 for i, sim in got[:3])  # exact scores
    assert np.mean(overlap) >= 0.98
    s.close()


def test_new_updated_and_deleted_vectors_are_seen_at_once(tmp_path):
    s = open_store(tmp_path, threshold=1)
    recs = fill(s, 300)
    q = vectors(1, seed=5)[0]
    s.vector_search("a", "memory", q, 5, [Status.active])  # builds the graph
    new = MemoryRecord(namespace="a", text="just written")
    s.put("a", [new], q[None, :])
    assert s.vector_search("a", "memory", q, 1, [Status.active])[0][0] == new.id
    moved = recs[7]
    s.put("a", [moved], (-q)[None, :])  # an old vector replaced: the graph's copy must not answer
    assert s.vector_search("a", "memory", -q, 1, [Status.active])[0][0] == moved.id
    s.delete("a", [new.id])
    assert new.id not in {i for i, _ in s.vector_search("a", "memory", q, 10, [Status.active])}
    s.close()


def test_status_filters_hold_and_rare_statuses_scan_exactly(tmp_path):
    s = open_store(tmp_path, threshold=1)
    recs = fill(s, 400)
    retired = [r.model_copy(update={"status": Status.superseded}) for r in recs[:3]]
    s.put("a", retired, s_vectors(s, retired))
    q = vectors(1, seed=3)[0]
    active = s.vector_search("a", "memory", q, 20, [Status.active])
    assert not {i for i, _ in active} & {r.id for r in retired}
    assert [i for i, _ in s.vector_search("a", "memory", q, 5, [Status.superseded])] == exact_ids(s, q, 5, ("superseded",))
    s.close()


def s_vectors(s: EmbeddedStore, recs) -> np.ndarray:
    got = s.vectors("a", [r.id for r in recs])
    return np.stack([got[r.id] for r in recs])


def test_merges_cover_what_was_written_after_the_build(tmp_path):
    s = open_store(tmp_path, threshold=1)
    fill(s, 200)
    q = vectors(1, seed=1)[0]
    s.vector_search("a", "memory", q, 5, [Status.active])
    fill(s, 400, seed=2)
    assert len(state(s).uncovered) == 400
    s.vector_search("a", "memory", q, 5, [Status.active])  # due: a merge (inline at this size)
    assert not state(s).uncovered and len(state(s).ann) == 600
    s.close()


def test_saved_graph_is_reused_and_checked_against_sqlite(tmp_path):
    s = open_store(tmp_path, threshold=1)
    recs = fill(s, 500)
    q = vectors(1, seed=4)[0]
    s.vector_search("a", "memory", q, 5, [Status.active])
    s.close()
    files = sorted(p.suffix for p in (tmp_path / "s.db.ann").iterdir())
    assert files == [".ids", ".usearch"]
    # the store and its graph files are the owner's alone (they were created 0644)
    for f in [tmp_path / "s.db", *(tmp_path / "s.db.ann").iterdir()]:
        assert f.stat().st_mode & 0o777 == 0o600, f

    plain = open_store(tmp_path, threshold=0)  # a writer that keeps no graph changes 20 vectors
    changed = recs[:20]
    plain.put("a", changed, vectors(20, seed=77))
    plain.close()

    s = open_store(tmp_path, threshold=1)
    got = s.vector_search("a", "memory", vectors(20, seed=77)[0], 1, [Status.active])
    assert got[0][0] == changed[0].id
    assert len(state(s).ann) == 500 and not state(s).uncovered  # 480 reused, 20 re-added
    s.close()


def test_a_corrupt_graph_file_costs_a_rebuild_not_an_answer(tmp_path):
    s = open_store(tmp_path, threshold=1)
    fill(s, 100)
    q = vectors(1, seed=6)[0]
    want = [i for i, _ in s.vector_search("a", "memory", q, 5, [Status.active])]
    s.close()
    for f in (tmp_path / "s.db.ann").iterdir():
        f.write_bytes(b"\x00garbage")
    s = open_store(tmp_path, threshold=1)
    assert [i for i, _ in s.vector_search("a", "memory", q, 5, [Status.active])] == want
    assert len(state(s).ann) == 100
    s.close()


def test_large_kinds_build_in_the_background_and_search_exactly_meanwhile(tmp_path):
    s = open_store(tmp_path, threshold=SYNC_BELOW)
    fill(s, SYNC_BELOW + 100)
    q = vectors(1, seed=8)[0]
    first = s.vector_search("a", "memory", q, 10, [Status.active])
    job = state(s).job
    assert job is not None or state(s).ann is not None
    if job is not None:
        job.join(timeout=120)
    assert state(s).ann is not None and len(state(s).ann) == SYNC_BELOW + 100
    assert [i for i, _ in s.vector_search("a", "memory", q, 10, [Status.active])] == [i for i, _ in first]
    s.close()


def test_deleting_a_namespace_deletes_its_graph(tmp_path):
    s = open_store(tmp_path, threshold=1)
    fill(s, 50, ns="a")
    fill(s, 50, ns="b")
    for ns in ("a", "b"):
        s.vector_search(ns, "memory", vectors(1, seed=2)[0], 3, [Status.active])
    s.close()
    s = open_store(tmp_path, threshold=1)
    assert len(list((tmp_path / "s.db.ann").iterdir())) == 4
    s.delete_namespace("a")
    assert len(list((tmp_path / "s.db.ann").iterdir())) == 2
    s.close()


@pytest.mark.parametrize("threshold", [0, 10_000])
def test_small_kinds_and_a_zero_threshold_never_build(tmp_path, threshold):
    s = open_store(tmp_path, threshold=threshold)
    fill(s, 100)
    s.vector_search("a", "memory", vectors(1, seed=2)[0], 3, [Status.active])
    ann = s._vindex[("a", "memory")].ann
    assert ann is None if threshold == 0 else ann.ann is None
    assert not (tmp_path / "s.db.ann").exists()
    s.close()


def test_a_vector_said_again_is_one_graph_node_and_every_id_is_found(tmp_path):
    s = open_store(tmp_path, threshold=1)
    recs = fill(s, 200)
    base = vectors(200, seed=0)
    again = [MemoryRecord(namespace="a", text=f"said again {i}") for i in range(30)]
    s.put("a", again, np.repeat(base[:3], 10, axis=0))  # three of the vectors, ten more times each
    q = base[1]
    got = s.vector_search("a", "memory", q, 11, [Status.active])
    ann = state(s).ann
    assert len(ann) == 230 and ann.nodes == 200  # every id covered, each distinct vector once
    assert {i for i, _ in got} == {recs[1].id, *(r.id for r in again[10:20])}  # the eleven at cosine 1
    assert all(abs(sim - 1.0) < 1e-5 for _, sim in got)

    s.delete("a", [recs[1].id, *(r.id for r in again[10:19])])  # one holder of the vector is left
    assert s.vector_search("a", "memory", q, 1, [Status.active])[0][0] == again[19].id
    s.delete("a", [again[19].id])
    assert recs[1].id not in {i for i, _ in s.vector_search("a", "memory", q, 5, [Status.active])}
    s.close()

    s = open_store(tmp_path, threshold=1)  # saved with its groups, checked and reused; the deleted left out
    got = s.vector_search("a", "memory", base[0], 11, [Status.active])
    assert {i for i, _ in got} == {recs[0].id, *(r.id for r in again[:10])}
    assert state(s).ann.nodes == 199 and not state(s).uncovered
    s.close()


def test_a_graph_saved_before_vectors_were_shared_is_reused(tmp_path):
    import json

    s = open_store(tmp_path, threshold=1)
    recs = fill(s, 100)
    s.vector_search("a", "memory", vectors(1, seed=3)[0], 3, [Status.active])
    s.close()
    ids_file = next((tmp_path / "s.db.ann").glob("*.ids"))
    meta = json.loads(ids_file.read_text())
    ids_file.write_text(json.dumps({"dim": meta["dim"], "ids": [g[0] if g else None for g in meta["groups"]]}))
    s = open_store(tmp_path, threshold=1)
    q = vectors(100, seed=0)[42]
    assert s.vector_search("a", "memory", q, 1, [Status.active])[0][0] == recs[42].id
    assert len(state(s).ann) == 100 and state(s).ann.nodes == 100 and not state(s).uncovered
    s.close()


def test_a_vector_search_leaves_the_store_free_for_other_reads(tmp_path, monkeypatch):
    """A search holds its index's lock, not the store's: while one layer's search runs, the
    store serves other reads, another index's included (the layers of a recall run on threads)."""
    import threading

    from graphmem.store.embedded_parts import VectorIndex

    s = open_store(tmp_path, threshold=1)
    recs, others = fill(s, 300), fill(s, 50, ns="b")
    q = vectors(1, seed=4)[0]
    s.vector_search("a", "memory", q, 3, [Status.active])  # loaded, the graph built
    entered, release = threading.Event(), threading.Event()
    search = VectorIndex._approximate

    def held(self, *args):
        entered.set()
        assert release.wait(60)
        return search(self, *args)

    monkeypatch.setattr(VectorIndex, "_approximate", held)
    slow = threading.Thread(target=s.vector_search, args=("a", "memory", q, 3, [Status.active]))
    slow.start()
    try:
        assert entered.wait(60)
        read: list = []
        other = threading.Thread(target=lambda: read.append(
            (s.views("a", [recs[7].id]), s.vector_scores("b", "memory", [others[7].id], q),
             s.mentioned_by("a", ["no-entity"], "memory", [Status.active], 5))))
        other.start()
        other.join(30)  # a liveness bound, not a timing: on the store's lock this never ends
        assert read, "a read waited for another thread's vector search"
        assert read[0][0][0].id == recs[7].id and others[7].id in read[0][1]
    finally:
        release.set()
        slow.join(60)
    s.close()


def test_searches_beside_writes_and_deletes_stay_whole(tmp_path):
    """Searches on threads while another writes, retires and deletes (the graph built and
    merged meanwhile): every hit is a row that was written, scored as the exact scan scores
    it, best first; afterwards the answers are the exact scan's."""
    import threading

    s = open_store(tmp_path, threshold=1)
    written = {r.id for r in fill(s, 500)}
    errors: list[BaseException] = []
    done = threading.Event()

    def writer() -> None:
        try:
            for round_ in range(1, 9):
                recs = fill(s, 300, seed=round_)
                written.update(r.id for r in recs)
                s.delete("a", [r.id for r in recs[:200]])
                recs[250].status = Status.superseded  # a status change without a new vector
                s.put("a", [recs[250]])
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            done.set()

    def searcher(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            while not done.is_set():
                q = vectors(1, seed=int(rng.integers(1 << 30)))[0]
                hits = s.vector_search("a", "memory", q, 10, [Status.active])
                assert all(i in written for i, _ in hits)
                sims = [sim for _, sim in hits]
                assert sims == sorted(sims, reverse=True) and all(-1.001 <= x <= 1.001 for x in sims)
                scored = s.vector_scores("a", "memory", [i for i, _ in hits], q)
                assert all(abs(scored[i] - sim) < 1e-4 for i, sim in hits if i in scored)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=writer), *(threading.Thread(target=searcher, args=(n,)) for n in range(3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[0]
    s.settle()
    for seed in range(20, 25):
        q = vectors(1, seed=seed)[0]
        assert [i for i, _ in s.vector_search("a", "memory", q, 10, [Status.active])] == exact_ids(s, q, 10)
    s.close()
