// purpose: one hop of RELATES_TO traversal, either direction, from a frontier of entities:
//          the entities not seen yet, at most $limit of them
// params:  $namespace (string), $ids (list<string>): the frontier, $seen (list<string>),
//          $limit (int)
// mode:    read
MATCH (a:Entity {namespace: $namespace})-[:RELATES_TO]-(b:Entity)
WHERE a.id IN $ids AND NOT b.id IN $seen
WITH DISTINCT b.id AS id
LIMIT $limit
RETURN collect(id) AS rows
