"""Sessions as records of their own and turns kept as sent (the OpenAI chat message shape, tool
calls, content byte for byte), on every backend; ``Memory.cypher``; the ``session`` commands."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.errors import ConfigurationError, ConflictError, NotFoundError, ValidationError
from graphmem.models import Session


def test_a_session_is_created_before_its_first_turn_and_listed_by_owner(gmem):
    s = gmem.create_session("chat-1", user_id="u-ann", agent_id="planner", title="Trip", metadata={"channel": "web"})
    assert (s.id, s.user_id, s.agent_id, s.message_count) == ("chat-1", "u-ann", "planner", 0)
    gmem.create_session("chat-2", user_id="u-bob", agent_id="planner")
    made = gmem.create_session(user_id="u-ann")
    assert made.id.startswith("ses_")
    with pytest.raises(ConflictError, match="chat-1"):
        gmem.create_session("chat-1")
    gmem.add_messages("chat-1", ["I fly to Lisbon on Friday", "Noted: Lisbon, Friday"])
    got = gmem.get_session("chat-1")
    assert (got.user_id, got.title, got.metadata, got.message_count) == ("u-ann", "Trip", {"channel": "web"}, 2)
    assert {x.id for x in gmem.list_sessions(user_id="u-ann")} == {"chat-1", made.id}
    assert [x.id for x in gmem.list_sessions(user_id="u-ann", agent_id="planner")] == ["chat-1"]
    assert {x.id for x in gmem.list_sessions(agent_id="planner")} == {"chat-1", "chat-2"}
    assert len(gmem.list_sessions(limit=1)) == 1
    gmem.remember("Ann likes window seats", id="mem-1")
    with pytest.raises(ConflictError, match="taken by a memory"):
        gmem.create_session("mem-1")
    with pytest.raises(NotFoundError, match="not a session"):
        gmem.get_session("mem-1")


def test_counts_stay_true_after_turns_are_forgotten_and_numbers_are_never_reused(gmem):
    turns = gmem.add_messages("s", ["one", "two", "three"])
    gmem.forget(turns[2].id)
    session = gmem.get_session("s")
    assert session.message_count == 2 and session.next_seq == 3
    [four] = gmem.add_messages("s", ["four"])
    assert four.seq == 3
    assert gmem.get_session("s").message_count == 3
    assert [m.seq for m in sorted(gmem.list("message", session_id="s"), key=lambda m: m.seq)] == [0, 1, 3]


def test_forget_session_takes_its_turns_and_is_idempotent(gmem):
    gmem.add_messages("gone", ["I live in Porto", "Porto is lovely"])
    gmem.add_messages("kept", ["I live in Oslo"])
    assert gmem.forget_session("gone") == 3  # the session and its two turns
    assert gmem.forget_session("gone") == 0
    assert gmem.forget_session("gone", namespace="never-made") == 0
    assert [m.content for m in gmem.list("message")] == ["I live in Oslo"]
    with pytest.raises(NotFoundError):
        gmem.get_session("gone")


def test_empty_turns_are_kept_as_sent_and_answer_nothing(gmem):
    msgs = gmem.add_messages("e", ["", {"role": "assistant", "content": None}, "   ", "I keep bees in Bergen"])
    assert [m.content for m in sorted(gmem.list("message", session_id="e"), key=lambda m: m.seq)] == \
        ["", "", "   ", "I keep bees in Bergen"]  # an empty turn is a turn: its place in the log kept
    assert gmem.get_session("e").message_count == 4
    found = [s.item.id for s in gmem.recall("where does the user keep bees?", k=10, layers=["message"])]
    assert found == [msgs[3].id]  # empty turns are never an answer, even with nothing else to return
    assert "Bergen" in gmem.context("bees", session_id="e").text


def test_openai_shaped_turns_with_tool_calls_are_kept_and_found(gmem):
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'}}
    raw = "  Sunny,\t21 °C \x07\n"
    msgs = gmem.add_messages("t", [
        {"role": "user", "content": "What's the weather in Lisbon?", "name": "ann"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": raw, "tool_call_id": "call_1"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_2", "function": {
            "name": "book_table", "arguments": {"city": "Lisbon", "people": 2}}}]},
    ])
    stored = {m.id: m for m in gmem.list("message", session_id="t")}
    assert stored[msgs[0].id].speaker == "ann"
    assert stored[msgs[1].id].content == "" and stored[msgs[1].id].tool_calls[0].function.name == "get_weather"
    assert stored[msgs[2].id].content == raw and stored[msgs[2].id].tool_call_id == "call_1"  # byte for byte
    assert json.loads(stored[msgs[3].id].tool_calls[0].function.arguments) == {"city": "Lisbon", "people": 2}
    found = [s.item.id for s in gmem.recall("book_table", k=3, layers=["message"])]
    assert msgs[3].id in found
    exported = [json.loads(line) for line in _export(gmem)]
    assert any(r.get("node", {}).get("content") == raw for r in exported)


def _export(gmem) -> list[str]:
    import io

    buf = io.StringIO()
    gmem.export(buf)
    return buf.getvalue().splitlines()


@pytest.mark.parametrize("bad, match", [
    ({"role": "assistant", "content": "\x00\x07"}, "control characters"),
    ({"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}, "name"),
    ({"role": "assistant", "tool_calls": [{"id": "c", "type": "retrieval", "function": {"name": "f"}}]}, "function"),
    ({"role": "tool", "content": "x", "tool_call_id": ""}, "tool_call_id"),
])
def test_bad_turns_are_refused_and_nothing_is_written(gmem, bad, match):
    gmem.add_messages("s", ["before"])
    with pytest.raises(ValidationError, match=match):
        gmem.add_messages("s", ["fine", bad])
    assert [m.content for m in gmem.list("message")] == ["before"]


def test_sessions_written_before_next_seq_number_on_from_their_count():
    old = Session.model_validate({"id": "s", "namespace": "a", "message_count": 7}, context={"stored": True})
    assert old.next_seq == 7


def test_cypher_is_read_only_on_neo4j_and_refused_clearly_on_the_embedded_store(gmem, backend):
    gmem.remember("Ann works at Initech", subject="Ann", predicate="works_at", object="Initech")
    if backend == "embedded":
        with pytest.raises(ConfigurationError, match="Neo4j backend"):
            gmem.cypher("MATCH (n) RETURN n")
        return
    rows = gmem.cypher("MATCH (m:Memory {namespace: $namespace}) RETURN m.text AS text")
    assert rows == [{"text": "Ann works at Initech"}]
    assert gmem.cypher("MATCH (m:Memory {namespace: $namespace}) RETURN count(m) AS n", namespace="other") == [{"n": 0}]
    with pytest.raises(ValidationError, match="read-only"):
        gmem.cypher("CREATE (:Intruder)")
    assert gmem.cypher("MATCH (n:Intruder {namespace: $namespace}) RETURN count(n) AS n") == [{"n": 0}]


def test_session_commands(tmp_path):
    runner, db = CliRunner(), str(tmp_path / "cli.db")

    def run(*args, input=None):
        result = runner.invoke(app, ["--db", db, *args], input=input)
        assert result.exit_code == 0, result.output
        return result.output

    assert run("session", "create", "c1", "--user", "ann", "--agent", "bot", "--title", "Trip").strip() == "c1"
    run("session", "create", "c2", "--user", "bob")
    run("add", "--session", "c1", input="hello there\n")
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "k1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}
    run("add", "--session", "c3", input=json.dumps(call) + "\n")
    assert "get_weather({})" in run("recall", "get_weather", "-k", "1")
    listed = json.loads(run("session", "list", "--user", "ann", "--json"))
    assert [(s["id"], s["message_count"]) for s in listed] == [("c1", 1)]
    assert "c2" in run("session", "list") and "bob" in run("session", "list")
    assert json.loads(run("session", "show", "c1", "--json"))["agent_id"] == "bot"
    assert "deleted 2 record(s)" in run("session", "forget", "c1")
    assert "deleted 0 record(s)" in run("session", "forget", "c1")
    bad = runner.invoke(app, ["--db", db, "session", "create", "c3", "--metadata", "{nope"])
    assert bad.exit_code == 1 and "not JSON" in bad.output
