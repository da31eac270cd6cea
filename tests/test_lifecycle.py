"""The lifecycle on every backend: expiry, demotion and purge by time travel, caps, batch
merges, bi-temporal validity (as_of), dry runs, audit records, explain, forgetting a
namespace, re-embedding with recall working throughout."""

from __future__ import annotations

import io
import re
import threading
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from graphmem import (
    LifecycleSettings, MaintenanceRun, NamespaceNotFoundError, NotFoundError, RecallFilter, Status, ValidationError,
)
from graphmem.models import EdgeType, utcnow


DAY = timedelta(days=1)


def ids(items) -> list[str]:
    return [s.item.id for s in items]


def status(mem, memory_id: str) -> Status:
    return mem.get(memory_id).status


def test_expiry_demotes_then_purges_and_pinned_never_goes(gmem):
    now = utcnow()
    stale = gmem.remember("The user once mentioned a parking spot on level B2", importance=0.05)
    pinned = gmem.remember("The user's emergency contact is Dana, 555-0100", importance=0.05, pinned=True)
    keep = gmem.remember("The user is allergic to peanuts", importance=0.9)
    inferred = gmem.remember("The user may like jazz", importance=0.05, source="inferred")

    (early,) = gmem.maintain("default", now=now + 119 * DAY)  # unused for 119 days: not yet
    assert early.expired == 0 and status(gmem, stale.id) is Status.active

    (run,) = gmem.maintain("default", now=now + 121 * DAY)
    assert {a.id for a in run.actions if a.action == "expire"} == {stale.id, inferred.id}
    archived = gmem.get(stale.id)
    assert archived.status is Status.archived and archived.archived_at == now + 121 * DAY
    assert archived.status_reason.startswith("expired: importance 0.05 < 0.1 and unused for 121 days")
    assert status(gmem, pinned.id) is Status.active and status(gmem, keep.id) is Status.active
    assert stale.id not in ids(gmem.recall("parking spot level B2", k=10, record_access=False))
    assert stale.id in ids(gmem.recall("parking spot level B2", k=10, filter=RecallFilter.AUDIT))
    exported = io.StringIO()
    gmem.export(exported)
    assert stale.id in exported.getvalue()  # archived: still in export and history

    (not_yet,) = gmem.maintain("default", now=now + (121 + 29) * DAY)
    assert not_yet.purged == 0 and status(gmem, stale.id) is Status.archived
    (purge,) = gmem.maintain("default", now=now + (121 + 30) * DAY)
    assert {a.id for a in purge.actions if a.action == "purge"} == {stale.id, inferred.id}
    with pytest.raises(NotFoundError):
        gmem.get(stale.id)
    (later,) = gmem.maintain("default", now=now + 1000 * DAY)
    assert status(gmem, pinned.id) is Status.active and later.expired == 0


def test_a_user_stated_memory_passes_through_archive_before_purge(gmem):
    now = utcnow()
    m = gmem.remember("The user said the garage code is 4411", importance=0.05, source="user_stated")
    (run,) = gmem.maintain("default", now=now + 3000 * DAY)  # long overdue: still only archived
    assert run.purged == 0 and status(gmem, m.id) is Status.archived
    (run,) = gmem.maintain("default", now=now + 3030 * DAY)
    assert run.purged == 1


def test_cap_archives_the_lowest_retention_first_never_pinned(gmem):
    low = gmem.remember("The user glanced at a blue mug", importance=0.1, confidence=0.5)
    pinned = gmem.remember("The user's passport expires in 2031", importance=0.1, confidence=0.5, pinned=True)
    mid = gmem.remember("The user plays chess on Sundays", importance=0.5)
    high = gmem.remember("The user is a nurse at St. Mary's", importance=0.9)
    (run,) = gmem.maintain("default", policy={"max_active_memories": 2})
    assert run.capped == 2 and [a.id for a in run.actions if a.action == "cap"] == [low.id, mid.id]
    assert {status(gmem, m.id) for m in (pinned, high)} == {Status.active}
    assert gmem.get(mid.id).status_reason.startswith("cap: 4 active memories > 2")
    assert run.active_before == 4 and run.active_after == 2


def test_merge_keeps_confidence_provenance_and_uses_in_the_newest(gmem):
    msgs = gmem.add_messages("s1", ["I work at Globex", "Still at Globex, as a designer"])
    old = gmem.remember("Ann works at Globex", subject="Ann", predicate="works_at", object="Globex",
                        source="inferred", importance=0.4, source_message_ids=[msgs[0].id])
    new = gmem.remember("Ann is employed by Globex", subject="Ann", predicate="works at", object="globex",
                        source="observed", importance=0.7, source_message_ids=[msgs[1].id])
    other = gmem.remember("Ann works at Initech on weekends", subject="Ann", predicate="works_at", object="Initech")
    at = utcnow()
    gmem.store.record_access("default", [old.id, old.id, new.id], at)
    (run,) = gmem.maintain("default")
    assert run.merged == 1 and run.actions[0].id == old.id and run.actions[0].target == new.id
    kept, gone = gmem.get(new.id), gmem.get(old.id)
    assert kept.status is Status.active and kept.confidence == 0.7 and kept.importance == 0.7
    assert kept.access_count == 3 and set(kept.source_message_ids) == {msgs[0].id, msgs[1].id}
    assert gone.status is Status.merged and gone.status_reason == f"merged into {new.id}: same fact"
    assert gmem.get(other.id).status is Status.active  # another value of works_at is no duplicate
    merged_into = gmem.store.edges("default", [old.id], types=[EdgeType.MERGED_INTO])
    assert [e.target for e in merged_into] == [new.id]
    derived = {e.target for e in gmem.store.edges("default", [new.id], types=[EdgeType.DERIVED_FROM])}
    assert derived == {msgs[0].id, msgs[1].id}
    assert old.id not in ids(gmem.recall("where does Ann work?", k=10, filter=RecallFilter.AUDIT))
    assert "merged into" in gmem.explain(old.id).rule


def test_keyword_and_paraphrase_duplicates_merge_in_a_batch(gmem):
    a = gmem.remember("The user drinks oolong tea every morning before work")
    b = gmem.remember("Every morning before work the user drinks oolong tea, hot")
    c = gmem.remember("The user's sister lives in Busan")
    (run,) = gmem.maintain("default")
    assert [(x.id, x.target) for x in run.actions if x.action == "merge"] == [(a.id, b.id)]
    assert "keyword jaccard" in run.actions[0].reason
    assert status(gmem, c.id) is Status.active


def test_as_of_answers_what_was_true_then(gmem):
    t2020 = datetime(2020, 1, 1, tzinfo=timezone.utc)
    t2023 = datetime(2023, 6, 1, tzinfo=timezone.utc)
    paris = gmem.remember("Ann lives in Paris", subject="Ann", predicate="lives_in", object="Paris", valid_at=t2020)
    berlin = gmem.update(paris.id, text="Ann lives in Berlin", object="Berlin", valid_at=t2023, reason="moved")
    old = gmem.get(paris.id)
    assert old.status is Status.superseded and old.invalid_at == t2023 and old.expired_at is not None
    assert old.expired_at > t2023  # learned (retired) now, held until 2023: two different times
    entities = [e.target for e in gmem.store.edges("default", [paris.id], types=[EdgeType.MENTIONS])]
    relation = [e for e in gmem.store.edges("default", entities, types=[EdgeType.RELATES_TO])
                if e.props.get("memory_id") == paris.id]
    assert relation and relation[0].props["invalid_at"].startswith("2023-06-01")
    q = "where does Ann live?"
    assert ids(gmem.recall(q, k=5, layers=["memory"], as_of=datetime(2021, 5, 1))) == [paris.id]
    assert ids(gmem.recall(q, k=5, layers=["memory"], as_of=datetime(2024, 1, 1, tzinfo=timezone.utc))) == [berlin.id]
    assert ids(gmem.recall(q, k=5, layers=["memory"])) == [berlin.id]
    assert ids(gmem.recall(q, k=5, layers=["memory"], as_of=datetime(2019, 1, 1))) == []
    why = gmem.explain(paris.id)
    assert why.rule.startswith(f"superseded by {berlin.id}") and "moved" in why.rule


def test_dry_run_changes_nothing_but_leaves_an_audit_record(gmem):
    now = utcnow()
    gmem.remember("A fleeting remark about umbrellas", importance=0.01)
    gmem.remember("The user likes green tea a lot in the morning")
    gmem.remember("In the morning the user likes green tea a lot")

    def snapshot() -> list[str]:
        buf = io.StringIO()
        gmem.export(buf)
        return sorted(line for line in buf.getvalue().splitlines()[1:] if '"maintenance"' not in line)

    before = snapshot()
    (run,) = gmem.maintain("default", dry_run=True, now=now + 200 * DAY, policy={"max_active_memories": 1})
    assert run.dry_run and run.merged == 1 and run.expired == 1 and run.capped == 0
    assert snapshot() == before
    history = gmem.maintenance_history()
    assert [r.id for r in history] == [run.id] and history[0].dry_run


def test_audit_records_are_complete_and_readable(gmem):
    now = utcnow()
    m = gmem.remember("An unimportant aside", importance=0.02)
    (first,) = gmem.maintain("default", now=now + 130 * DAY)
    (second,) = gmem.maintain("default", now=now + 170 * DAY)
    runs = gmem.maintenance_history()
    assert [r.id for r in runs] == [second.id, first.id] and all(isinstance(r, MaintenanceRun) for r in runs)
    stored = runs[1]
    assert stored.expired == 1 and stored.actions[0].id == m.id and "unused for 130 days" in stored.actions[0].reason
    assert stored.policy["expire_unused_days"] == 120 and stored.now == now + 130 * DAY
    assert runs[0].purged == 1 and runs[0].actions[0].action == "purge"
    assert stored.seconds >= 0 and stored.active_before == 1 and stored.active_after == 0


def test_explain_names_the_rule_the_numbers_and_the_dates(gmem):
    now = utcnow()
    low = gmem.remember("Mentioned a bus route once", importance=0.05)
    why = gmem.explain(low.id, now=now)
    assert why.status == "active" and "expires on" in why.rule and "importance 0.05 < 0.1" in why.rule
    assert why.dates["expires_at"].date() == (low.created_at + 120 * DAY).date()
    assert "due to expire" in gmem.explain(low.id, now=now + 125 * DAY).rule
    assert "pinned" in gmem.explain(gmem.remember("Pinned fact", pinned=True).id).rule
    assert "not an expiry candidate" in gmem.explain(gmem.remember("Important fact", importance=0.8).id).rule
    gmem.maintain("default", now=now + 125 * DAY)
    archived = gmem.explain(low.id, now=now + 125 * DAY)
    assert archived.status == "archived" and archived.dates["purge_at"] == now + 155 * DAY
    assert "purged" in " ".join(archived.details)
    with pytest.raises(NotFoundError, match="mem_nope"):
        gmem.explain("mem_nope")
    with pytest.raises(NotFoundError, match="nobody"):
        gmem.explain(low.id, namespace="nobody")


def test_bad_lifecycle_input_is_refused_and_changes_nothing(gmem):
    m = gmem.remember("A note", importance=0.01)
    with pytest.raises(ValidationError, match="-1"):
        gmem.maintain("default", policy={"max_active_memories": -1})
    with pytest.raises(ValidationError, match="expire_unused_days"):
        gmem.maintain("default", policy={"expire_unused_days": "soon"})
    with pytest.raises(NamespaceNotFoundError, match="ghost"):
        gmem.maintain("ghost")
    with pytest.raises(ValidationError, match="purge_after_days.*-3"):
        gmem.maintain("default", policy={"purge_after_days": -3})
    assert gmem.maintain("default", policy=LifecycleSettings(max_active_memories=5), dry_run=True)[0].dry_run
    assert len(gmem.maintenance_history()) == 1 and status(gmem, m.id) is Status.active


def test_reads_of_a_namespace_never_written_find_nothing(gmem):
    gmem.remember("Ana prefers tea", subject="Ana", namespace="other")
    ns = {"namespace": "brand-new"}
    assert gmem.recall("tea", **ns) == [] and gmem.list("memory", **ns) == [] and gmem.list_sessions(**ns) == []
    first = gmem.context("what does Ana drink?", session_id="first-chat", **ns)  # an agent's first call
    assert first.items == [] and first.text == ""
    gmem.set_soul("You help Ana.", namespace="soul-only")
    assert gmem.context("tea", session_id="s", namespace="soul-only").text.startswith("## Identity\nYou help Ana.")
    zeros = ["memory", "message", "episode", "entity", "session", "procedure", "trace", "edges"]
    assert {k: v for k, v in gmem.stats(**ns).items() if k in zeros or ":" in k} == dict.fromkeys(zeros, 0)
    assert gmem.find_entities("Ana", **ns) == [] and gmem.suggest_merges(**ns) == []
    assert gmem.list_traces(**ns) == [] and gmem.similar_traces("tea", **ns) == [] and gmem.tool_stats(**ns) == []
    assert gmem.maintenance_history(**ns) == [] and gmem.extract(**ns) == [] and gmem.retry_failed(**ns) == 0
    assert gmem.extraction_status(**ns)["queued"] == 0
    assert gmem.forget_session("s", **ns) == 0 and gmem.forget_namespace("brand-new") == 0
    for call in (lambda: gmem.get("mem_x", **ns), lambda: gmem.get_entity("Ana", **ns), lambda: gmem.forget("mem_x", **ns)):
        with pytest.raises(NotFoundError) as err:  # an id is missing, not the namespace
            call()
        assert type(err.value) is NotFoundError
    with pytest.raises(NamespaceNotFoundError, match="brand-new"):  # an admin run on a typo is refused
        gmem.maintain("brand-new")
    assert "brand-new" not in gmem.namespaces()  # reading made nothing


def test_forget_namespace_leaves_nothing_behind(gmem, backend):
    gmem.add_messages("s1", ["Bea likes sailing near Kiel"], namespace="t1")
    gmem.remember("Bea likes sailing", subject="Bea", predicate="likes", object="sailing", namespace="t1")
    gmem.maintain("t1")
    gmem.set_soul("be brief", namespace="t1")
    other = gmem.remember("Cy likes rowing", namespace="t2")
    assert gmem.forget_namespace("t1") > 0
    assert "t1" not in gmem.namespaces()
    assert gmem.recall("sailing", namespace="t1") == []
    assert gmem.store.count("t1") == {"edges": 0}
    assert gmem.get(other.id, namespace="t2").text == "Cy likes rowing"
    if backend != "embedded":
        from .test_neo4j import run

        left = run(backend, "MATCH (n) WHERE n.namespace = 't1' RETURN count(n) AS n").records[0]["n"]
        assert left == 0
    else:
        conn = gmem.store.conn
        for table in ("nodes", "edges", "names", "meta"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table} WHERE namespace = 't1'").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM fts WHERE body LIKE '%sail%'").fetchone()[0] == 0


class WordsEmbedder:
    """A second, different embedder for re-embedding tests: bag of words hashed into 64
    dimensions. Optionally holds its first call until released, to look inside a re-embedding."""

    name = "test-words-64"
    dim = 64

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate
        self.calls = 0

    def embed(self, texts, *, query: bool = False) -> np.ndarray:
        self.calls += 1
        if self.gate is not None and self.calls == 1:  # the first batch waits for the test
            self.gate.wait(60)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, sum(map(ord, w)) % self.dim] += 1.0
            out[i, 0] += 0.01
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_reembedding_keeps_recall_working_during_and_after(gmem):
    first = gmem.remember("The user keeps bees in the garden")
    gmem.add_messages("s1", ["Honey harvest is in August", "We sold forty jars of honey"])
    gate = threading.Event()
    target = WordsEmbedder(gate)
    gmem.reembed(target, background=True)
    assert gmem.store.reembed_target() == (target.name, target.dim)
    # mid-way (the first batch is held): the old model still serves recall, and writes still land
    assert first.id in ids(gmem.recall("who keeps bees?", k=3, record_access=False))
    during = gmem.remember("The user's hives face south")
    assert gmem.embedder.dim == 512
    gate.set()
    gmem.flush_reembed(timeout=120)
    assert gmem.embedder.name == target.name and gmem.store.bound_embedder() == (target.name, 64)
    assert gmem.store.reembed_target() is None
    found = ids(gmem.recall("hives face south", k=3, layers=["memory"], record_access=False))
    assert during.id == found[0]
    assert first.id in ids(gmem.recall("keeps bees garden", k=3, layers=["memory"], record_access=False))
    vecs = gmem.store.vectors("default", [first.id, during.id])
    assert {v.shape[0] for v in vecs.values()} == {64}


def test_reopening_with_another_configured_embedder_keeps_recall_and_maintain_reembeds(tmp_path):
    from graphmem import Memory

    with Memory(tmp_path / "m.db") as mem:
        m = mem.remember("The user collects vinyl records of 70s funk")
    with Memory(tmp_path / "m.db", embedder=WordsEmbedder()) as mem:
        # the store still holds USE vectors: recall uses USE until the re-embedding
        assert mem.embedder.name == "use-multilingual-v3"
        assert ids(mem.recall("vinyl funk records", k=1, record_access=False)) == [m.id]
        (run,) = mem.maintain("default")
        assert run.reembedded >= 1 and mem.embedder.name == "test-words-64"
        assert mem.maintenance_history()[0].reembedded == run.reembedded
        assert ids(mem.recall("vinyl funk records", k=1, record_access=False)) == [m.id]
    with Memory(tmp_path / "m.db", embedder=WordsEmbedder()) as mem:
        assert mem.store.bound_embedder() == ("test-words-64", 64)


def test_duplicate_groups_never_join_two_values_or_two_subjects():
    from graphmem.lifecycle.duplicates import find_groups
    from graphmem.models import MemoryRecord

    def m(text, s=None, p=None, o=None):
        return MemoryRecord(namespace="a", text=text, subject=s, predicate=p, object=o)

    memories = [
        m("Ann lives in Paris", "Ann", "lives_in", "Paris"),
        m("Ann's home is Paris", "ann", "lives in", "paris"),          # same fact, reworded
        m("Ann lives in Rome", "Ann", "lives_in", "Rome"),              # another value: never joined
        m("Bob drinks oolong tea every single morning", "Bob"),
        m("Every single morning Bob drinks oolong tea", "Bob"),         # keyword duplicate
        m("Carl drinks oolong tea every single morning", "Carl"),       # same words, another subject
        m("Drinks oolong tea every single morning, strong"),            # no subject: may join Bob's
    ]
    base = np.eye(8, dtype=np.float32)
    vectors = np.stack([base[0], base[0], base[0], base[1], base[1], base[1], base[1]])
    groups = sorted(sorted(g) for g, _ in find_groups(memories, vectors, 0.9))
    assert groups == [[0, 1], [3, 4, 6]]  # strongest pairs first; Carl's never joins Bob's group


def test_a_merge_survivor_is_judged_as_merged_by_the_later_rules_of_the_same_run(gmem):
    gmem.remember("Dee owns a red kayak", subject="Dee", predicate="owns", object="red kayak", importance=0.1)
    survivor = gmem.remember("Dee has a red kayak", subject="Dee", predicate="owns", object="red kayak",
                             importance=0.1)
    gmem.remember("Dee is a paramedic", importance=0.9)
    gmem.remember("Dee lives in Bergen", importance=0.8)
    (run,) = gmem.maintain("default", policy={"max_active_memories": 2})
    assert run.merged == 1 and run.capped == 1 and [a.id for a in run.actions if a.action == "cap"] == [survivor.id]
    assert status(gmem, survivor.id) is Status.archived
    assert len(gmem.list("memory", status="active")) == run.active_after == 2


def test_archiving_by_hand_is_dated_and_purged_like_any_archive(gmem):
    m = gmem.remember("An old office door code", importance=0.5)
    archived = gmem.update(m.id, status="archived")
    assert archived.archived_at is not None and archived.status_reason == "archived by hand"
    assert "archived by hand" in gmem.explain(m.id).rule
    (run,) = gmem.maintain("default", now=archived.archived_at + 31 * DAY)
    assert [a.id for a in run.actions if a.action == "purge"] == [m.id]
    restored = gmem.remember("Another code", importance=0.5)
    gmem.update(restored.id, status="archived")
    back = gmem.update(restored.id, status="active")
    assert back.archived_at is None and back.status_reason == ""


def test_an_interrupted_reembedding_resumes_where_it_stopped(tmp_path):
    from graphmem import Memory

    target = WordsEmbedder()
    with Memory(tmp_path / "r.db") as mem:
        kept = mem.remember("The user restores old bicycles")
        mem.store.begin_reembed(embedder=target.name, dim=target.dim)  # a run that stopped before any batch
        mem.remember("The user rides to work on Tuesdays")  # written meanwhile: queued as well
        assert len(mem.store.reembed_pending(100)) >= 2
    with Memory(tmp_path / "r.db", embedder=target) as mem:
        assert mem.store.reembed_target() == (target.name, target.dim)
        (run,) = mem.maintain("default")
        assert run.reembedded >= 2 and mem.store.bound_embedder() == (target.name, 64)
        assert ids(mem.recall("restores old bicycles", k=1, layers=["memory"], record_access=False)) == [kept.id]
