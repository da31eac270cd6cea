"""Users, agents and runs inside one namespace (``user_id``, ``agent_id``, ``run_id``), on both
backends: records take them from what is written and from their source turns; reads never
return another user's records (list: theirs; recall and context: theirs and the shared ones);
forget and export act on one scope alone."""

from __future__ import annotations

import io
import json

import pytest

from graphmem import NotFoundError, ValidationError


def seed(gmem):
    gmem.create_session("ana-chat", user_id="ana", agent_id="support")
    gmem.add_messages("ana-chat", ["I am vegetarian and I live in Porto"])
    bo = gmem.add_messages("bo-chat", [{"content": "I eat fish every day and I live in Oslo", "user_id": "bo"}])
    gmem.remember("Ana is vegetarian", user_id="ana")
    gmem.remember("Bo eats fish every day", source_message_ids=[bo[0].id])  # Bo's by its source turn
    gmem.remember("The office canteen closes at 6pm")  # shared by the namespace
    return bo


def test_records_take_their_scope_and_reads_never_cross_it(gmem):
    seed(gmem)
    assert gmem.get_session("bo-chat").user_id == "bo"  # a new session takes its turns' user
    turns = gmem.list("message", user_id="ana")
    assert [(m.content, m.user_id, m.agent_id) for m in turns] == [("I am vegetarian and I live in Porto", "ana",
                                                                    "support")]  # the session's user and agent
    assert [m.text for m in gmem.list("memory", user_id="bo")] == ["Bo eats fish every day"]
    assert [m.text for m in gmem.list("memory", agent_id="support")] == []
    for user, other in (("ana", "bo"), ("bo", "ana")):
        hits = gmem.recall("what does the user eat and where do they live?", k=20, user_id=user)
        assert hits and all(getattr(h.item, "user_id", None) in (None, user) for h in hits)
        ctx = gmem.context("food, home and the canteen", user_id=user, session_id=f"{user}-chat").text
        assert ("Porto" in ctx) == (user == "ana") and ("Oslo" in ctx) == (user == "bo")
        assert "canteen" in ctx  # the shared fact
    everyone = {getattr(h.item, "user_id", None) for h in gmem.recall("what does the user eat?", k=20)}
    assert {"ana", "bo"} <= everyone  # no scope: the whole namespace
    run = gmem.start_trace("plan Ana's meals", session_id="ana-chat")
    assert (run.user_id, run.agent_id) == ("ana", "support")  # a run takes its session's user and agent
    assert gmem.start_trace("a batch job", run_id="nightly-7").run_id == "nightly-7"
    assert [t.id for t in gmem.list_traces()] and [t.task for t in gmem.list("trace", run_id="nightly-7")] == \
        ["a batch job"]
    with pytest.raises(ValidationError):
        gmem.list("memory", user_id="")


def test_forget_and_export_act_on_one_scope(gmem):
    bo = seed(gmem)
    gmem.start_trace("plan Ana's meals", session_id="ana-chat")
    buf = io.StringIO()
    gmem.export(buf, user_id="ana")
    rows = [json.loads(line) for line in buf.getvalue().splitlines()[1:]]
    kinds = sorted(r["node"]["kind"] for r in rows if "node" in r)
    assert kinds == ["memory", "message", "session", "trace"]
    assert "Oslo" not in buf.getvalue() and "canteen" not in buf.getvalue()
    ids = {r["node"]["id"] for r in rows if "node" in r}
    assert all(r["edge"]["source"] in ids and r["edge"]["target"] in ids for r in rows if "edge" in r)
    with pytest.raises(NotFoundError):  # Bo's turn is not Ana's to forget
        gmem.forget(bo[0].id, user_id="ana")
    assert gmem.forget(user_id="ana") == 4  # her session, turn, memory and run
    assert gmem.list("memory", user_id="ana") == [] and gmem.list("message", user_id="ana") == []
    left = sorted(m.text for m in gmem.list("memory"))
    assert left == ["Bo eats fish every day", "The office canteen closes at 6pm"]
    assert gmem.forget(user_id="ana") == 0  # nothing left of hers
