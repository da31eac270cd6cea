"""Tenant isolation over every read method: namespaces with look-alike names, randomised
calls, and no result, id or count from another tenant (both backends; a reduced run)."""

from __future__ import annotations

import io
import json
import random

import pytest

from graphmem.errors import NotFoundError

from ..conftest import make_memory

NAMESPACES = ["acme", "Acme", "ACME", "acme.", "acme-", "acme_", "acme:1", "acme@x", "acme.1", "acm", "acmee", "a",
              "A", "0", "tenant", "tenant.", "tenant-b", "tenant_b", "tenant:b", "tenant@b"]
CALLS = 400


@pytest.fixture
def tenants(backend, tmp_path):
    m = make_memory(backend, tmp_path)
    owned: dict[str, set[str]] = {}
    for i, ns in enumerate(NAMESPACES):
        msgs = m.add_messages("chat", [{"speaker": "Alice", "content": f"Alice of tenant {i} drinks green tea daily"}],
                              namespace=ns)
        mem = m.remember(f"Alice of tenant {i} prefers green tea", subject="Alice", predicate="prefers",
                         object="green tea", namespace=ns, source_message_ids=[msgs[0].id])
        owned[ns] = {msgs[0].id, mem.id, "chat"}
    yield m, owned
    m.close()


def test_no_read_returns_another_tenants_data(tenants):
    m, owned = tenants
    rng = random.Random(7)
    every = set().union(*owned.values()) - {"chat"}
    for _ in range(CALLS):
        ns = rng.choice(NAMESPACES)
        mine = owned[ns]
        call = rng.choice(["recall", "context", "list", "get", "history", "neighbourhood", "export", "stats"])
        if call == "recall":
            ids = {h.item.id for h in m.recall("Alice green tea", k=20, namespace=ns)}
        elif call == "context":
            ctx = m.context("What does Alice drink?", namespace=ns, session_id="chat")
            ids = {s.item.id for s in ctx.items}
        elif call == "list":
            ids = {r.id for r in m.list(rng.choice(["memory", "message", "session"]), namespace=ns, limit=100)}
        elif call == "get":
            other = rng.choice(sorted(every))
            try:
                ids = {m.get(other, namespace=ns).id}
            except NotFoundError:
                ids = set()
        elif call == "history":
            own = next(i for i in mine if i.startswith("mem_"))
            h = m.history(own, namespace=ns)
            ids = {h.memory.id, *(x.id for x in h.supersedes), *(x.id for x in h.superseded_by)}
        elif call == "neighbourhood":
            hood = m.neighbourhood("Alice", namespace=ns)
            ids = {r.id for r in hood.memories}
            assert all(e.namespace == ns for e in hood.entities)
        elif call == "export":
            buf = io.StringIO()
            m.export(buf, namespace=ns, vectors=False)
            rows = [json.loads(line) for line in buf.getvalue().splitlines()[1:]]
            ids = {r["node"]["id"] for r in rows if "node" in r and r["node"]["kind"] in ("memory", "message")}
        else:
            counts = m.stats(namespace=ns)
            assert counts.get("memory", 0) == 1 and counts.get("message", 0) == 1, counts
            ids = set()
        assert ids <= mine, (call, ns, ids - mine)
