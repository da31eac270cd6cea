// purpose: delete edges of one type by source, target and key
// params:  $namespace (string), $rows (list<{source, target, key}>); {rel_type}: an EdgeType name
// mode:    write
UNWIND $rows AS row
MATCH (a:Record {namespace: $namespace, id: row.source})-[r:{rel_type} {key: row.key}]->(b:Record {namespace: $namespace, id: row.target})
DELETE r
