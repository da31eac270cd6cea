"""What a record leaves behind: a memory written again under its id says only what it says
now, and forgetting takes the entities only the forgotten records named (both backends)."""

from __future__ import annotations

import io

from graphmem.models import EdgeType


def _names(m) -> set[str]:
    return {e.name for e in m.list("entity", limit=1000)}


def test_a_memory_written_again_under_its_id_drops_what_it_no_longer_says(gmem):
    first = gmem.remember("Alice's manager is Bob", id="mem_fixed", subject="Alice", predicate="manager", object="Bob",
                          relations=[{"source": "Alice", "predicate": "manager", "target": "Bob"}])
    again = gmem.remember("Alice's manager is Carol", id=first.id, subject="Alice", predicate="manager", object="Carol",
                          relations=[{"source": "Alice", "predicate": "manager", "target": "Carol"}])
    assert again.id == first.id
    named = {gmem.get(e.target).name for e in gmem.store.edges("default", [first.id], types=[EdgeType.MENTIONS])}
    assert named == {"Alice", "Carol"}
    alice = gmem.neighbourhood("Alice")
    assert "Bob" not in {e.name for e in alice.entities} and "Bob" not in _names(gmem)  # no stale fact, no orphan
    assert [gmem.get(r.target_id).name for r in alice.relations] == ["Carol"]


def test_forgetting_takes_the_entities_only_it_named_and_keeps_shared_ones(gmem):
    keep = gmem.remember("Alice works at Globex", subject="Alice", object="Globex")
    pin = gmem.remember("Alice's locker code is 4471 at Globex", entities=[{"name": "Alice"}, {"name": "4471"},
                                                                            {"name": "Globex"}])
    said = gmem.add_messages("s", [{"speaker": "Zed", "content": "I am Zed and I say nothing else."}])
    assert {"4471", "Zed"} <= _names(gmem)
    assert gmem.forget([pin.id, said[0].id]) == 2
    assert "4471" not in _names(gmem) and "Zed" not in _names(gmem)
    assert {"Alice", "Globex"} <= _names(gmem) and gmem.get(keep.id)
    buf = io.StringIO()
    gmem.export(buf, vectors=False)
    assert "4471" not in buf.getvalue() and "Zed" not in buf.getvalue()
    assert not gmem.store.find_entities("default", ["4471", "zed"])


def test_forgotten_text_is_gone_from_the_embedded_file(tmp_path):
    from graphmem import Memory

    path = tmp_path / "graphmem.db"
    with Memory(path) as m:
        m.add_messages("s", ["Nothing secret here, just chatting about the weather."] * 20)
        said = m.add_messages("s", ["My recovery phrase is zebrafish quokka 99887766."])
        mem = m.remember("The user's recovery phrase is zebrafish quokka 99887766", source_message_ids=[said[0].id])
        m.forget([mem.id, said[0].id])
        files = [p for p in tmp_path.iterdir() if p.name.startswith("graphmem.db")]
        for secret in (b"zebrafish", b"quokka", b"99887766"):
            assert not [p.name for p in files if secret in p.read_bytes()], secret
        assert m.recall("weather", k=1)  # the rest is intact


def test_no_tenant_can_crowd_out_another_with_its_scope_token(gmem):
    from graphmem.store.base import scope_token

    gmem.remember("Alice's favourite tea is sencha")
    forged = scope_token("default", "memory", "active")
    dense = "sencha tea favourite " * 4  # outscores the real memory in BM25
    gmem.remember_many([{"text": f"{dense}{forged} {i}"} for i in range(200)], namespace="attacker")
    hits = gmem.recall("favourite tea sencha", k=3, layers=["memory"])
    assert hits and hits[0].text == "Alice's favourite tea is sencha"
    assert "keyword" in hits[0].matched_by  # found by the full-text index, not only by its vector
