"""Injection corpus: SQL, FTS5, Lucene and Cypher payloads through every string that reaches
a query (texts, speakers, sessions, categories, entity names, metadata, keyword queries, ids,
namespaces). Each is stored and read back as data, or refused as bad input; none executes."""

from __future__ import annotations

import pytest

from graphmem.errors import ValidationError

from ..conftest import make_memory

PAYLOADS = [
    "'; DROP TABLE nodes; --", "\" OR 1=1 --", "x') OR ('1'='1", "1; DELETE FROM edges", "%' OR '%'='",
    "fts MATCH '*'", "NEAR(a b, 1)", "\"unterminated", "a* OR b*", "col:term", "^start", "a AND NOT b", "{}()[]",
    "*:*", "text:* OR terms:*", "a~2 b^10", "/regex.*/", "\\", "\\\\u0000", "a && b || !c",
    "}) MATCH (n) DETACH DELETE n //", "' }) DETACH DELETE n WITH 1 AS x MATCH (m {id: '", "$namespace", "`label`",
    "CALL db.labels()", "RETURN 1 //", "n.id = 'x' OR true", "全部删除'; --", "名字\" OR \"1\"=\"1",
]


@pytest.fixture
def gmem(backend, tmp_path):
    m = make_memory(backend, tmp_path)
    m.remember("A bystander fact about green tea", namespace="bystander")
    yield m
    m.close()


def _counts(m) -> dict:
    return {k: v for k, v in m.stats(namespace="bystander").items() if k not in ("file_bytes",)}


def test_payloads_are_stored_and_searched_as_data(gmem):
    before = _counts(gmem)
    for i, p in enumerate(PAYLOADS):
        msg = gmem.add_messages(f"s{i}", [{"speaker": p, "content": f"turn says {p}", "metadata": {p: p}}])[0]
        mem = gmem.remember(f"memory says {p}", category=p[:40] or "x", subject=p, object="tea",
                            entities=[{"name": p}], metadata={p: p})
        assert gmem.get(msg.id).speaker == p.strip() or gmem.get(msg.id).speaker == p
        assert gmem.get(mem.id).metadata == {p: p} and gmem.get(msg.id).metadata == {p: p}
        for query in (p, f"memory says {p}"):
            hits = gmem.recall(query, k=5)
            assert all(h.item.namespace == "default" for h in hits)
        assert mem.id in [h.item.id for h in gmem.recall(f"memory says {p}", k=10, layers=["memory"])]
        assert gmem.list("memory", category=p[:40] or "x")
        assert gmem.neighbourhood(p).entity.name
    assert _counts(gmem) == before  # nothing reached another tenant, nothing was deleted


@pytest.mark.parametrize("payload", PAYLOADS[:12] + PAYLOADS[20:24])
def test_payloads_as_ids_and_namespaces_are_refused_or_data(gmem, payload):
    for call in (lambda: gmem.get(payload), lambda: gmem.recall("tea", namespace=payload),
                 lambda: gmem.remember("x", id=payload), lambda: gmem.forget(payload),
                 lambda: gmem.add_messages(payload, ["hello"])):
        try:
            call()
        except ValidationError:
            pass  # refused as bad input (ids and namespaces have a fixed alphabet)
        except LookupError:
            pass  # looked up as data and not found
    assert gmem.recall("green tea", k=1, namespace="bystander")[0].text == "A bystander fact about green tea"
