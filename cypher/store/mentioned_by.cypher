// purpose: (node, entity) pairs: nodes of one kind and statuses with a MENTIONS edge to one of
//          the entities (the hot path of graph recall)
// params:  $namespace (string), $ids (list<string>): entity ids, $kind (string),
//          $statuses (list<string>), $limit (int)
// mode:    read
MATCH (e:Entity {namespace: $namespace})<-[:MENTIONS]-(n:Record)
WHERE e.id IN $ids AND n.kind = $kind AND coalesce(n.status, 'active') IN $statuses
WITH n, e
LIMIT $limit
RETURN collect([n.id, e.id]) AS rows
