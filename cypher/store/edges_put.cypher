// purpose: insert or replace edges of one type between existing nodes of a namespace
//          (one edge per source, type, target and key)
// params:  $namespace (string), $rows (list<{source, target, key, props: string (JSON),
//          flat: map, created_at: [epoch seconds, nanoseconds]}>); {rel_type}: an EdgeType name
// mode:    write
UNWIND $rows AS row
MATCH (a:Record {namespace: $namespace, id: row.source})
MATCH (b:Record {namespace: $namespace, id: row.target})
MERGE (a)-[r:{rel_type} {key: row.key}]->(b)
SET r += row.flat, r.props = row.props,
    r.created_at = datetime({epochSeconds: row.created_at[0], nanosecond: row.created_at[1]})
RETURN count(r) AS written
