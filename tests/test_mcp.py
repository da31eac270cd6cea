"""``graphmem mcp`` through the official SDK's own client, as an MCP host runs it: over stdio
(the client starts graphmem) and over streamable HTTP (a live server process), with API keys
binding each HTTP caller to its namespace."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from graphmem import Memory

from .conftest import SURFACE_BACKENDS, NEO4J_TEST_PASSWORD, NEO4J_TEST_URI, wipe_neo4j, without_ids
from .test_serve import ServerProcess, _free_port, cli

TOOLS = {"remember", "recall", "context", "add_messages", "forget", "update", "history", "search_entities",
         "get_procedure", "record_outcome", "start_trace", "add_trace_step", "complete_trace", "similar_traces",
         "stats"}


def env_for(tmp_path, backend: str = "embedded") -> dict:
    env = {**os.environ, "GRAPHMEM_EXTRACTION": "manual", "GRAPHMEM_PATH": str(tmp_path / "mcp.db"),
           "GRAPHMEM_KEYS_PATH": str(tmp_path / "keys.db")}
    if backend == "neo4j":
        wipe_neo4j()  # other tests bind the database to their 8-d test embedder
        env.update(GRAPHMEM_BACKEND="neo4j", GRAPHMEM_NEO4J_URI=NEO4J_TEST_URI, GRAPHMEM_NEO4J_PASSWORD=NEO4J_TEST_PASSWORD)
    return env


def result(r) -> object:
    """A tool result's value (structured content, else its text as JSON or plain text)."""
    assert not r.is_error, r.content
    if r.structured_content is not None:
        data = r.structured_content
        return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data
    text = r.content[0].text
    try:
        return json.loads(text)
    except ValueError:
        return text


async def session_walk(client: Client, ns: str) -> None:
    """Every tool and both resources, as an agent would use them."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert TOOLS <= set(tools)
    for t in tools.values():
        assert t.description and len(t.description) > 40 and t.input_schema["type"] == "object"
        assert "namespace" not in t.input_schema.get("properties", {})  # never a tool argument
    added = result(await client.call_tool("add_messages", {"session_id": "s1", "messages": [
        {"role": "user", "content": "I'm Ana. I moved to Lisbon and I prefer green tea.", "speaker": "Ana"},
        {"role": "assistant", "content": "Noted!"}]}))
    assert len(added["message_ids"]) == 2
    tea = result(await client.call_tool("remember", {"text": "Ana prefers green tea", "subject": "Ana",
                                                     "predicate": "prefers_drink", "object": "green tea"}))
    hits = result(await client.call_tool("recall", {"query": "what does Ana drink?", "k": 3}))
    assert hits[0]["id"] == tea["id"] and {"relevance", "importance", "recency"} <= set(hits[0]["factors"])
    oolong = result(await client.call_tool("update", {"memory_id": tea["id"], "text": "Ana prefers oolong",
                                                      "reason": "she changed her mind"}))
    assert (oolong["subject"], oolong["object"]) == ("Ana", "oolong")  # the new text's value, not the stale one
    hist = result(await client.call_tool("history", {"memory_id": oolong["id"]}))
    assert hist["supersedes"][0]["id"] == tea["id"]
    block = result(await client.call_tool("context", {"query": "Ana's drinks", "budget": 300}))
    assert "Ana prefers oolong" in block and "Ana prefers green tea" not in block  # the old value left
    assert any(e["name"] == "Ana" for e in result(await client.call_tool("search_entities", {"query": "Ana"})))
    proc = result(await client.call_tool("get_procedure", {"task": "brew oolong"}))
    assert [s["text"] for s in proc["steps"]] == ["heat water to 90C", "steep for three minutes"]
    failed = result(await client.call_tool("record_outcome", {"procedure_id": proc["id"], "success": False,
                                                              "failed_step": "steep"}))
    assert failed["failure_count"] == 1 and failed["success_count"] == 0
    run = result(await client.call_tool("start_trace", {"task": "brew a pot of oolong"}))
    step = result(await client.call_tool("add_trace_step", {"trace_id": run["id"], "action": "heat water",
                                                            "tool": "kettle", "tool_arguments": {"celsius": 90},
                                                            "duration_ms": 95}))
    assert step["order"] == 1
    done = result(await client.call_tool("complete_trace", {"trace_id": run["id"], "success": True,
                                                            "outcome": "tea served"}))
    assert done["success"] is True and done["step_count"] == 1
    similar = result(await client.call_tool("similar_traces", {"task": "oolong pot"}))
    assert similar[0]["id"] == run["id"] and similar[0]["outcome"] == "tea served"
    assert result(await client.call_tool("stats", {}))["namespace"] == ns
    assert (await client.read_resource(f"graphmem://{ns}/soul")).contents[0].text == "You are Ana's tea assistant."
    summary = await client.read_resource(f"graphmem://{ns}/sessions/s1/summary")
    assert summary.contents[0].text == ""  # no window extracted yet
    assert result(await client.call_tool("forget", {"memory_id": oolong["id"]}))["deleted"] >= 1
    gone = await client.call_tool("history", {"memory_id": oolong["id"]})
    assert gone.is_error and "no record" in gone.content[0].text and "Traceback" not in gone.content[0].text


def seed(env: dict, ns: str) -> None:
    settings_env = {k[9:].lower(): v for k, v in env.items() if k.startswith("GRAPHMEM_") and "__" not in k}
    from graphmem.settings import Settings

    with Memory(settings=Settings(**{k: v for k, v in settings_env.items() if k in Settings.model_fields})) as mem:
        mem.set_soul("You are Ana's tea assistant.", namespace=ns)
        mem.add_procedure("brew oolong", ["heat water to 90C", "steep for three minutes"], namespace=ns)


def test_stdio_server_with_the_sdk_client(tmp_path):
    env = env_for(tmp_path)
    seed(env, "ana")

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "graphmem.cli", "-n", "ana", "mcp"], env=env)
        async with Client(params, read_timeout_seconds=120) as client:
            await session_walk(client, "ana")
            with pytest.raises(Exception):  # another namespace's resource is not this connection's
                await client.read_resource("graphmem://other/soul")

    asyncio.run(run())


class HttpMcp(ServerProcess):
    def __init__(self, env: dict, tmp_path) -> None:
        super().__init__(env, tmp_path, ["-n", "open-ns", "mcp", "-t", "http"], "/", "mcp")
        self.url = self.base + "/mcp"

    def client(self, key: str | None = None) -> Client:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=120)
        return Client(streamable_http_client(self.url, http_client=http), read_timeout_seconds=120)


def test_streamable_http_server_closes_its_store_on_sigterm(tmp_path):
    env = env_for(tmp_path)
    seed(env, "open-ns")
    server = HttpMcp(env, tmp_path)

    async def write() -> None:
        async with server.client() as client:
            result(await client.call_tool("remember", {"text": "Ana keeps her tea in the blue tin"}))

    asyncio.run(write())
    assert (tmp_path / "mcp.db-wal").exists()  # open: the write sits in the WAL
    log = server.stop()  # SIGTERM
    assert server.proc.returncode == 128 + signal.SIGTERM, log  # through the store's close, not killed by it
    assert not (tmp_path / "mcp.db-wal").exists(), log  # closed: the WAL folded into the file
    with Memory(tmp_path / "mcp.db") as mem:
        assert [m.text for m in mem.list("memory", namespace="open-ns")] == ["Ana keeps her tea in the blue tin"]


@pytest.mark.parametrize("backend", SURFACE_BACKENDS)
def test_streamable_http_server_binds_each_key_to_its_namespace(backend, tmp_path, request):
    if backend == "neo4j":
        request.getfixturevalue("neo4j_server")
    env = env_for(tmp_path, backend)
    a_ns, b_ns = f"mcp-a-{tmp_path.name[-8:]}", f"mcp-b-{tmp_path.name[-8:]}"
    seed(env, "open-ns")
    seed(env, a_ns)
    server = HttpMcp(env, tmp_path)
    try:
        async def open_mode() -> None:
            async with server.client() as client:  # no keys yet: loopback, the configured namespace
                await session_walk(client, "open-ns")

        asyncio.run(open_mode())
        a_key = cli(env, "keys", "create", "--namespace", a_ns).stdout.split()[-1]
        ro_key = cli(env, "keys", "create", "--namespace", a_ns, "--read-only").stdout.split()[-1]
        b_key = cli(env, "keys", "create", "--namespace", b_ns).stdout.split()[-1]
        new_key = cli(env, "keys", "create", "--namespace", f"mcp-new-{tmp_path.name[-8:]}").stdout.split()[-1]

        async def keyed() -> None:
            async with server.client(new_key) as new:  # a tenant nothing was written to: its first calls
                assert result(await new.call_tool("context", {"query": "what do I like?", "session_id": "s1"})) == ""
                assert result(await new.call_tool("recall", {"query": "tea"})) == []
                assert result(await new.call_tool("search_entities", {"query": "Ana"})) == []
                assert result(await new.call_tool("stats", {}))["memory"] == 0
            async with server.client(b_key) as b:
                secret = result(await b.call_tool("remember", {"text": "B's vault code is 7431", "subject": "vault"}))
                b_steps = result(await b.call_tool("add_messages", {"session_id": "bs", "messages": [
                    {"content": "the vault code is 7431"}]}))
                b_run = result(await b.call_tool("start_trace", {"task": "open the vault with code 7431"}))
            async with server.client(a_key) as a:
                await session_walk(a, a_ns)
                probes = {"recall": {"query": "vault code"}, "context": {"query": "vault code", "session_id": "bs"},
                          "history": {"memory_id": secret["id"]}, "forget": {"memory_id": b_steps["message_ids"][0]},
                          "update": {"memory_id": secret["id"], "text": "A was here"},
                          "search_entities": {"query": "vault"}, "get_procedure": {"procedure_id": secret["id"]},
                          "record_outcome": {"procedure_id": secret["id"], "success": True},
                          "start_trace": {"task": "open the vault", "session_id": "bs"},
                          "add_trace_step": {"trace_id": b_run["id"], "action": "peek"},
                          "complete_trace": {"trace_id": b_run["id"], "success": True},
                          "similar_traces": {"task": "open the vault with code"},
                          "stats": {}, "remember": {"text": "A's own note"},
                          "add_messages": {"session_id": "bs", "messages": [{"content": "A's turn"}]}}
                assert set(probes) == TOOLS  # every tool, with B's ids and words
                for name, args in probes.items():
                    r = await a.call_tool(name, args)
                    assert "7431" not in without_ids(json.dumps([c.model_dump() for c in r.content])), name
                with pytest.raises(Exception):
                    await a.read_resource(f"graphmem://{b_ns}/soul")
            async with server.client(ro_key) as ro:
                assert result(await ro.call_tool("stats", {}))["namespace"] == a_ns
                hits = await ro.call_tool("recall", {"query": "Ana prefers oolong", "k": 1, "layers": ["memory"]})
                mine = result(hits)[0]["id"]
                used = result(await ro.call_tool("history", {"memory_id": mine}))["memory"]["access_count"]
                await ro.call_tool("recall", {"query": "oolong tea"})
                await ro.call_tool("context", {"query": "oolong tea"})
                assert result(await ro.call_tool("history", {"memory_id": mine}))["memory"]["access_count"] == used
                r = await ro.call_tool("remember", {"text": "a read-only key writes nothing"})
                assert r.is_error and "read-only" in r.content[0].text
            async with server.client() as anon:
                r = await anon.call_tool("stats", {})
                assert r.is_error and "API key" in r.content[0].text
            async with server.client(b_key) as b:  # B's memory and turn survived A's forget and update
                hits = result(await b.call_tool("recall", {"query": "vault code", "k": 5}))
                assert {secret["id"], b_steps["message_ids"][0]} <= {h["id"] for h in hits}
                assert result(await b.call_tool("history", {"memory_id": secret["id"]}))["memory"]["text"] == \
                    "B's vault code is 7431"

        asyncio.run(keyed())
    finally:
        log = server.stop()
    assert "Traceback" not in log, log


def test_mcp_http_refuses_a_public_address_without_keys(tmp_path):
    done = cli(env_for(tmp_path), "mcp", "-t", "http", "--host", "0.0.0.0", "--port", str(_free_port()), check=False)
    assert done.returncode == 1 and "without API keys" in done.stderr


def test_a_keyed_http_server_refuses_a_connection_without_a_key_before_the_handshake(tmp_path):
    env = env_for(tmp_path)
    key = cli(env, "keys", "create", "--namespace", "keyed").stdout.split()[-1]
    ro = cli(env, "keys", "create", "--namespace", "keyed", "--read-only").stdout.split()[-1]
    server = HttpMcp(env, tmp_path)
    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        for auth in ({}, {"Authorization": "Bearer gm_nope_nope"}, {"X-API-Key": key}):
            r = httpx2.post(server.url, json=hello, headers=headers | auth, timeout=30)
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer"), (auth, r.text)

        async def connect() -> None:
            with pytest.raises(Exception):  # the client sees a refused connection, not a healthy server
                async with server.client() as anon:
                    await anon.list_tools()
            async with server.client(key) as client:
                assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
                assert result(await client.call_tool("stats", {}))["namespace"] == "keyed"
                assert result(await client.call_tool("remember", {"text": "Keyed note"}))["id"]
                mine = result(await client.call_tool("remember", {"text": "Ana's locker is 12", "user_id": "ana"}))
                assert mine["id"] in {h["id"] for h in result(await client.call_tool(
                    "recall", {"query": "locker", "user_id": "ana"}))}
                assert mine["id"] not in {h["id"] for h in result(await client.call_tool(
                    "recall", {"query": "locker", "user_id": "bo"}))}  # never another user's
                assert "locker" not in result(await client.call_tool("context", {"query": "locker", "user_id": "bo"}))
            async with server.client(ro) as reader:
                r = await reader.call_tool("remember", {"text": "a read-only key writes nothing"})
                assert r.is_error and "read-only" in r.content[0].text

        asyncio.run(connect())
    finally:
        log = server.stop()
    assert "Traceback" not in log, log
