// purpose: insert or replace edges of one type between existing nodes of a namespace
//          (one edge per source, type, target and key)
// params:  $namespace (string), $rows (list<{source, target, key, props: string (JSON),
//          flat: map, created_at: datetime}>); {rel_type}: an EdgeType name
// mode:    write
UNWIND $rows AS row
MATCH (a:Record {namespace: $namespace, id: row.source})
MATCH (b:Record {namespace: $namespace, id: row.target})
MERGE (a)-[r:{rel_type} {key: row.key}]->(b)
SET r += row.flat, r.props = row.props, r.created_at = row.created_at
RETURN count(r) AS written
