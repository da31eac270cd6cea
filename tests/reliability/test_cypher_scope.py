"""``Memory.cypher`` sees the caller's namespace alone: escapes tried as an attacker would
(OPTIONAL MATCH, CALL subqueries, procedures, UNION, plugins' string-built queries, comments,
parameters, unicode), refused before they are sent; then on a real Neo4j, with another tenant's
secret in the database, no accepted query returns it and every bundled exploration query runs."""

from __future__ import annotations

import pytest

from graphmem.errors import ValidationError
from graphmem.store.cypher import explore_files
from graphmem.store.cypher_scope import check_scoped

from ..conftest import make_memory

SECRET = "Secret of the other tenant: 7431"

ESCAPES = [
    "MATCH (m:Memory) RETURN m.namespace, m.text",
    "MATCH (n) RETURN n",
    "MATCH (n) WHERE n.namespace = $namespace OR true RETURN n.text",
    "MATCH (m:Memory WHERE m.namespace = $namespace OR true) RETURN m.text",
    "MATCH (m:Memory {namespace: $namespace}) OPTIONAL MATCH (o:Memory) RETURN o.text",
    "MATCH (m:Memory {namespace: $namespace}) RETURN m.text UNION MATCH (m:Memory) RETURN m.text",
    "MATCH (m:Memory {namespace: $namespace}) RETURN m.text UNION ALL MATCH (m) RETURN m.text",
    "CALL { MATCH (m:Memory) RETURN m } RETURN m.text",
    "MATCH (a:Memory {namespace: $namespace}) CALL { MATCH (m:Memory) RETURN m.text AS t } RETURN t",
    "CALL db.index.fulltext.queryNodes('graphmem_text', '7431') YIELD node RETURN node.text",
    "call db.labels() yield label return label",
    "CALL db.schema.visualization",
    "MATCH (m:Memory {namespace: $namespace}) RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) ' + 'RETURN n.text')",
    "RETURN apoc.cypher.runFirstColumnSingle('MATCH (n:Memory) RETURN collect(n.text)', {})",
    "MATCH (m:Memory {namespace: 'other'}) RETURN m.text",
    "MATCH (m:Memory {namespace: $other}) RETURN m.text",
    "MATCH (m:Memory {namespace: $namespace, namespace: 'other'}) RETURN m.text",
    "MATCH (m:Memory {id: $namespace}) RETURN m.text",
    "MATCH (a:Memory {namespace: $namespace}), (b:Memory) RETURN b.text",
    "MATCH (a:Memory {namespace: $namespace}) WITH 1 AS x MATCH (a)-->(b) RETURN b.text",
    "MATCH (a:Memory {namespace: $namespace}) RETURN [(x:Memory)-->(y) | y.text]",
    "MATCH (a:Memory {namespace: $namespace}) RETURN COUNT { (x:Memory {text: 'x'}) }",
    "MATCH (a:Memory {namespace: $namespace}) WHERE EXISTS { MATCH (o:Memory) WHERE o.text CONTAINS '7431' } RETURN 1",
    "MATCH (a:Memory {namespace: $namespace}) RETURN COLLECT { MATCH (o) RETURN o.text }",
    "MATCH p = shortestPath((a:Memory)-[*]-(b:Memory)) RETURN nodes(p)",
    "MATCH (m:Memory {namespace: $namespace}) /* (x) */ MATCH (o:Memory) RETURN o.text // {namespace: $namespace}",
    "MATCH (m:Memory {namespace: $namespace}) WITH m MATCH (o:`Memory`) RETURN o.text",
    "MATCH (m:Memory {namespace: $namespace}) RETURN 'it''s' AS s, [(o) | o.text]",
    "MATCH (m:Memory {`namespace`: $namespace}), (o) RETURN o.text",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "USE system SHOW USERS",
    "SHOW TRANSACTIONS YIELD currentQuery, parameters RETURN *",
    "MATCH (m:Memory {namespace: $namespace}) RETURN m UNION MATCH ()-[r]->() RETURN r AS m",
    "MATCH ({namespace: $namespace})-->(x), (y) RETURN y",
    "MATCH (m:Memory {namespace: $namespace}) RETURN m.text AS t NEXT MATCH (o:Memory) RETURN o.text AS t",
    "MATCH (m:Memory {namespace: $namespace}) RETURN 'x' AS t; MATCH (o) RETURN o.text AS t",
]

ACCEPTED = [
    "MATCH (m:Memory {namespace: $namespace}) RETURN m.text AS text",
    "MATCH (m:Memory {namespace: $namespace})-[:MENTIONS]->(e:Entity) RETURN m.text, e.name",
    "MATCH p = (m:Memory {namespace: $namespace})-[*1..3]-(x) RETURN [n IN nodes(p) | n.id] AS ids",
    "MATCH (m:Memory {namespace: $namespace}) OPTIONAL MATCH (m)-[:DERIVED_FROM]->(t:Message {namespace: $namespace}) "
    "RETURN m.text, t.content",
    "MATCH (m:Memory {namespace: $namespace}) WHERE (m.importance + 1) * 2 > 0 RETURN count(*) AS n",
    "MATCH (m:Memory {namespace: $namespace}) RETURN m.text UNION MATCH (e:Episode {namespace: $namespace}) "
    "RETURN e.summary AS `m.text`",
    "CALL { MATCH (m:Memory {namespace: $namespace}) RETURN m } RETURN m.text",
    "MATCH (m:Memory {namespace: $namespace}) RETURN COUNT { (m)-[:MENTIONS]->(:Entity {namespace: $namespace}) } AS entities",
    "MATCH (m:Memory {namespace: $namespace}) WHERE m.text CONTAINS 'MATCH (n) CALL db.labels()' RETURN m",
    "MATCH (m:Memory {namespace: $namespace}) RETURN '\\' (o) ' AS s",  # one string: \' does not end it
]


@pytest.mark.parametrize("query", ESCAPES)
def test_an_escape_is_refused_before_it_is_sent(query):
    with pytest.raises(ValidationError):
        check_scoped(query)


@pytest.mark.parametrize("query", ACCEPTED + [f.text for f in explore_files().values()])
def test_a_scoped_query_is_accepted(query):
    check_scoped(query)


def test_the_refusal_says_what_to_add():
    with pytest.raises(ValidationError, match=r"\{namespace: \$namespace\}.*'\( b : Memory \)'"):
        check_scoped("MATCH (a:Memory {namespace: $namespace}), (b:Memory) RETURN b")


def test_every_function_allowed_is_one_of_neo4js_own(neo4j_server):
    from graphmem.store.cypher_scope import FUNCTIONS, NEWER

    from ..conftest import NEO4J_TEST_PASSWORD, NEO4J_TEST_URI
    from neo4j import GraphDatabase

    with GraphDatabase.driver(NEO4J_TEST_URI, auth=("neo4j", NEO4J_TEST_PASSWORD)) as driver:
        records, _, _ = driver.execute_query("SHOW FUNCTIONS YIELD name, isBuiltIn RETURN name, isBuiltIn")
    built_in = {r["name"].lower() for r in records if r["isBuiltIn"]}
    assert FUNCTIONS - NEWER - {"shortestpath", "allshortestpaths"} <= built_in, FUNCTIONS - built_in


def test_cypher_on_neo4j_never_reads_another_namespace(neo4j_server, tmp_path):
    with make_memory("neo4j", tmp_path) as m:
        m.remember(SECRET, namespace="other")
        m.remember("My own note", namespace="mine")
        m.add_messages("s1", [{"role": "user", "content": "Ann from Initech called", "speaker": "Bob"}], namespace="other")
        leaks = []
        for query in ESCAPES + ACCEPTED:
            try:
                rows = m.cypher(query, namespace="mine")
            except ValidationError:
                continue
            if "7431" in repr(rows) or "Initech" in repr(rows):
                leaks.append(query)
        assert leaks == []
        assert m.cypher(ACCEPTED[0], namespace="mine") == [{"text": "My own note"}]
        with pytest.raises(ValidationError, match="cannot name another"):
            m.cypher(ACCEPTED[0], {"namespace": "other"}, namespace="mine")
        assert m.cypher(ACCEPTED[0], {"namespace": "mine"}, namespace="mine") == [{"text": "My own note"}]
        for name, f in explore_files().items():  # every bundled query still runs, on its own data only
            params = {"name": "Bob", "memory_id": "x", "session_id": "s1", "trace_id": "x", "warn_days": None}
            assert "7431" not in repr(m.cypher(f.text, params, namespace="mine")), name
