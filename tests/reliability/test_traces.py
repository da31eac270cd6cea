"""What a record leaves behind: a memory written again under its id says only what it says
now, and forgetting takes the entities only the forgotten records named (both backends); the
text of what was forgotten is gone from the embedded file, a reader of an older snapshot
notwithstanding."""

from __future__ import annotations

import io
import multiprocessing as mp
import re
import time

import pytest

from benchmarks.faults import hold_snapshot
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


@pytest.mark.parametrize("what", ["records", "turn", "session"])
def test_forgotten_text_is_gone_from_the_embedded_file(tmp_path, what):
    from graphmem import Memory

    path = tmp_path / "graphmem.db"
    with Memory(path) as m:
        m.add_messages("s", ["Nothing secret here, just chatting about the weather."] * 20)
        said = m.add_messages("t", ["My recovery phrase is zebrafish quokka 99887766."])
        mem = m.remember("The user's recovery phrase is zebrafish quokka 99887766", source_message_ids=[said[0].id])
        m.forget({"records": [mem.id, said[0].id], "turn": said[0].id, "session": "t"}[what])  # the memory goes along
        files = [p for p in tmp_path.iterdir() if p.name.startswith("graphmem.db")]
        for secret in (b"zebrafish", b"quokka", b"99887766"):
            assert not [p.name for p in files if secret in p.read_bytes()], secret
        assert m.recall("weather", k=1)  # the rest is intact


def test_forget_does_not_wait_on_a_reader_of_an_older_snapshot_and_scrubs_once_it_ends(tmp_path):
    from graphmem import Memory

    path = tmp_path / "graphmem.db"
    files = lambda: [p for p in tmp_path.iterdir() if p.name.startswith("graphmem.db")]  # noqa: E731
    held_by = lambda secret: [p.name for p in files() if secret in p.read_bytes()]  # noqa: E731
    with Memory(path) as m:
        m.remember_many([{"text": f"Filler memory {i} about the garden"} for i in range(30)])
        secret = m.remember("The vault code is okapi 31415926")
        ctx = mp.get_context("spawn")
        held, release = ctx.Event(), ctx.Event()
        reader = ctx.Process(target=hold_snapshot, args=(str(path), held, release))
        reader.start()
        try:
            assert held.wait(120)
            m.forget(secret.id)  # returns with the reader still in its snapshot (it waited 2 s at most)
            assert reader.is_alive() and m.stats()["unscrubbed"] is True  # and says the file still holds it
            assert m.recall("vault code", k=3) == [] or "okapi" not in m.recall("vault code", k=3)[0].text
        finally:
            release.set()
            reader.join(60)
        for _ in range(300):  # the checkpointer scrubs it once the reader lets go (every 2 s)
            if not m.stats()["unscrubbed"]:
                break
            time.sleep(0.2)
        assert m.stats()["unscrubbed"] is False
        assert not held_by(b"31415926") and not held_by(b"okapi")
        again = m.remember("The spare code is tapir 27182818")  # no reader: gone when forget returns
        m.forget(again.id)
        assert not held_by(b"27182818") and m.stats()["unscrubbed"] is False


def test_no_tenant_can_crowd_out_another_with_its_scope_token(gmem):
    from graphmem.store.base import scope_token

    gmem.remember("Alice's favourite tea is sencha")
    forged = scope_token("default", "memory", "active")
    dense = "sencha tea favourite " * 4  # outscores the real memory in BM25
    gmem.remember_many([{"text": f"{dense}{forged} {i}"} for i in range(200)], namespace="attacker")
    hits = gmem.recall("favourite tea sencha", k=3, layers=["memory"])
    assert hits and hits[0].text == "Alice's favourite tea is sencha"
    assert "keyword" in hits[0].matched_by  # found by the full-text index, not only by its vector


def _exported(m) -> str:
    buf = io.StringIO()
    m.export(buf, vectors=False)
    return buf.getvalue()


def test_forgetting_a_turn_takes_the_memories_and_episodes_derived_from_it(gmem):
    said = gmem.add_messages("s", ["My bank PIN is 4711.", "I like green tea.", "Noted."])
    pin = gmem.remember("The user's bank PIN is 4711", source_message_ids=[said[0].id])
    tea = gmem.remember("The user likes green tea", source_message_ids=[said[1].id])
    both = gmem.remember("The user likes tea, green above all", source_message_ids=[said[0].id, said[1].id])
    gmem.add_episode("The user shared a bank PIN 4711 and a liking for green tea", session_id="s",
                     message_ids=[m.id for m in said])
    assert gmem.forget(said[0].id) == 3  # the turn, the memory citing it, the episode repeating it
    assert not gmem.list("episode") and {m.id for m in gmem.list("memory")} == {tea.id, both.id}
    assert gmem.get(both.id).source_message_ids == [said[1].id]  # says nothing only the forgotten turn said
    # the PIN as a value; a timestamp's microseconds or an id's hex may hold the digits ("…044711Z")
    assert not re.search(r"\b4711\b", _exported(gmem))
    assert not [h for h in gmem.recall("bank PIN 4711", k=10) if "4711" in h.text]
    assert pin.id not in {e.source for e in gmem.store.edges("default", [said[1].id], direction="in")}


def test_forgetting_a_turn_can_keep_what_was_derived_from_it(gmem):
    said = gmem.add_messages("s", ["I moved to Lisbon."])
    moved = gmem.remember("The user lives in Lisbon", source_message_ids=[said[0].id])
    assert gmem.forget(said[0].id, derived=False) == 1
    assert gmem.get(moved.id).text == "The user lives in Lisbon"


def test_forgetting_a_session_takes_its_turns_and_episodes(gmem):
    said = gmem.add_messages("secret", ["The vault code is 90210.", "Understood."])
    gmem.add_episode("The user told the vault code 90210", session_id="secret", message_ids=[said[0].id])
    kept = gmem.add_messages("other", ["The weather is mild."])
    assert gmem.forget("secret") == 4
    assert [m.id for m in gmem.list("message")] == [kept[0].id] and not gmem.list("episode")
    assert "90210" not in _exported(gmem)
    gmem.add_messages("secret", ["A new start."])  # the id can begin again, empty
    assert [m.seq for m in gmem.list("message", session_id="secret")] == [0]


def test_forgetting_the_newest_turn_keeps_the_session_appendable_and_its_chain_whole(gmem):
    said = gmem.add_messages("s", ["one", "two", "three", "four"])
    gmem.forget([said[1].id, said[3].id])  # a turn in the middle and the chain's tail
    five = gmem.add_messages("s", ["five"])[0]  # failed before: NEXT from the forgotten tail
    chain, at = [], said[0].id
    while at:
        chain.append(gmem.get(at).content)
        nxt = gmem.store.edges("default", [at], types=[EdgeType.NEXT])
        assert len(nxt) <= 1
        at = nxt[0].target if nxt else None
    assert chain == ["one", "three", "five"] and gmem.get("s").last_message_id == five.id


def test_forgetting_a_correction_removes_the_marks_quoting_it(gmem):
    said = gmem.add_messages("s", ["I live in Munich."])
    old = gmem.remember("The user lives in Munich", source_message_ids=[said[0].id], subject="user",
                        predicate="lives in", object="Munich")
    new = gmem.update(old.id, text="The user lives in Ravensburg now", object="Ravensburg")
    assert gmem.get(said[0].id).superseded_by.memory_id == new.id  # the turn is annotated with the new text
    gmem.forget(new.id)
    assert gmem.get(said[0].id).superseded_by is None
    assert "Ravensburg" not in _exported(gmem)
    back = gmem.get(old.id)  # the version it superseded is current again, and says why
    assert back.status.value == "active" and back.invalid_at is None and new.id in back.status_reason
    assert [s.item.id for s in gmem.recall("where does the user live?", k=3)][:1] == [old.id]


def _versions(gmem, texts):
    first = gmem.remember(texts[0], subject="Ana", predicate="lives_in", object=texts[0].split()[-1],
                          relations=[{"source": "Ana", "predicate": "lives_in", "target": texts[0].split()[-1]}])
    out = [first]
    for text in texts[1:]:
        out.append(gmem.update(out[-1].id, text=text))
    return out


def test_forgetting_a_middle_version_links_its_neighbours_and_reopen_false_keeps_the_old_one_closed(gmem):
    a, b, c = _versions(gmem, ["Ana lives in Lisbon", "Ana lives in Porto", "Ana lives in Faro"])
    gmem.forget(b.id)
    assert [m.id for m in gmem.history(c.id).supersedes] == [a.id]
    assert gmem.get(a.id).status_reason == f"superseded by {c.id}"
    gmem.forget(c.id, reopen=False)
    left = gmem.get(a.id)
    assert left.status.value == "superseded" and left.status_reason == "superseded by a version since forgotten"
    assert gmem.recall("where does Ana live?", k=3) == []


def test_a_reopened_version_states_its_relation_again(gmem):
    a, b = _versions(gmem, ["Ana lives in Lisbon", "Ana lives in Porto"])
    gmem.forget(b.id)
    rels = [(gmem.get(r.target_id).name, r.invalid_at) for r in gmem.neighbourhood("Ana").relations]
    assert rels == [("Lisbon", None)], rels


def test_no_record_points_at_a_forgotten_one_after_random_forgets(gmem):
    import random

    rng = random.Random(7)
    chains = [_versions(gmem, [f"Ana{i} lives in City{i}{v}" for v in range(4)]) for i in range(4)]
    merged = gmem.remember("Ana0 lives in City03.", subject="Ana0", predicate="lives_in", object="City03")
    gmem.maintain("default")  # may fold the duplicate into the current version (MERGED_INTO)
    ids = [m.id for chain in chains for m in chain] + [merged.id]
    for victim in rng.sample(ids, 7):
        if gmem.store.get("default", [victim]):
            gmem.forget(victim, reopen=rng.random() < 0.5)
    nodes = {n.id: n for kind in ("memory", "message", "episode", "entity")
             for n in gmem.store.query("default", kind, limit=10_000)}
    edges = gmem.store.edges("default", list(nodes), types=[EdgeType.SUPERSEDES, EdgeType.MERGED_INTO], direction="both")
    assert all(e.source in nodes and e.target in nodes for e in edges), edges
    for n in nodes.values():
        marked = getattr(n, "superseded_by", None)
        assert marked is None or marked.memory_id in nodes
        assert not any(word.startswith("mem_") and word.strip(":,") not in nodes
                       for word in getattr(n, "status_reason", "").split() if "since forgotten" not in n.status_reason
                       and "current again" not in n.status_reason), n.status_reason


def test_records_left_never_name_a_forgotten_one(gmem):
    said = gmem.add_messages("s", ["My locker code is 4471.", "I swim on Mondays."])
    swim = gmem.remember("The user swims on Mondays", source_message_ids=[said[1].id])
    code = gmem.remember("The user's locker code is 4471", source_message_ids=[said[0].id])
    episode = gmem.add_episode("The user swims on Mondays", session_id="s", message_ids=[said[1].id],
                               memory_ids=[swim.id, code.id])
    assert gmem.get(swim.id).episode_id == episode.id
    gmem.forget(code.id)
    assert gmem.get(episode.id).memory_ids == [swim.id]  # the episode no longer lists it
    gmem.forget(episode.id)
    assert gmem.get(swim.id).episode_id is None  # the memory it produced stays, naming no episode
